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
"""The ``nova`` compute driver: a cluster's servers through openstacksdk.

Every server carries the cluster in its metadata (``base.CLUSTER_TAG``) and, at
microversion 2.52 or later, as the server tags ``elastman`` and
``elastman_cluster=<id>`` as well, so that a cluster's servers (orphans
included) are found by a server-side tag filter. Options are in ``[nova]``
(``elastman.conf.nova``).
"""
from __future__ import annotations

import base64
import contextlib
import functools
import string
from typing import Any, Callable, Iterable, Iterator, TypeVar

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
import openstack
from openstack import exceptions as os_exc
from oslo_log import log as logging
from oslo_utils import timeutils
from oslo_utils import uuidutils
import tenacity

from elastman.compute import base

LOG = logging.getLogger(__name__)

T = TypeVar('T')

GROUP = 'nova'
DRIVER_TAG = 'elastman'
NO_VALID_HOST = 'No valid host was found'
TAGS_MICROVERSION = (2, 52)

# Nova status -> interface status. Transitional states count as BUILD (the
# server comes back by itself); states a Cassandra node cannot serve from, and
# that do not end by themselves, count as ERROR.
STATUS_MAP = {
    'ACTIVE': base.ACTIVE,
    'BUILD': base.BUILD,
    'REBUILD': base.BUILD,
    'REBOOT': base.BUILD,
    'HARD_REBOOT': base.BUILD,
    'PASSWORD': base.BUILD,
    'RESIZE': base.BUILD,
    'VERIFY_RESIZE': base.BUILD,
    'REVERT_RESIZE': base.BUILD,
    'MIGRATING': base.BUILD,
    'ERROR': base.ERROR,
    'SHUTOFF': base.ERROR,
    'PAUSED': base.ERROR,
    'SUSPENDED': base.ERROR,
    'SHELVED': base.ERROR,
    'SHELVED_OFFLOADED': base.ERROR,
    'RESCUE': base.ERROR,
    'UNKNOWN': base.ERROR,
    'DELETED': base.DELETED,
    'SOFT_DELETED': base.DELETED,
}


class NoValidHost(base.ComputeError):
    msg_fmt = ('No valid host was found for server %(id)s: the scheduler '
               'found no host with room for its flavour (hosts full, or '
               'none matching). Nova says: %(reason)s')


class QuotaExceeded(base.ComputeError):
    msg_fmt = 'Compute quota exceeded creating server %(name)s: %(reason)s'


def map_status(nova_status: str | None) -> str:
    """The interface status of a Nova status (unknown ones are ERROR)."""
    return STATUS_MAP.get((nova_status or '').upper(), base.ERROR)


def cluster_tag(cluster_id: str) -> str:
    """The server tag that marks a server of ``cluster_id``."""
    return '%s=%s' % (base.CLUSTER_TAG, cluster_id)


def describe_fault(server: Any) -> str | None:
    """A one-line reason for a server that is not well, else None."""
    status = (server.status or '').upper()
    fault = server.fault or {}
    if fault:
        message = (fault.get('message') or '').strip() or 'unknown fault'
        code = fault.get('code')
        return '%s (code %s)' % (message, code) if code else message
    if map_status(status) == base.ERROR:
        return 'Nova status %s' % (status or 'missing')
    return None


def is_transient(exc: BaseException, idempotent: bool = True) -> bool:
    """Whether a failed API call may be retried.

    Connection failures never reached Nova, so any call may be repeated; a
    timeout or a 5xx may have, so only idempotent calls are.
    """
    if isinstance(exc, (ks_exc.ConnectFailure, ks_exc.ConnectTimeout)):
        return True
    if not idempotent:
        return False
    if isinstance(exc, (ks_exc.RequestTimeout, ks_exc.ConnectionError)):
        return True
    if isinstance(exc, os_exc.HttpException):
        return exc.status_code in (500, 502, 503, 504)
    return False


def render_user_data(template: str, **values: str) -> str:
    """Substitute ``${name}``-style values (unknown ones are kept)."""
    return string.Template(template).safe_substitute(values)


def _microversion(value: str) -> tuple[int, int]:
    major, _sep, minor = (value or '2.1').partition('.')
    return int(major), int(minor or 0)


class NovaDriver(base.ComputeDriver):
    """Servers through the Compute API; flavours are Nova's."""

    name = 'nova'

    @property
    def supports_replace(self) -> bool:
        """True when ``[nova] user_data_file`` passes ``${replace_address}``
        on to the image's Cassandra (``replace_address_first_boot``).
        """
        path = self.opts.user_data_file
        if not path:
            return False
        try:
            with open(path) as f:
                return '${replace_address}' in f.read()
        except OSError:
            return False

    def __init__(self, conf, connection: Any = None) -> None:
        super().__init__(conf)
        self.opts = conf[GROUP]
        self._conn = connection
        self._image_id: str | None = None
        self._network_refs: Any = None
        self._flavor_names: dict[str, str] = {}
        self._tags = (_microversion(self.opts.api_microversion)
                      >= TAGS_MICROVERSION)

    # client -----------------------------------------------------------------
    @property
    def conn(self) -> Any:
        """The openstacksdk connection, made on first use."""
        if self._conn is None:
            self._conn = self._connect()
        return self._conn

    def _connect(self) -> Any:
        extra: dict[str, Any] = {
            'compute_api_version': self.opts.api_microversion,
            'interface': self.opts.interface,
        }
        if self.opts.region_name:
            extra['region_name'] = self.opts.region_name
        if self.opts.endpoint_override:
            extra['compute_endpoint_override'] = self.opts.endpoint_override
        if self.opts.cloud:
            LOG.debug('Connecting to cloud %s of clouds.yaml', self.opts.cloud)
            return openstack.connect(cloud=self.opts.cloud, **extra)
        auth = ks_loading.load_auth_from_conf_options(self.conf, GROUP)
        session = ks_loading.load_session_from_conf_options(
            self.conf, GROUP, auth=auth)
        return openstack.connection.Connection(
            session=session, app_name='elastman', **extra)

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

    def _call(self, fn: Callable[..., T], *args: Any,
              idempotent: bool = True, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)``, retried on transient errors."""
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(
                functools.partial(is_transient, idempotent=idempotent)),
            stop=tenacity.stop_after_attempt(self.opts.api_retries + 1),
            wait=tenacity.wait_exponential(
                multiplier=self.opts.api_retry_interval, max=30),
            before_sleep=self._log_retry, reraise=True)
        return retrying(fn, *args, **kwargs)

    @staticmethod
    def _log_retry(state: tenacity.RetryCallState) -> None:
        LOG.warning('Compute API call failed (attempt %d), retrying: %s',
                    state.attempt_number, state.outcome.exception())

    @contextlib.contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        """Turn SDK and keystoneauth errors into ComputeError."""
        try:
            yield
        except base.ComputeError:
            raise
        except (os_exc.SDKException, ks_exc.ClientException) as exc:
            raise base.ComputeError(driver=self.name,
                                    reason='%s: %s' % (what, exc)) from exc

    # flavours, image, networks ----------------------------------------------
    def flavors(self) -> dict[str, dict]:
        with self._errors('listing flavours'):
            found = self._call(lambda: list(self.conn.compute.flavors()))
        result = {}
        for f in found:
            self._flavor_names[f.id] = f.name
            result[f.name] = {'id': f.id, 'vcpus': f.vcpus, 'ram': f.ram,
                              'disk': f.disk}
        return result

    def _flavor(self, name_or_id: str) -> Any:
        with self._errors('finding flavour %s' % name_or_id):
            flavor = self._call(self.conn.compute.find_flavor, name_or_id,
                                ignore_missing=True)
        if flavor is None:
            raise base.FlavorNotFound(id=name_or_id)
        self._flavor_names[flavor.id] = flavor.name
        return flavor

    def _image(self) -> str:
        if self._image_id is None:
            image = self.opts.image
            if not image:
                raise base.ComputeError(driver=self.name,
                                        reason='[nova] image is not set')
            if not uuidutils.is_uuid_like(image):
                with self._errors('finding image %s' % image):
                    found = self._call(self.conn.image.find_image, image,
                                       ignore_missing=False)
                image = found.id
            self._image_id = image
        return self._image_id

    def _networks(self) -> Any:
        if self._network_refs is None:
            nets = [n for n in self.opts.networks if n]
            if not nets or nets == ['auto']:
                self._network_refs = 'auto'
            elif nets == ['none']:
                self._network_refs = 'none'
            else:
                refs = []
                for net in nets:
                    if not uuidutils.is_uuid_like(net):
                        with self._errors('finding network %s' % net):
                            net = self._call(self.conn.network.find_network,
                                             net, ignore_missing=False).id
                    refs.append({'uuid': net})
                self._network_refs = refs
        return self._network_refs

    def _server_group(self, cluster_id: str | None) -> str | None:
        """The server group ID new servers of ``cluster_id`` boot into."""
        if self.opts.server_group:
            wanted, policy = self.opts.server_group, None
        elif self.opts.server_group_policy and cluster_id:
            wanted = 'elastman-%s' % cluster_id
            policy = self.opts.server_group_policy
        else:
            return None
        with self._errors('finding server group %s' % wanted):
            group = self._call(self.conn.compute.find_server_group, wanted,
                               ignore_missing=True)
            if group is None and policy:
                LOG.info('Creating server group %s (%s)', wanted, policy)
                group = self._call(self.conn.compute.create_server_group,
                                   name=wanted, policy=policy)
        if group is None:
            raise base.ComputeError(driver=self.name, reason='server group '
                                    '%s not found' % wanted)
        return group.id

    def _user_data(self, name: str, flavor: str, cluster_id: str | None,
                   user_data: str | None, seeds: Iterable[str] | None,
                   metadata: dict[str, str]) -> str | None:
        if user_data is None and self.opts.user_data_file:
            with open(self.opts.user_data_file) as f:
                template = f.read()
            if seeds is None:
                seeds = [s for s in metadata.get(
                    self.opts.user_data_seeds_key, '').split(',') if s]
            user_data = render_user_data(
                template, name=name, flavor=flavor, cluster=cluster_id or '',
                seeds=','.join(seeds),
                replace_address=metadata.get(base.REPLACE_ADDRESS, ''))
        if user_data is None:
            return None
        return base64.b64encode(user_data.encode()).decode()

    # servers ----------------------------------------------------------------
    def create(self, name: str, flavor: str,
               metadata: dict[str, str] | None = None, *,
               user_data: str | None = None,
               seeds: Iterable[str] | None = None) -> base.Server:
        """Boot a server; returns at once (status BUILD).

        ``user_data`` (cloud-init, plain text) wins over ``[nova]
        user_data_file``; ``seeds`` fill that template's ``${seeds}``.
        NoValidHost shows later, when the server goes to ERROR.
        """
        meta = dict(metadata or {})
        cluster_id = meta.get(base.CLUSTER_TAG)
        flavor_obj = self._flavor(flavor)
        attrs: dict[str, Any] = {
            'name': name,
            'flavorRef': flavor_obj.id,
            'imageRef': self._image(),
            'networks': self._networks(),
            'metadata': {k: v for k, v in meta.items()
                         if k != self.opts.user_data_seeds_key},
        }
        if self._tags:
            attrs['tags'] = [DRIVER_TAG] + ([cluster_tag(cluster_id)]
                                            if cluster_id else [])
        if self.opts.key_name:
            attrs['key_name'] = self.opts.key_name
        if self.opts.security_groups:
            attrs['security_groups'] = [{'name': sg} for sg in
                                        self.opts.security_groups]
        if self.opts.availability_zone:
            attrs['availability_zone'] = self.opts.availability_zone
        group = self._server_group(cluster_id)
        if group:
            attrs['scheduler_hints'] = {'group': group}
        encoded = self._user_data(name, flavor, cluster_id, user_data, seeds,
                                  meta)
        if encoded:
            attrs['user_data'] = encoded
        LOG.info('Creating server %s (flavour %s, cluster %s)', name, flavor,
                 cluster_id)
        try:
            with self._errors('creating server %s' % name):
                server = self._call(self.conn.compute.create_server,
                                    idempotent=False, **attrs)
        except base.ComputeError as exc:
            cause = exc.__cause__
            if (isinstance(cause, os_exc.HttpException)
                    and cause.status_code in (403, 413)
                    and 'quota' in str(cause).lower()):
                raise QuotaExceeded(name=name, reason=cause) from cause
            raise
        # the create response holds little more than the id
        result = self._to_server(server, flavor=flavor_obj.name)
        result.name = result.name or name
        result.metadata = result.metadata or attrs['metadata']
        if not server.status:
            result.status, result.fault = base.BUILD, None
        return result

    def get(self, server_id: str) -> base.Server:
        try:
            with self._errors('getting server %s' % server_id):
                server = self._call(self.conn.compute.get_server, server_id)
        except base.ComputeError as exc:
            if isinstance(exc.__cause__, os_exc.NotFoundException):
                raise base.ServerNotFound(id=server_id) from exc.__cause__
            raise
        if (server.status or '').upper() == 'DELETED':
            raise base.ServerNotFound(id=server_id)
        return self._to_server(server)

    def list(self, cluster_id: str | None = None) -> list[base.Server]:
        query: dict[str, Any] = {'details': True}
        if self._tags:
            query['tags'] = (cluster_tag(cluster_id) if cluster_id
                             else DRIVER_TAG)
        with self._errors('listing servers'):
            found = self._call(
                lambda: list(self.conn.compute.servers(**query)))
        servers = []
        for s in found:
            meta = s.metadata or {}
            if base.CLUSTER_TAG not in meta:
                continue
            if cluster_id is not None and meta[base.CLUSTER_TAG] != cluster_id:
                continue
            servers.append(self._to_server(s))
        return servers

    def delete(self, server_id: str) -> None:
        LOG.info('Deleting server %s', server_id)
        try:
            with self._errors('deleting server %s' % server_id):
                self._call(self.conn.compute.delete_server, server_id,
                           ignore_missing=True)
        except base.ComputeError as exc:
            if isinstance(exc.__cause__, os_exc.NotFoundException):
                return
            raise

    def live_migrate(self, server_id: str, host: str | None = None) -> None:
        """Ask Nova to live-migrate the server (to ``host``, or where its
        scheduler decides); returns once Nova accepted the request.
        """
        LOG.info('Live-migrating server %s', server_id)
        with self._errors('live-migrating server %s' % server_id):
            self._call(self.conn.compute.live_migrate_server, server_id,
                       host=host, block_migration='auto',
                       idempotent=False)

    def wait_for_state(self, server_id: str, statuses: Iterable[str] | str,
                       timeout: float | None = None,
                       interval: float | None = None,
                       fail_on: Iterable[str] = (base.ERROR,)) -> base.Server:
        """As the base class; timeouts default to [nova] boot_timeout (or
        delete_timeout when waiting for DELETED), and an ERROR caused by the
        scheduler finding no host raises NoValidHost.
        """
        wanted = {statuses} if isinstance(statuses, str) else set(statuses)
        if timeout is None:
            timeout = (self.opts.delete_timeout if wanted == {base.DELETED}
                       else self.opts.boot_timeout)
        try:
            return super().wait_for_state(
                server_id, statuses, timeout=timeout,
                interval=interval or self.opts.poll_interval, fail_on=fail_on)
        except base.WaitTimeout:
            raise
        except base.ComputeError as exc:
            if NO_VALID_HOST.lower() in str(exc).lower():
                reason = exc.kwargs.get('reason', str(exc))
                raise NoValidHost(id=server_id, reason=reason) from exc
            raise

    # conversion -------------------------------------------------------------
    def _to_server(self, server: Any, flavor: str | None = None
                   ) -> base.Server:
        address = _address(server)
        created = None
        if server.created_at:
            created = timeutils.parse_isotime(server.created_at).timestamp()
        return base.Server(
            id=server.id, name=server.name or '', address=address,
            flavor=flavor or self._flavor_name(server.flavor),
            status=map_status(server.status),
            metadata=dict(server.metadata or {}),
            cql_port=self.opts.cql_port,
            jmx_host=address,
            jmx_port=self.opts.jmx_port if address else None,
            created_at=created, fault=describe_fault(server),
            host=getattr(server, 'compute_host', None) or None)

    def _flavor_name(self, flavor: Any) -> str:
        """Name of a server's flavour (embedded from 2.47, else looked up)."""
        if flavor is None:
            return ''
        get = (flavor.get if isinstance(flavor, dict)
               else lambda k: getattr(flavor, k, None))
        name = get('original_name')
        if name:
            return name
        flavor_id = get('id') or ''
        if flavor_id and flavor_id not in self._flavor_names:
            try:
                self.flavors()
            except base.ComputeError:
                LOG.debug('Cannot list flavours to name %s', flavor_id)
        return self._flavor_names.get(flavor_id, flavor_id)


def _address(server: Any) -> str | None:
    """The address to reach the node at: access IPv4, else the first fixed
    IPv4, else any IPv4, else any address.
    """
    if getattr(server, 'access_ipv4', None):
        return server.access_ipv4
    entries = [a for addrs in (server.addresses or {}).values()
               for a in addrs or []]
    for pick in (lambda a: a.get('version') == 4
                 and a.get('OS-EXT-IPS:type', 'fixed') == 'fixed',
                 lambda a: a.get('version') == 4,
                 lambda a: True):
        for entry in entries:
            if pick(entry) and entry.get('addr'):
                return entry['addr']
    return None
