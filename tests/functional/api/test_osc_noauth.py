"""The OSC plugin against the API in noauth mode (the embedded default)."""
import uuid

from tests.functional.api.test_keystone import _osc


def test_osc_noauth(noauth_api):
    base = ('--os-auth-type', 'none', '--os-endpoint', noauth_api)
    assert _osc(*base, 'elastman', 'cluster', 'list', '-f', 'json') == []
    created = _osc(*base, 'elastman', 'cluster', 'create', 'n1', '--seed',
                   '127.0.0.9', '-f', 'json')
    assert created['size'] == 1
    policy = _osc(*base, 'elastman', 'policy', 'set', 'n1', '--max-size',
                  '6', '--dry-run', '-f', 'json')
    assert policy['max_size'] == 6 and policy['dry_run'] is True


def test_osc_credentials(noauth_api, conf, store, tmp_path):
    from elastman.store import credentials
    from tests.functional import tls
    base = ('--os-auth-type', 'none', '--os-endpoint', noauth_api)
    ca = tmp_path / 'ca.pem'
    ca.write_text(tls.make(str(tmp_path), '127.0.0.0/30').ca_pem)
    conf.set_override('encryption_keys', [credentials.generate_key()],
                      'credentials')
    try:
        created = _osc(*base, 'elastman', 'cluster', 'create', 's1', '--seed',
                       '127.0.0.9', '--username', 'app', '--password', 'pw1',
                       '--cql-tls', '--ca-cert', str(ca), '-f', 'json')
        assert created['security'] == {'authentication': True,
                                       'cql_tls': True, 'jmx_tls': False}
        _osc(*base, 'elastman', 'cluster', 'credentials', 'set', 's1',
             '--username', 'app', '--password', 'pw2', '--jmx-tls')
        doc = store.credentials.get(uuid.UUID(created['id']))
        assert doc == {'credentials': {'username': 'app', 'password': 'pw2'},
                       'tls': {'cql': False, 'jmx': True,
                               'verify_hostname': True}}
        shown = _osc(*base, 'elastman', 'cluster', 'show', 's1', raw=True)
        assert 'pw1' not in shown and 'pw2' not in shown
        _osc(*base, 'elastman', 'cluster', 'credentials', 'unset', 's1')
        assert store.credentials.get(uuid.UUID(created['id'])) is None
    finally:
        conf.clear_override('encryption_keys', 'credentials')
