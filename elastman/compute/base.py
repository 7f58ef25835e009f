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
"""The compute-driver interface, shaped after openstacksdk's compute proxy.

A server is what Nova would boot (or, locally, one Cassandra process); the
actuator needs only create, get, list by cluster tag, delete and waiting for a
status. Drivers raise the exceptions defined here.
"""
from __future__ import annotations

import abc
import dataclasses
import time
from typing import Any, Callable, Iterable


from elastman.common import exception
from elastman.common import loader

NAMESPACE = 'elastman.compute_drivers'

# Server status values (Nova's names).
BUILD = 'BUILD'
ACTIVE = 'ACTIVE'
ERROR = 'ERROR'
DELETED = 'DELETED'
STATUSES = (BUILD, ACTIVE, ERROR, DELETED)

# Metadata key that tags a server with the cluster it belongs to.
CLUSTER_TAG = 'elastman_cluster'
# Metadata key asking the new server's Cassandra to take over the tokens of
# the dead node at this address (``cassandra.replace_address_first_boot``).
REPLACE_ADDRESS = 'elastman_replace_address'
# Metadata key giving the new server's Cassandra its tokens
# (``initial_token``, comma-separated) and letting it bootstrap while other
# nodes do (``cassandra.consistent.rangemovement=false``): a concurrent join
# (elastman.cassandra.tokens says why the tokens are given).
INITIAL_TOKENS = 'elastman_initial_tokens'

# Metadata keys that tell the guest how to secure Cassandra, from a managed
# cluster's spec['security'] (never credentials: those stay in elastman):
#: "password": PasswordAuthenticator, and JMX logins against the same roles
AUTH_META = 'cassandra_auth'
#: "true": client_encryption_options enabled, not optional
CLIENT_TLS_META = 'cassandra_client_tls'
#: "true": JMX (registry and connections) over TLS
JMX_TLS_META = 'cassandra_jmx_tls'


def security_metadata(security: dict | None) -> dict[str, str]:
    """Server metadata for a cluster's ``spec['security']``."""
    security = security or {}
    meta = {}
    if security.get('authentication'):
        meta[AUTH_META] = 'password'
    if security.get('cql_tls'):
        meta[CLIENT_TLS_META] = 'true'
    if security.get('jmx_tls'):
        meta[JMX_TLS_META] = 'true'
    return meta


class ComputeError(exception.ElastmanException):
    msg_fmt = 'Compute driver %(driver)s: %(reason)s'


class ServerNotFound(exception.NotFound):
    msg_fmt = 'Server %(id)s not found.'


class FlavorNotFound(exception.NotFound):
    msg_fmt = 'Flavour %(id)s not found.'


class QuotaExceeded(ComputeError):
    msg_fmt = ('Quota of project %(project)s exceeded: %(reason)s')


class WaitTimeout(ComputeError):
    msg_fmt = ('Server %(id)s did not reach %(status)s within %(timeout)ss '
               '(last status %(last)s).')


@dataclasses.dataclass
class ServerRequest:
    """Where and how a cluster's new servers boot. A field left None takes
    the driver's configured default; drivers without the notion (the local
    one has no images or networks) ignore it.
    """

    image: str | None = None
    networks: list[str] | None = None
    security_groups: list[str] | None = None
    availability_zone: str | None = None
    #: an existing server group every server boots into
    server_group: str | None = None
    #: else a group of the cluster's own with this policy
    server_group_policy: str | None = None
    key_name: str | None = None

    FIELDS = ('image', 'networks', 'security_groups', 'availability_zone',
              'server_group', 'server_group_policy', 'key_name')

    @classmethod
    def from_spec(cls, spec: dict | None) -> 'ServerRequest':
        """The request a cluster's spec records (unknown keys ignored)."""
        spec = spec or {}
        return cls(**{f: spec.get(f) for f in cls.FIELDS})


@dataclasses.dataclass
class Server:
    """One server as the actuator sees it, whatever the driver."""

    id: str
    name: str
    address: str | None
    flavor: str
    status: str
    metadata: dict[str, str] = dataclasses.field(default_factory=dict)
    cql_port: int = 9042
    jmx_host: str | None = None
    jmx_port: int | None = None
    created_at: float | None = None
    fault: str | None = None
    #: compute host it runs on (Nova: ``OS-EXT-SRV-ATTR:host``, shown to
    #: admins only), which names the host agent that reports on it
    host: str | None = None
    #: project owning it (None where the driver has no projects)
    project_id: str | None = None
    image: str | None = None
    #: address -> network name
    networks: dict[str, str] = dataclasses.field(default_factory=dict)
    security_groups: list[str] = dataclasses.field(default_factory=list)

    @property
    def cluster_id(self) -> str | None:
        return self.metadata.get(CLUSTER_TAG)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class ComputeDriver(abc.ABC):
    """What the actuator may ask of a cloud."""

    name: str = ''

    def __init__(self, conf) -> None:
        self.conf = conf

    @property
    def supports_replace(self) -> bool:
        """Whether a server created with ``REPLACE_ADDRESS`` in its metadata
        boots Cassandra with ``replace_address_first_boot`` set to it.
        """
        return False

    @property
    def supports_initial_tokens(self) -> bool:
        """Whether a server created with ``INITIAL_TOKENS`` in its metadata
        boots Cassandra with those tokens and
        ``cassandra.consistent.rangemovement=false`` (a concurrent join).
        """
        return False

    @abc.abstractmethod
    def flavors(self) -> dict[str, dict]:
        """Flavour name -> its resources (driver-specific keys)."""

    @abc.abstractmethod
    def create(self, name: str, flavor: str,
               metadata: dict[str, str] | None = None, *,
               seeds: Iterable[str] | None = None,
               request: ServerRequest | None = None) -> Server:
        """Create a server; returns once the driver has it running (or
        building, for asynchronous clouds). ``seeds``: addresses of the
        cluster's seed nodes the new node joins through (none: it seeds
        itself). FlavorNotFound, ComputeError.
        """

    def scoped(self, project_id: str | None,
               trust_id: str | None) -> 'ComputeDriver':
        """The driver to act on one cluster's servers with: by default this
        one; the nova driver returns one acting in ``project_id`` through
        the Keystone trust ``trust_id``, which sees and touches that
        project's servers only.
        """
        return self

    def find_servers(self, addresses: Iterable[str]) -> dict[str, Server]:
        """Address -> server, for those of ``addresses`` a server of this
        driver (whether elastman made it or not) has.
        """
        wanted = set(addresses)
        return {s.address: s for s in self.list() if s.address in wanted}

    def check_quota(self, flavor: str, count: int) -> None:
        """QuotaExceeded when ``count`` more servers of ``flavor`` do not fit
        in the quota (drivers without quotas accept everything).
        """

    def release(self, cluster_id: str) -> None:
        """Free what the driver made for a cluster besides its servers (the
        nova driver: its server group), once they are all deleted.
        """

    @abc.abstractmethod
    def get(self, server_id: str) -> Server:
        """The server's current view; ServerNotFound once deleted."""

    @abc.abstractmethod
    def list(self, cluster_id: str | None = None) -> list[Server]:
        """Every server of this driver, or those tagged with ``cluster_id``."""

    @abc.abstractmethod
    def delete(self, server_id: str) -> None:
        """Release the server and everything it holds; idempotent."""

    def wait_for_state(self, server_id: str, statuses: Iterable[str] | str,
                       timeout: float = 300, interval: float = 1.0,
                       fail_on: Iterable[str] = (ERROR,)) -> Server:
        """Poll until the server's status is one of ``statuses``.

        DELETED is reached when the server is gone. WaitTimeout after
        ``timeout`` seconds; ComputeError if it lands in ``fail_on``, except
        while waiting for a deletion: a server on its way out (a dead node's,
        often SHUTOFF or ERROR) may pass through any status.
        """
        wanted = {statuses} if isinstance(statuses, str) else set(statuses)
        failing = set() if DELETED in wanted else set(fail_on) - wanted
        deadline = time.monotonic() + timeout
        last = None
        while True:
            try:
                server = self.get(server_id)
                last = server.status
            except ServerNotFound:
                if DELETED in wanted:
                    return Server(id=server_id, name='', address=None,
                                  flavor='', status=DELETED)
                raise
            if last in wanted:
                return server
            if last in failing:
                raise ComputeError(driver=self.name,
                                   reason='server %s went to %s: %s'
                                   % (server_id, last, server.fault))
            if time.monotonic() >= deadline:
                raise WaitTimeout(id=server_id, status='/'.join(sorted(
                    wanted)), timeout=timeout, last=last)
            time.sleep(interval)

    def close(self) -> None:
        """Release client resources (not servers)."""


def load_driver(conf, name: str | None = None,
                invoke: Callable[..., Any] | None = None) -> ComputeDriver:
    """Instantiate the compute driver ``name`` from the stevedore namespace."""
    return loader.driver(NAMESPACE, name or 'local',
                         '[actuator] compute_driver', invoke_args=(conf,))
