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
"""The elastman API on the test store: served in-process (noauth or
keystone; the session's Keystone is tests/functional/conftest.py's) or by
gunicorn from the WSGI module elastman.wsgi.api.
"""
import os
import signal
import subprocess
import sys

import pytest
import requests

from elastman.api import service as api_service
from tests.functional import services


class Client:
    """requests against one base URL, optionally with a token."""

    def __init__(self, base: str, token: str | None = None,
                 headers: dict | None = None) -> None:
        self.base = base.rstrip('/')
        self.headers = dict(headers or {})
        if token:
            self.headers['X-Auth-Token'] = token

    def __call__(self, method: str, path: str, **kwargs):
        headers = dict(self.headers, **kwargs.pop('headers', {}))
        return requests.request(method, self.base + path, headers=headers,
                                timeout=30, **kwargs)


def _serve(conf, store, strategy: str):
    conf.set_override('auth_strategy', strategy, 'api')
    conf.set_override('bind_port', 0, 'api')
    conf.set_override('transport_url', 'fake://')
    # not a key file under the default state_path (/var/lib/elastman)
    conf.set_override('marker_secret', 'functional-tests', 'api')
    service = api_service.build(conf, store)
    service.start()
    return service


@pytest.fixture
def noauth_api(conf, store):
    service = _serve(conf, store, 'noauth')
    yield 'http://127.0.0.1:%d' % service.port
    service.stop()
    conf.clear_override('auth_strategy', 'api')
    conf.clear_override('marker_secret', 'api')


@pytest.fixture
def wsgi_api(config_file, tmp_path, store, keyspace_conf):
    """gunicorn serving elastman.wsgi.api:application (two worker
    processes, noauth) on the test store's keyspace, its schema synced
    (the store fixture), with the test's credential keys if it set any.
    """
    groups = {'api': {'auth_strategy': 'noauth'},
              'DEFAULT': {'transport_url': 'fake://'}}
    keys = keyspace_conf.credentials.encryption_keys
    if keys:
        groups['credentials'] = {'encryption_keys': ','.join(keys)}
    path = config_file(**groups)
    port = services.free_port()
    log = open(tmp_path / 'gunicorn.log', 'w')
    proc = subprocess.Popen(
        [os.path.join(os.path.dirname(sys.executable), 'gunicorn'),
         '--bind', '127.0.0.1:%d' % port, '--workers', '2',
         '--timeout', '60', '--no-control-socket',
         'elastman.wsgi.api:application'],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env=dict(os.environ, OS_ELASTMAN_CONFIG_DIR=os.path.dirname(path),
                 OS_ELASTMAN_CONFIG_FILES=os.path.basename(path)))
    base = 'http://127.0.0.1:%d' % port

    def ready():
        if proc.poll() is not None:
            raise AssertionError('gunicorn exited: %s' % (
                tmp_path / 'gunicorn.log').read_text()[-3000:])
        try:
            # a worker opens the store at its first request
            return requests.get(base + '/v1/clusters', timeout=30).ok
        except requests.RequestException:
            return False
    try:
        services.wait_for(ready, timeout=120)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


@pytest.fixture(params=['in-process', 'gunicorn'])
def api(request):
    """The noauth API, served in-process (as elastman-all does) and by
    gunicorn from the WSGI module (as operators and devstack do).
    """
    name = 'noauth_api' if request.param == 'in-process' else 'wsgi_api'
    return Client(request.getfixturevalue(name))


@pytest.fixture
def keystone_api(conf, store, keystone):
    keystone.configure_authtoken(conf)
    service = _serve(conf, store, 'keystone')
    yield 'http://127.0.0.1:%d' % service.port
    service.stop()
    keystone.clear_authtoken(conf)
    conf.clear_override('auth_strategy', 'api')
    conf.clear_override('marker_secret', 'api')
