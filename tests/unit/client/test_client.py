#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.
"""The API client: paging read lazily, error answers, finding a cluster by
name. The HTTP boundary is a requests transport adapter answering from a
table; tests/functional/api runs the client against the real API.
"""
import json
import urllib.parse

from keystoneauth1 import session as ks_session
import pytest
import requests
import requests.adapters

from elastman.client import client as em_client

BASE = 'http://api.test:9870'


class Table(requests.adapters.BaseAdapter):
    """Answers (method, path, sorted query) from a dict; logs requests."""

    def __init__(self, answers):
        super().__init__()
        self.answers = answers
        self.log = []

    def send(self, request, **kwargs):
        url = urllib.parse.urlsplit(request.url)
        query = tuple(sorted(urllib.parse.parse_qsl(url.query)))
        self.log.append((request.method, url.path, query))
        status, body = self.answers[(request.method, url.path, query)]
        resp = requests.Response()
        resp.status_code = status
        resp._content = (body if isinstance(body, bytes)
                         else json.dumps(body).encode())
        resp.headers['Content-Type'] = 'application/json'
        resp.url, resp.request = request.url, request
        return resp

    def close(self):
        pass


def _client(answers):
    http = requests.Session()
    table = Table(answers)
    http.mount(BASE, table)
    return em_client.Client(session=ks_session.Session(session=http),
                            endpoint=BASE), table


def test_decisions_are_read_a_page_at_a_time():
    path = '/v1/clusters/c1/decisions'
    client, table = _client({
        ('GET', path, ()): (200, {'decisions': [{'ts': '1'}, {'ts': '2'}],
                                  'next_marker': 'm1'}),
        ('GET', path, (('marker', 'm1'),)): (
            200, {'decisions': [{'ts': '3'}], 'next_marker': None}),
    })
    decisions = client.iter_decisions('c1')
    assert next(decisions) == {'ts': '1'}
    assert len(table.log) == 1
    assert [d['ts'] for d in decisions] == ['2', '3']
    assert len(table.log) == 2
    # with a limit, one page only
    table.log.clear()
    table.answers[('GET', path, (('limit', '2'),))] = table.answers[
        ('GET', path, ())]
    assert len(client.list_decisions('c1', limit=2)) == 2
    assert len(table.log) == 1


def test_error_answers_become_client_errors():
    client, _ = _client({
        ('GET', '/v1/clusters/nope', ()): (404, {'error': {
            'code': 404, 'title': 'Not Found',
            'message': 'cluster nope not found'}}),
        ('GET', '/v1/clusters/bad', ()): (502, b'<html>bad gateway</html>'),
    })
    with pytest.raises(em_client.ClientError) as exc:
        client.get_cluster('nope')
    assert (exc.value.code, exc.value.title) == (404, 'Not Found')
    assert str(exc.value) == '404 Not Found: cluster nope not found'
    with pytest.raises(em_client.ClientError) as exc:
        client.get_cluster('bad')
    assert exc.value.code == 502 and 'bad gateway' in exc.value.message


def test_find_cluster_by_unique_name():
    missing = (404, {'error': {'code': 404, 'title': 'Not Found',
                               'message': 'no'}})
    listing = (200, {'clusters': [{'id': 'c1', 'name': 'orders'},
                                  {'id': 'c2', 'name': 'twin'},
                                  {'id': 'c3', 'name': 'twin'}],
                     'next_marker': None})
    client, _ = _client({
        ('GET', '/v1/clusters/orders', ()): missing,
        ('GET', '/v1/clusters/twin', ()): missing,
        ('GET', '/v1/clusters', ()): listing,
        ('GET', '/v1/clusters/c1', ()): (200, {'cluster': {'id': 'c1'}}),
    })
    assert client.find_cluster('orders') == {'id': 'c1'}
    with pytest.raises(em_client.ClientError) as exc:
        client.find_cluster('twin')
    assert exc.value.code == 409
