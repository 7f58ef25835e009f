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
"""The application without a store: routing, JSON errors, validation and
authorization that happen before any store access.
"""
import json

from oslo_config import cfg
import pytest
import webob

from elastman.api import app
from elastman.api import auth
from elastman.api import errors
from elastman.api import schemas
import elastman.conf


@pytest.fixture(scope='module')
def conf():
    conf = cfg.ConfigOpts()
    elastman.conf.api.register_opts(conf)
    conf([], default_config_files=[])
    return conf


def _call(application, method, path, body=None, headers=None):
    req = webob.Request.blank(path, method=method, headers=headers or {})
    if body is not None:
        req.body = json.dumps(body).encode()
        req.content_type = 'application/json'
    return req.get_response(application)


def test_405_lists_allowed_methods(conf):
    resp = _call(app.Application(conf), 'PUT', '/v1/clusters')
    assert resp.status_int == 405
    assert resp.headers['Allow'] == 'GET, POST'
    assert resp.json['error']['code'] == 405


def test_anonymous_is_forbidden_without_auth_pipeline(conf):
    resp = _call(app.Application(conf), 'GET', '/v1/hosts',
                 headers={'X-Roles': 'admin'})
    assert resp.status_int == 403


def test_noauth_validates_before_store(conf):
    application = auth.NoAuthMiddleware(app.Application(conf))
    resp = _call(application, 'POST', '/v1/clusters', {'name': 'x'})
    assert resp.status_int == 400
    assert 'body' in resp.json['error']['message']
    resp = _call(application, 'GET', '/v1/clusters?limit=abc')
    assert resp.status_int == 400


@pytest.mark.parametrize('body,ok', [
    ({'name': 'a', 'seeds': ['10.0.0.1']}, True),
    ({'name': 'a', 'seeds': ['10.0.0.1'], 'flavor': 'm1'}, True),
    ({'name': 'a', 'flavor': 'm1', 'image': 'i', 'size': 3}, True),
    ({'name': 'a', 'flavor': 'm1', 'image': 'i'}, False),
    ({'name': 'a', 'seeds': ['x'], 'image': 'i', 'size': 1,
      'flavor': 'f'}, False),
    ({'name': '', 'seeds': ['x']}, False),
    ({'name': 'a', 'seeds': []}, False),
    ({'name': 'a', 'seeds': ['x'], 'policy': {'alpha': -1}}, False),
    ({'name': 'a', 'seeds': ['x'], 'policy': {'plan_on': 'quantile'}}, True),
    ({'name': 'a', 'seeds': ['x'], 'policy': {'plan_on': 'upper'}}, False),
])
def test_cluster_create_schema(body, ok):
    try:
        schemas.validate(schemas.CLUSTER_CREATE, body)
    except errors.APIError as exc:
        assert not ok, exc.message
        assert exc.code == 400
    else:
        assert ok


def test_policy_defaults_and_model_params():
    policy = schemas.normalize_policy({'max_size': 4})
    assert policy['alpha'] == 1.0 and policy['max_size'] == 4
    with pytest.raises(errors.APIError):
        schemas.normalize_policy({'model': {'solver': 'liblinear',
                                            'kernel': 'rbf'}})
    with pytest.raises(errors.APIError):
        schemas.normalize_policy({'min_size': 5, 'max_size': 2})


def test_nan_never_reaches_json():
    resp = errors.json_response(200, {'x': float('nan'), 'y': [1.0]})
    assert json.loads(resp.body) == {'x': None, 'y': [1.0]}


def _marker_conf(tmp_path, secret=None):
    conf = cfg.ConfigOpts()
    elastman.conf.api.register_opts(conf)
    elastman.conf.service.register_opts(conf)
    conf([], default_config_files=[])
    conf.set_override('state_path', str(tmp_path))
    if secret:
        conf.set_override('marker_secret', secret, 'api')
    return conf


def test_page_markers_are_signed_with_the_configured_secret(tmp_path):
    from elastman.api.controllers import base
    signer = base.MarkerSigner(_marker_conf(tmp_path, 'one secret'))
    marker = signer.sign('c3RhdGU=')
    assert signer.verify(marker) == 'c3RhdGU='
    other = base.MarkerSigner(_marker_conf(tmp_path, 'another secret'))
    with pytest.raises(errors.APIError) as err:
        other.verify(marker)        # another deployment's key: refused
    assert err.value.code == 400
    assert signer.sign('c3RhdGU=') != other.sign('c3RhdGU=')
    assert not (tmp_path / base.MARKER_KEY_FILE).exists()


def test_without_a_secret_a_private_key_file_is_made_once(tmp_path):
    from elastman.api.controllers import base
    first = base.MarkerSigner(_marker_conf(tmp_path))
    path = tmp_path / base.MARKER_KEY_FILE
    assert oct(path.stat().st_mode & 0o777) == '0o600'
    assert len(path.read_text().strip()) == 64
    base._key_from_file.cache_clear()       # as another process would
    second = base.MarkerSigner(_marker_conf(tmp_path))
    assert second.verify(first.sign('c3RhdGU=')) == 'c3RhdGU='
