"""The OSC plugin against the API in noauth mode (the embedded default)."""
from tests.functional.api.test_keystone import _osc


def test_osc_noauth(noauth_api):
    base = ('--os-auth-type', 'none', '--os-endpoint', noauth_api)
    assert _osc(*base, 'elastman', 'cluster', 'list', '-f', 'json') == []
    created = _osc(*base, 'elastman', 'cluster', 'create', 'n1', '--seed',
                   '127.0.0.9', '-f', 'json')
    shown = _osc(*base, 'elastman', 'cluster', 'show', 'n1', '-f', 'json')
    assert shown['id'] == created['id'] and shown['size'] == 1
    out = _osc(*base, 'elastman', 'cluster', 'list', '-f', 'value',
               '-c', 'name', raw=True)
    assert out.strip() == 'n1'
