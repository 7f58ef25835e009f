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
"""Cluster access (credentials, TLS) and the encryption of what is stored."""
import ssl

from cassandra import cluster as cql_cluster
import pytest

from elastman.cassandra import access
from elastman.common import exception
from elastman.store import credentials

DOC = {'credentials': {'username': 'app', 'password': 'p4ss'},
       'tls': {'cql': True, 'jmx': False, 'verify_hostname': False}}


def test_document_to_access_and_back_to_options():
    got = access.Access.from_document(DOC)
    assert (got.username, got.password, got.cql_tls, got.jmx_tls) == (
        'app', 'p4ss', True, False)
    assert (got.jmx_user, got.jmx_secret) == ('app', 'p4ss')
    assert 'p4ss' not in repr(got)
    options = got.cql_options('10.0.0.5')
    assert options['auth_provider'].username == 'app'
    assert options['ssl_options'] == {'server_hostname': '10.0.0.5'}
    assert options['ssl_context'].check_hostname is False
    assert options['ssl_context'].verify_mode == ssl.CERT_REQUIRED
    assert access.Access.from_document(None) is None
    assert access.cql_options(None, 'x') == {}
    jmx = access.Access(username='a', password='b', jmx_username='j',
                        jmx_password='k')
    assert (jmx.jmx_user, jmx.jmx_secret) == ('j', 'k')
    assert jmx.fingerprint() != got.fingerprint()


@pytest.mark.parametrize('error,denied', [
    (cql_cluster.NoHostAvailable('x', {'10.0.0.5:9042': Exception(
        'Failed to authenticate to 10.0.0.5:9042: Error from server: '
        'code=0100 [Bad credentials] message="Provided username app and/or '
        'password are incorrect"')}),
     'Provided username app and/or password are incorrect'),
    (cql_cluster.NoHostAvailable('x', {'10.0.0.5:9042': PermissionError(
        1, 'Last error: [SSL: CERTIFICATE_VERIFY_FAILED] certificate '
        'verify failed')}), 'certificate verify failed'),
    (cql_cluster.NoHostAvailable('x', {'10.0.0.5:9042': ConnectionRefusedError(
        111, 'Connection refused')}), None),
    (Exception("SecurityException: Authentication error (javax.security."
               "auth.login.FailedLoginException: Provided username x and/or "
               "password are incorrect)"),
     'Provided username x and/or password are incorrect'),
    (Exception('Cannot login as server authentication setup is not yet '
               'completed'), None),
    (Exception("ConnectIOException: 'non-JRMP server at remote endpoint'"),
     'non-JRMP'),
])
def test_denial_tells_wrong_credentials_from_a_node_not_up(error, denied):
    reason = access.denial(error)
    if denied is None:
        assert reason is None
    else:
        assert denied in reason


@pytest.fixture
def conf():
    from elastman.common import config as em_config
    conf = em_config.CONF
    conf([], project='elastman', default_config_files=[])
    yield conf
    conf.clear_override('encryption_keys', 'credentials')


def test_cipher_needs_keys_and_names_the_option(conf):
    with pytest.raises(exception.ConfigurationError) as err:
        credentials.cipher(conf)
    assert '[credentials] encryption_keys' in str(err.value)
    conf.set_override('encryption_keys', ['not-a-key'], 'credentials')
    with pytest.raises(exception.ConfigurationError) as err:
        credentials.cipher(conf)
    assert 'key 1 is not a Fernet key' in str(err.value)


def test_old_keys_decrypt_the_first_encrypts(conf):
    old, new = credentials.generate_key(), credentials.generate_key()
    conf.set_override('encryption_keys', [old], 'credentials')
    token = credentials.cipher(conf).encrypt(b'secret')
    conf.set_override('encryption_keys', [new, old], 'credentials')
    keys = credentials.cipher(conf)
    assert keys.decrypt(token) == b'secret'
    rotated = keys.rotate(token)
    conf.set_override('encryption_keys', [new], 'credentials')
    assert credentials.cipher(conf).decrypt(rotated) == b'secret'
