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
"""The API behind keystonemiddleware with a real Keystone: project isolation,
reader/member/admin personas, 401 without a token, and the OSC plugin through
the catalog.
"""
import json
import os
import subprocess

import pytest

from tests.functional.api.conftest import Client
from tests.functional.api import openapi_check
from tests.functional import keystone as ks


@pytest.fixture(scope='module')
def users(keystone):
    """alice (member of A), rita (reader of A), bob (member of B), admin."""
    projects = {}
    for user, project, role in (('alice', 'proj-a', 'member'),
                                ('rita', 'proj-a', 'reader'),
                                ('bob', 'proj-b', 'member')):
        projects[user] = keystone.project_user(project, user, role)
    tokens = {user: keystone.token(user, 'proj-a' if user != 'bob'
                                   else 'proj-b') for user in projects}
    tokens['admin'] = keystone.token('admin', 'admin', ks.ADMIN_PASSWORD)
    return tokens, projects


def test_projects_roles_and_tokens(keystone_api, users):
    tokens, projects = users
    alice, rita, bob, admin = (Client(keystone_api, tokens[u])
                               for u in ('alice', 'rita', 'bob', 'admin'))
    anonymous = Client(keystone_api)

    resp = anonymous('GET', '/v1/clusters')
    assert resp.status_code == 401
    assert resp.json()['error']['code'] == 401
    assert Client(keystone_api, 'not-a-token')(
        'GET', '/v1/clusters').status_code == 401
    assert anonymous('GET', '/').status_code == 300     # versions are public

    resp = alice('POST', '/v1/clusters', json={'name': 'a1',
                                               'seeds': ['127.0.0.9']})
    assert resp.status_code == 201, resp.text
    openapi_check.validate_response('createCluster', resp)
    cluster = resp.json()['cluster']
    assert cluster['project_id'] == projects['alice']
    cid = cluster['id']
    assert [c['id'] for c in alice('GET', '/v1/clusters').json()[
        'clusters']] == [cid]

    # another project neither sees nor touches it
    assert bob('GET', '/v1/clusters').json()['clusters'] == []
    for method, path, body in (('GET', '', None), ('DELETE', '', None),
                               ('PATCH', '', {'name': 'x'}),
                               ('POST', '/scale', {'count': 2}),
                               ('PUT', '/policy', {}),
                               ('GET', '/actions', None)):
        resp = bob(method, '/v1/clusters/%s%s' % (cid, path), json=body)
        assert resp.status_code == 404, (method, path, resp.text)
    bob_cluster = bob('POST', '/v1/clusters', json={
        'name': 'b1', 'seeds': ['127.0.0.10']}).json()['cluster']

    # a reader of the project reads but cannot write
    assert rita('GET', '/v1/clusters/' + cid).status_code == 200
    resp = rita('POST', '/v1/clusters', json={'name': 'r',
                                              'seeds': ['127.0.0.9']})
    assert resp.status_code == 403
    openapi_check.validate_response('createCluster', resp)
    assert rita('DELETE', '/v1/clusters/' + cid).status_code == 403
    assert rita('PUT', '/v1/clusters/%s/policy' % cid,
                json={}).status_code == 403

    # cross-project listing and host agents are admin only
    assert alice('GET', '/v1/clusters?all_projects=true').status_code == 403
    assert alice('GET', '/v1/hosts').status_code == 403
    listed = admin('GET', '/v1/clusters?all_projects=true').json()['clusters']
    assert {cid, bob_cluster['id']} <= {c['id'] for c in listed}
    assert admin('GET', '/v1/hosts').status_code == 200
    assert admin('GET', '/v1/clusters/' + cid).status_code == 200

    assert alice('DELETE', '/v1/clusters/' + cid).status_code == 204


def _osc(*args, env=None, raw=False):
    """Run ``openstack``; its JSON output (or text with ``raw``)."""
    proc = subprocess.run(['openstack', *args], capture_output=True,
                          text=True, timeout=120,
                          env=dict(os.environ, **(env or {})))
    assert proc.returncode == 0, proc.stderr
    if raw:
        return proc.stdout
    return json.loads(proc.stdout) if proc.stdout.strip() else None


def test_osc_through_catalog(keystone_api, keystone, users):
    keystone.register_endpoint(keystone_api)
    env = {'OS_AUTH_URL': keystone.url, 'OS_USERNAME': 'alice',
           'OS_PASSWORD': ks.PASSWORD, 'OS_PROJECT_NAME': 'proj-a',
           'OS_USER_DOMAIN_ID': 'default', 'OS_PROJECT_DOMAIN_ID': 'default',
           'OS_IDENTITY_API_VERSION': '3'}
    for name in [k for k in os.environ if k.startswith('OS_')]:
        env.setdefault(name, '')
    created = _osc('elastman', 'cluster', 'create', 'osc1', '--seed',
                   '127.0.0.9:9042', '--flavor', 'm1.small', '--wait',
                   '-f', 'json', env=env)
    assert created['state'] == 'ACTIVE'
    listed = _osc('elastman', 'cluster', 'list', '-f', 'json', env=env)
    assert [c['name'] for c in listed] == ['osc1']
    action = _osc('elastman', 'cluster', 'scale', 'osc1', '--count', '3',
                  '-f', 'json', env=env)
    assert action['state'] == 'PENDING'
    _osc('elastman', 'cluster', 'delete', 'osc1', '--wait', env=env)
    assert _osc('elastman', 'cluster', 'list', '-f', 'json', env=env) == []
