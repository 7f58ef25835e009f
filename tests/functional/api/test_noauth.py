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
"""The API on the real store in noauth mode: every resource, validation and
paging; the OpenAPI document's schemas check every response.
"""
import uuid

import pytest

from elastman.store import credentials as credentials_store
from tests.functional.api import openapi_check
from tests.functional import tls


def _ok(resp, status, op=None):
    assert resp.status_code == status, resp.text
    if op:
        openapi_check.validate_response(op, resp)
    return resp.json() if resp.content else None


def test_register_show_list_delete(api, store):
    body = _ok(api('POST', '/v1/clusters', json={
        'name': 'reg', 'seeds': ['127.0.0.9', '127.0.0.10:9043'],
        'flavor': 'm1.small'}), 201, 'createCluster')
    cluster = body['cluster']
    assert cluster['state'] == 'ACTIVE' and cluster['mode'] == 'registered'
    assert sorted(cluster['endpoints']) == ['127.0.0.10:9043',
                                            '127.0.0.9:9042']
    cid = cluster['id']
    shown = _ok(api('GET', '/v1/clusters/' + cid), 200, 'showCluster')
    assert shown['cluster']['size'] == 2
    assert {n['id'] for n in shown['cluster']['nodes']} == {'127.0.0.9',
                                                            '127.0.0.10'}
    listed = _ok(api('GET', '/v1/clusters'), 200, 'listClusters')
    assert [c['id'] for c in listed['clusters']] == [cid]
    _ok(api('GET', '/v1/clusters/%s/nodes' % cid), 200, 'listNodes')
    _ok(api('GET', '/v1/clusters/%s/nodes/127.0.0.9' % cid), 200, 'showNode')
    _ok(api('PATCH', '/v1/clusters/' + cid, json={'name': 'renamed'}), 200,
        'updateCluster')
    _ok(api('DELETE', '/v1/clusters/' + cid), 204)
    _ok(api('GET', '/v1/clusters/' + cid), 404, 'showCluster')
    assert store.nodes.list(uuid.UUID(cid)) == []


def test_create_managed_records_pending_action(api):
    cluster = _ok(api('POST', '/v1/clusters', json={
        'name': 'new', 'flavor': 'm1.large', 'image': 'cassandra-5',
        'size': 3}), 201)['cluster']
    assert cluster['state'] == 'CREATING' and cluster['size'] == 0
    actions = _ok(api('GET', '/v1/clusters/%s/actions' % cluster['id']), 200,
                  'listActions')['actions']
    assert [(a['kind'], a['state'], a['params']['count'])
            for a in actions] == [('create', 'PENDING', 3)]


def test_scale_policy_and_filters(api, store):
    cid = _ok(api('POST', '/v1/clusters', json={
        'name': 'c', 'seeds': ['127.0.0.9']}), 201)['cluster']['id']
    _ok(api('GET', '/v1/clusters/%s/policy' % cid), 404, 'showPolicy')
    policy = _ok(api('PUT', '/v1/clusters/%s/policy' % cid, json={
        'slo_threshold_ms': 20, 'min_size': 1, 'max_size': 5,
        'dry_run': True, 'model': {'confidence': 0.8}}), 200,
        'setPolicy')['policy']
    assert policy['alpha'] == 1.0 and policy['beta'] == 0.5
    assert policy['model'] == {'confidence': 0.8}
    resp = api('PUT', '/v1/clusters/%s/policy' % cid,
               json={'min_size': 4, 'max_size': 2})
    assert resp.status_code == 400 and 'min_size' in resp.json()['error'][
        'message']
    assert api('POST', '/v1/clusters/%s/scale' % cid,
               json={'count': 9}).status_code == 400
    action = _ok(api('POST', '/v1/clusters/%s/scale' % cid,
                     json={'count': 4}), 202, 'scaleCluster')['action']
    assert action['state'] == 'PENDING' and action['kind'] == 'scale'
    shown = _ok(api('GET', '/v1/clusters/%s/actions/%s' % (cid, action['id'])),
                200, 'showAction')['action']
    assert shown['params']['count'] == 4
    # pending: the scale and the registration's own action (no actuator
    # runs in this test to carry either out)
    for query, n in (('kind=scale', 1), ('kind=create', 0),
                     ('state=pending', 2), ('state=SUCCEEDED', 0)):
        got = _ok(api('GET', '/v1/clusters/%s/actions?%s' % (cid, query)),
                  200)['actions']
        assert len(got) == n, query
    _ok(api('DELETE', '/v1/clusters/%s/policy' % cid), 204)
    _ok(api('DELETE', '/v1/clusters/%s/policy' % cid), 404)


def test_paging(api):
    ids = {_ok(api('POST', '/v1/clusters', json={
        'name': 'p%d' % i, 'seeds': ['127.0.0.9']}), 201)['cluster']['id']
        for i in range(5)}
    seen, marker = [], None
    while True:
        query = '?limit=2' + ('&marker=' + marker if marker else '')
        page = _ok(api('GET', '/v1/clusters' + query), 200, 'listClusters')
        assert len(page['clusters']) <= 2
        seen += [c['id'] for c in page['clusters']]
        marker = page['next_marker']
        if not marker:
            break
    assert set(seen) == ids and len(seen) == 5
    assert api('GET', '/v1/clusters?marker=%%%%').status_code == 400
    assert api('GET', '/v1/clusters?limit=0').status_code == 400


def test_models_forecasts_decisions(api, store):
    import datetime
    from elastman.capacity import serialization
    cid = _ok(api('POST', '/v1/clusters', json={
        'name': 'm', 'seeds': ['127.0.0.9'], 'flavor': 'm1.small'}),
        201)['cluster']['id']
    uid = uuid.UUID(cid)
    doc = serialization.wrap(serialization.MODEL_FORMAT,
                             {'model': {'kind': 'linear'}, 'meta': {}})
    store.models.save('flavor', '%s/m1.small' % cid,
                      serialization.dumps(doc), {'confidence': 0.5},
                      {'cells': 12, 'capacity': 1500.0})
    model = _ok(api('GET', '/v1/clusters/%s/models/flavor/m1.small' % cid),
                200, 'showModel')['model']
    assert model['version'] == 1 and model['document'] == doc
    assert model['summary']['cells'] == 12
    listed = _ok(api('GET', '/v1/clusters/%s/models' % cid), 200,
                 'listModels')['models']
    assert [(m['scope'], m['key']) for m in listed] == [('flavor',
                                                         'm1.small')]
    _ok(api('GET', '/v1/clusters/%s/models/vm/127.0.0.9' % cid), 404)
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    store.forecasts.add(uid, 'reads_per_s', now, 60, [10.0, 12.5],
                        'arima_100', {'arima_100': 1.0, 'regression_tree': 0.5})
    forecasts = _ok(api('GET', '/v1/clusters/%s/forecasts/reads_per_s' % cid),
                    200, 'showForecasts')['forecasts']
    assert forecasts[0]['weights']['regression_tree'] == 0.5
    assert forecasts[0]['predicted'] == [10.0, 12.5]
    store.actions.record_decision(uid, now, 'none', {'reason': 'cooling down'})
    decisions = _ok(api('GET', '/v1/clusters/%s/decisions' % cid), 200,
                    'listDecisions')['decisions']
    assert decisions[0]['record']['reason'] == 'cooling down'


def test_hosts(api, store):
    _ok(api('GET', '/v1/hosts'), 200, 'listHosts')
    store.hosts.report('compute-1', {'vm-a': {'interference_index': 0.3}})
    hosts = _ok(api('GET', '/v1/hosts'), 200, 'listHosts')['hosts']
    assert [h['host'] for h in hosts] == ['compute-1']
    _ok(api('GET', '/v1/hosts/compute-1'), 200, 'showHost')
    reports = _ok(api('GET', '/v1/hosts/compute-1/reports'), 200,
                  'listHostReports')['reports']
    assert reports[0]['vms']['vm-a']['interference_index'] == 0.3
    _ok(api('GET', '/v1/hosts/nowhere'), 404, 'showHost')


def test_errors_are_json(api):
    for method, path, body, code in (
            ('POST', '/v1/clusters', {'name': 'x'}, 400),
            ('POST', '/v1/clusters', {'name': 'x', 'seeds': ['a'],
                                      'size': 3}, 400),
            ('POST', '/v1/clusters', {'name': 'x', 'seeds': ['a'],
                                      'bogus': 1}, 400),
            ('GET', '/v1/clusters/not-a-uuid', None, 404),
            ('GET', '/v1/clusters/%s' % uuid.uuid4(), None, 404),
            ('PUT', '/v1/clusters', None, 405),
            ('GET', '/v1/nothing', None, 404)):
        resp = api(method, path, json=body)
        assert resp.status_code == code, (method, path, resp.text)
        err = resp.json()['error']
        assert err['code'] == code and err['message'] and err['title']
    resp = api('POST', '/v1/clusters', data=b'{not json',
               headers={'Content-Type': 'application/json'})
    assert resp.status_code == 400


@pytest.fixture
def keys(conf):
    conf.set_override('encryption_keys', [credentials_store.generate_key()],
                      'credentials')
    yield
    conf.clear_override('encryption_keys', 'credentials')


def test_credentials_are_kept_encrypted_and_never_shown(keys, api, store,
                                                        tmp_path, caplog):
    import logging
    caplog.set_level(logging.DEBUG)
    password, jmx_password = 'Pw-%s' % uuid.uuid4().hex, 'Jx-s3cret'
    ca = tls.make(str(tmp_path), '127.0.0.0/30').ca_pem
    body = _ok(api('POST', '/v1/clusters', json={
        'name': 'sec', 'seeds': ['127.0.0.9'],
        'credentials': {'username': 'app', 'password': password,
                        'jmx_username': 'ops', 'jmx_password': jmx_password},
        'tls': {'cql': True, 'ca_certificate': ca}}), 201, 'createCluster')
    cluster = body['cluster']
    assert cluster['security'] == {'authentication': True, 'cql_tls': True,
                                   'jmx_tls': False}
    cid = uuid.UUID(cluster['id'])
    shown = api('GET', '/v1/clusters/%s' % cid)
    listed = api('GET', '/v1/clusters')
    for resp in (shown, listed):
        assert resp.status_code == 200
        assert password not in resp.text and jmx_password not in resp.text
        assert 'BEGIN CERTIFICATE' not in resp.text
    openapi_check.validate_response('showCluster', shown)
    # at rest: Fernet ciphertext only; decrypted for the workers
    raw = store.session.execute(
        'SELECT secret FROM %s.cluster_credentials WHERE cluster_id = %%s'
        % store.clusters._keyspace, (cid,)).one()['secret']
    assert password.encode() not in raw and b'app' not in raw
    got = store.credentials.get(cid)
    assert got['credentials']['password'] == password
    assert got['tls'] == {'cql': True, 'jmx': False, 'verify_hostname': True,
                          'ca_certificate': ca}
    # replaced (a registered cluster may change everything), then removed
    _ok(api('PUT', '/v1/clusters/%s/credentials' % cid, json={
        'credentials': {'username': 'app', 'password': 'second'}}), 204,
        'setClusterCredentials')
    assert store.credentials.get(cid) == {'credentials': {
        'username': 'app', 'password': 'second'}}
    assert _ok(api('GET', '/v1/clusters/%s' % cid), 200)['cluster'][
        'security'] == {'authentication': True, 'cql_tls': False,
                        'jmx_tls': False}
    _ok(api('DELETE', '/v1/clusters/%s/credentials' % cid), 204,
        'deleteClusterCredentials')
    assert store.credentials.get(cid) is None
    # a managed cluster's servers were started with its settings
    managed = _ok(api('POST', '/v1/clusters', json={
        'name': 'msec', 'flavor': 'm1', 'image': 'i', 'size': 1,
        'credentials': {'username': 'app', 'password': password}}),
        201)['cluster']
    resp = api('PUT', '/v1/clusters/%s/credentials' % managed['id'],
               json={'tls': {'cql': True}})
    assert resp.status_code == 409, resp.text
    openapi_check.validate_response('setClusterCredentials', resp)
    assert 'authentication on, CQL TLS off' in resp.json()['error']['message']
    _ok(api('PUT', '/v1/clusters/%s/credentials' % managed['id'], json={
        'credentials': {'username': 'app', 'password': 'rotated'}}), 204)
    assert api('DELETE', '/v1/clusters/%s/credentials'
               % managed['id']).status_code == 409
    # bad input: clear errors, nothing stored
    for body, words in (
            ({'tls': {'cql': True, 'ca_certificate': 'junk'}},
             'tls.ca_certificate is not a PEM certificate'),
            ({'credentials': {'username': 'a', 'password': 'has space'}},
             'may not contain white space'),
            ({'credentials': {'username': 'a'}}, "'password' is a required"),
            ({'credentials': {'username': 'a', 'password': 'b',
                              'jmx_username': 'c'}}, 'jmx_password')):
        resp = api('POST', '/v1/clusters', json=dict(
            body, name='bad', seeds=['127.0.0.9']))
        assert resp.status_code == 400, resp.text
        assert words in resp.json()['error']['message'], resp.text
    assert [c['name'] for c in _ok(api('GET', '/v1/clusters'), 200)[
        'clusters'] if c['name'] == 'bad'] == []
    # deleting the cluster deletes its credentials
    _ok(api('DELETE', '/v1/clusters/%s' % cid), 204)
    store.credentials.set(cid, {'credentials': {'username': 'x',
                                                'password': 'y'}})
    store.clusters.delete(cid)
    assert store.credentials.get(cid) is None
    for secret in (password, jmx_password, 'rotated', 'second'):
        assert secret not in caplog.text


def test_credentials_need_keys_in_the_configuration(api):
    resp = api('POST', '/v1/clusters', json={
        'name': 'nokeys', 'seeds': ['127.0.0.9'],
        'credentials': {'username': 'a', 'password': 'b'}})
    assert resp.status_code == 503, resp.text
    openapi_check.validate_response('createCluster', resp)
    assert '[credentials] encryption_keys' in resp.json()['error']['message']
    names = [c['name'] for c in _ok(api('GET', '/v1/clusters'), 200)[
        'clusters']]
    assert 'nokeys' not in names
