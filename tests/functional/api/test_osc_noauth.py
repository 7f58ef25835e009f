"""The OSC plugin against the API in noauth mode (the embedded default)."""
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
