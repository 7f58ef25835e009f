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
"""How elastman reaches one cluster's nodes: credentials and TLS.

An :class:`Access` is what a tenant gives for a cluster whose nodes require
authentication (PasswordAuthenticator for CQL; JMX authentication) or TLS
(``client_encryption_options``; JMX over SSL). It is built from the cluster's
encrypted credentials record (:mod:`elastman.store.credentials`) by whoever
talks to the nodes: the monitor (CQL, JMX), the actuator (nodetool, CQL).
Its ``repr`` and every error raised here leave the passwords out.
"""
from __future__ import annotations

import dataclasses
import hashlib
import ssl
from typing import Any

from cassandra import auth as cql_auth
from cassandra import cluster as cql_cluster
from cassandra import policies

from elastman.common import exception

#: keys of the credentials document (the API's ``credentials`` and ``tls``)
SECRET_KEYS = ('username', 'password', 'jmx_username', 'jmx_password')
TLS_KEYS = ('cql', 'jmx', 'ca_certificate', 'verify_hostname')


class AccessDenied(exception.ElastmanException):
    """A node refused the cluster's credentials (or TLS failed): retrying
    the same request will not help.
    """

    msg_fmt = '%(service)s at %(where)s refused %(who)s: %(reason)s'


@dataclasses.dataclass(frozen=True)
class Access:
    """Credentials and TLS settings of one cluster's nodes."""

    username: str | None = None
    password: str | None = dataclasses.field(default=None, repr=False)
    jmx_username: str | None = None     # None: the CQL username
    jmx_password: str | None = dataclasses.field(default=None, repr=False)
    cql_tls: bool = False
    jmx_tls: bool = False
    #: PEM CA certificate(s) the nodes' certificates chain to; None: the
    #: system's trusted CAs
    ca_certificate: str | None = dataclasses.field(default=None, repr=False)
    verify_hostname: bool = True

    @classmethod
    def from_document(cls, doc: dict | None) -> 'Access | None':
        """From the stored document ``{'credentials': {...}, 'tls': {...}}``
        (None for no document).
        """
        if not doc:
            return None
        creds = doc.get('credentials') or {}
        tls = doc.get('tls') or {}
        return cls(username=creds.get('username'),
                   password=creds.get('password'),
                   jmx_username=creds.get('jmx_username'),
                   jmx_password=creds.get('jmx_password'),
                   cql_tls=bool(tls.get('cql')), jmx_tls=bool(tls.get('jmx')),
                   ca_certificate=tls.get('ca_certificate'),
                   verify_hostname=tls.get('verify_hostname', True))

    # -- JMX ---------------------------------------------------------------
    @property
    def jmx_user(self) -> str | None:
        return self.jmx_username or self.username

    @property
    def jmx_secret(self) -> str | None:
        if self.jmx_username:
            return self.jmx_password
        return self.jmx_password if self.jmx_password is not None \
            else self.password

    # -- CQL ---------------------------------------------------------------
    def fingerprint(self) -> str:
        """A digest that changes whenever anything here changes (sessions
        opened with older settings are then replaced).
        """
        raw = repr((self.username, self.password, self.jmx_username,
                    self.jmx_password, self.cql_tls, self.jmx_tls,
                    self.ca_certificate, self.verify_hostname))
        return hashlib.sha256(raw.encode()).hexdigest()[:16]

    def ssl_context(self) -> ssl.SSLContext:
        """A client TLS context trusting ``ca_certificate`` (or the system's
        CAs), checking host names when ``verify_hostname``.
        """
        if self.ca_certificate:
            context = ssl.create_default_context(cadata=self.ca_certificate)
        else:
            context = ssl.create_default_context()
        context.check_hostname = self.verify_hostname
        return context

    def cql_options(self, address: str) -> dict[str, Any]:
        """Keyword arguments of ``cassandra.cluster.Cluster`` for a session
        on the node at ``address``.
        """
        options: dict[str, Any] = {}
        if self.username:
            options['auth_provider'] = cql_auth.PlainTextAuthProvider(
                self.username, self.password or '')
        if self.cql_tls:
            options['ssl_context'] = self.ssl_context()
            options['ssl_options'] = {'server_hostname': address}
        return options


def cql_options(access: Access | None, address: str) -> dict[str, Any]:
    return access.cql_options(address) if access is not None else {}


def who(access: Access | None, jmx: bool = False) -> str:
    user = (access.jmx_user if jmx else access.username) if access else None
    return 'user %r' % user if user else 'the connection (no credentials)'


def denial(exc: BaseException) -> str | None:
    """Why ``exc`` (a driver or nodetool error) means the credentials or
    TLS settings are wrong, or None when it may be transient.
    """
    text = str(exc)
    if isinstance(exc, cql_cluster.NoHostAvailable):
        reasons = [denial(e) for e in (exc.errors or {}).values()]
        found = [r for r in reasons if r]
        return found[0] if found and len(found) == len(reasons) else None
    if type(exc).__name__ == 'AuthenticationFailed':
        return _server_message(text)
    if isinstance(exc, ssl.SSLError):
        return 'TLS: %s' % (getattr(exc, 'verify_message', None)
                            or exc.reason or text)
    lowered = text.lower()
    if 'cannot login as server authentication setup' in lowered:
        return None                  # the node is still starting
    for needle in ('authentication failed', 'invalid username or password',
                   'credentials required', 'bad credentials',
                   'and/or password are incorrect',
                   'certificate_unknown', 'certificate verify failed',
                   'wrong version number', 'unable to find valid '
                   'certification path', 'pkix path building failed',
                   'unrecognized ssl message', 'non-jrmp server'):
        if needle in lowered:
            return _server_message(text)
    return None


def _server_message(text: str) -> str:
    """The server's own words from a driver or nodetool message: one line."""
    for marker, end in (('message="', '"'),
                        ('FailedLoginException: ', ')')):  # JMX via roles
        if marker in text:
            text = text.split(marker, 1)[1].split(end, 1)[0]
            break
    lines = [line.strip() for line in text.strip().splitlines()
             if line.strip()]
    return lines[0].strip("'.")[:300] if lines else text


def check_cql(access: Access | None, address: str, port: int,
              timeout: float = 10.0) -> None:
    """Log in to one node over CQL and run a query; AccessDenied when the
    node refuses the credentials or the TLS handshake fails.
    """
    cluster = cql_cluster.Cluster(
        contact_points=[address], port=port,
        load_balancing_policy=policies.WhiteListRoundRobinPolicy([address]),
        connect_timeout=timeout, control_connection_timeout=timeout,
        protocol_version=5, schema_metadata_enabled=False,
        token_metadata_enabled=False, **cql_options(access, address))
    try:
        session = cluster.connect()
        session.execute('SELECT release_version FROM system.local',
                        timeout=timeout)
    except Exception as exc:
        reason = denial(exc)
        if reason:
            raise AccessDenied(service='CQL', where='%s:%d' % (address, port),
                               who=who(access), reason=reason)
        raise
    finally:
        cluster.shutdown()
