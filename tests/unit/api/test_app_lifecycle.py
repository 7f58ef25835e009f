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
"""The clusters API on an in-memory store, through the lifecycle service:
create, register, scale and delete answer as the API reference says.
"""
import json

import webob

from elastman.api import app
from elastman.api import auth
from tests.unit import memstore


def _call(application, method, path, body=None):
    req = webob.Request.blank(path, method=method)
    if body is not None:
        req.body = json.dumps(body).encode()
        req.content_type = 'application/json'
    return req.get_response(application)


def test_create_register_scale_delete(conf):
    store = memstore.MemStore()
    api = auth.NoAuthMiddleware(app.Application(conf, store))
    resp = _call(api, 'POST', '/v1/clusters', {
        'name': 'new', 'flavor': 'm1', 'image': 'img', 'size': 2})
    assert resp.status_int == 201, resp.text
    managed = resp.json['cluster']
    assert managed['state'] == 'CREATING'
    resp = _call(api, 'POST', '/v1/clusters', {
        'name': 'ring', 'seeds': ['10.0.0.1:9043']})
    assert resp.status_int == 201, resp.text
    ring = resp.json['cluster']
    assert ring['state'] == 'ACTIVE' and ring['mode'] == 'registered'
    kinds = sorted(a['kind'] for a in store.actions.rows.values())
    assert kinds == ['create', 'register']
    # scaling a cluster that is still CREATING is refused
    resp = _call(api, 'POST', '/v1/clusters/%s/scale' % managed['id'],
                 {'count': 3})
    assert resp.status_int == 409, resp.text
    # a managed cluster whose create is under way: a delete action (202)
    resp = _call(api, 'DELETE', '/v1/clusters/%s' % managed['id'])
    assert resp.status_int == 202, resp.text
    # a registered one goes at once (204)
    resp = _call(api, 'DELETE', '/v1/clusters/%s' % ring['id'])
    assert resp.status_int == 204, resp.text
    assert [c['name'] for c in store.clusters.all()] == ['new']
