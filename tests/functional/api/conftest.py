"""The elastman API served in-process on the test store (noauth or
keystone), and a real Keystone for the latter."""
import pytest
import requests

from elastman.api import service as api_service
from tests.functional import keystone as ks


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
def api(noauth_api):
    return Client(noauth_api)


@pytest.fixture(scope='session')
def keystone(tmp_path_factory):
    server = ks.Keystone(str(tmp_path_factory.mktemp('keystone')))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def keystone_api(conf, store, keystone):
    keystone.configure_authtoken(conf)
    service = _serve(conf, store, 'keystone')
    yield 'http://127.0.0.1:%d' % service.port
    service.stop()
    keystone.clear_authtoken(conf)
    conf.clear_override('auth_strategy', 'api')
    conf.clear_override('marker_secret', 'api')
