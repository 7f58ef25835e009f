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
"""The API's version documents and JSON errors."""
import webob

from elastman.api import app


def _get(path, method='GET'):
    req = webob.Request.blank(path, method=method)
    return req.get_response(app.Application(conf=None))


def test_root_lists_versions():
    resp = _get('/')
    assert resp.status_int == 300
    assert resp.json['versions'][0]['id'] == 'v1.0'
    assert resp.json['versions'][0]['links'][0]['href'].endswith('/v1/')


def test_v1_document():
    resp = _get('/v1/')
    assert resp.status_int == 200
    assert resp.json['version']['status'] == 'CURRENT'


def test_errors_are_json():
    resp = _get('/nowhere')
    assert resp.status_int == 404
    assert resp.json['error']['code'] == 404
    assert 'nowhere' in resp.json['error']['message']
    assert _get('/', method='DELETE').json['error']['code'] == 405
