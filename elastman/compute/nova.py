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

A driver made by ``scoped(project, trust)`` acts in a cluster's own project
through its Keystone trust (``elastman.common.trusts``): it sees, creates and
deletes that project's servers only, and refuses a server of another project
even when the trustor could reach it.
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

from elastman.common import trusts
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


class QuotaExceeded(base.QuotaExceeded):
    msg_fmt = 'Compute quota exceeded creating server %(name)s: %(reason)s'


class ImageNotFound(base.ComputeError):
    msg_fmt = 'Image %(image)s not found (or not visible to project %(project)s).'


class NetworkNotFound(base.ComputeError):
    msg_fmt = ('Network %(network)s not found (or not visible to project '
               '%(project)s).')


class ForeignServer(base.ComputeError):
    msg_fmt = ('Server %(id)s belongs to project %(owner)s, not %(project)s: '
               'elastman does not touch it.')


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
        return self._template_has('${replace_address}')

    @property
    def supports_initial_tokens(self) -> bool:
        """True when ``[nova] user_data_file`` passes ``${initial_tokens}``
        on to the image's Cassandra (``initial_token``, with
        ``cassandra.consistent.rangemovement=false``).
        """
        return self._template_has('${initial_tokens}')

    def _template_has(self, name: str) -> bool:
        path = self.opts.user_data_file
        if not path:
            return False
        try:
            with open(path) as f:
                return name in f.read()
        except OSError:
            return False

    def __init__(self, conf, connection: Any = None,
                 project_id: str | None = None,
                 trust_id: str | None = None) -> None:
        super().__init__(conf)
        self.opts = conf[GROUP]
        self._conn = connection
        self._project_id = project_id
        self._trust_id = trust_id
        self._session = None
        self._images: dict[str, str] = {}
        self._network_refs: dict[tuple, Any] = {}
        self._flavor_names: dict[str, str] = {}
        self._scoped: dict[str, NovaDriver] = {}
        self._tags = (_microversion(self.opts.api_microversion)
                      >= TAGS_MICROVERSION)

    @property
    def project_id(self) -> str | None:
        """The project a trust-scoped driver acts in (None: the [nova]
        credentials' own).
        """
        return self._project_id

    def scoped(self, project_id: str | None,
               trust_id: str | None) -> 'NovaDriver':
        if not trust_id:
            return self
        driver = self._scoped.get(trust_id)
        if driver is None:
            driver = NovaDriver(self.conf, project_id=project_id,
                                trust_id=trust_id)
            self._scoped[trust_id] = driver
        return driver

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
        if self._trust_id:
            self._session = trusts.trust_session(self.conf, self._trust_id,
                                                 self._project_id)
            return openstack.connection.Connection(
                session=self._session, app_name='elastman', **extra)
        if self.opts.cloud:
            LOG.debug('Connecting to cloud %s of clouds.yaml', self.opts.cloud)
            return openstack.connect(cloud=self.opts.cloud, **extra)
        auth = ks_loading.load_auth_from_conf_options(self.conf, GROUP)
        session = ks_loading.load_session_from_conf_options(
            self.conf, GROUP, auth=auth)
        return openstack.connection.Connection(
            session=session, app_name='elastman', **extra)

    def close(self) -> None:
        for driver in self._scoped.values():
            driver.close()
        self._scoped.clear()
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None
                self._session = None

    def _check_trust(self) -> None:
        """Re-authenticate a trust-scoped session when its token ran out;
        TrustError when Keystone no longer accepts the trust.
        """
        if self._session is None:
            return
        try:
            self._session.get_token()
        except (ks_exc.Unauthorized, ks_exc.Forbidden, ks_exc.NotFound,
                ks_exc.AuthorizationFailure) as exc:
            raise trusts.TrustError(reason=(
                'Keystone refuses trust %s of project %s (it expired, was '
                'deleted, or its trustor lost a delegated role): %s'
                % (self._trust_id, self._project_id, exc))) from exc

    def _call(self, fn: Callable[..., T], *args: Any,
              idempotent: bool = True, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)``, retried on transient errors."""
        self._check_trust()
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
        except (base.ComputeError, trusts.TrustError):
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

    def _image(self, ref: str | None = None) -> str:
        image = ref or self.opts.image
        if not image:
            raise base.ComputeError(driver=self.name, reason=(
                'no image: the cluster names none and [nova] image is not '
                'set'))
        if image not in self._images:
            if uuidutils.is_uuid_like(image):
                finder = functools.partial(self.conn.image.get_image, image)
            else:
                finder = functools.partial(self.conn.image.find_image, image,
                                           ignore_missing=False)
            try:
                with self._errors('finding image %s' % image):
                    found = self._call(finder)
            except base.ComputeError as exc:
                if isinstance(exc.__cause__, os_exc.NotFoundException):
                    raise ImageNotFound(image=image,
                                        project=self._project_label()
                                        ) from exc.__cause__
                raise
            self._images[image] = found.id
        return self._images[image]

    def _project_label(self) -> str:
        return self._project_id or 'of the [nova] credentials'

    def _networks(self, refs: list[str] | None = None) -> Any:
        nets = tuple(n for n in (refs if refs else self.opts.networks) if n)
        if nets not in self._network_refs:
            if not nets or nets == ('auto',):
                result: Any = 'auto'
            elif nets == ('none',):
                result = 'none'
            else:
                result = []
                for net in nets:
                    finder = (self.conn.network.get_network
                              if uuidutils.is_uuid_like(net) else
                              functools.partial(self.conn.network.find_network,
                                                ignore_missing=False))
                    try:
                        with self._errors('finding network %s' % net):
                            found = self._call(finder, net)
                    except base.ComputeError as exc:
                        if isinstance(exc.__cause__,
                                      os_exc.NotFoundException):
                            raise NetworkNotFound(
                                network=net, project=self._project_label()
                            ) from exc.__cause__
                        raise
                    result.append({'uuid': found.id})
            self._network_refs[nets] = result
        return self._network_refs[nets]

    def _group_wanted(self, cluster_id: str | None,
                      request: base.ServerRequest) -> tuple[str | None,
                                                            str | None]:
        """(group name or ID, policy to create it with) for a cluster."""
        if request.server_group:
            return request.server_group, None
        policy = request.server_group_policy
        if policy is None and not request.server_group_policy:
            if self.opts.server_group:
                return self.opts.server_group, None
            policy = self.opts.server_group_policy
        if policy and cluster_id:
            return 'elastman-%s' % cluster_id, policy
        return None, None

    def _server_group(self, cluster_id: str | None,
                      request: base.ServerRequest | None = None
                      ) -> str | None:
        """The server group ID new servers of ``cluster_id`` boot into."""
        wanted, policy = self._group_wanted(cluster_id,
                                            request or base.ServerRequest())
        if wanted is None:
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

    def release(self, cluster_id: str) -> None:
        """Delete the server group the driver made for the cluster."""
        name = 'elastman-%s' % cluster_id
        with self._errors('deleting server group %s' % name):
            group = self._call(self.conn.compute.find_server_group, name,
                               ignore_missing=True)
            if group is not None:
                LOG.info('Deleting server group %s', name)
                self._call(self.conn.compute.delete_server_group, group.id,
                           ignore_missing=True)

    def check_quota(self, flavor: str, count: int) -> None:
        """QuotaExceeded naming the resource when ``count`` servers of
        ``flavor`` exceed what the project has left.
        """
        if count <= 0:
            return
        flavor_obj = self._flavor(flavor)
        with self._errors('reading the compute limits'):
            limits = self._call(self.conn.compute.get_limits).absolute
        short = []
        for what, limit, used, need in (
                ('instances', limits.instances, limits.instances_used, 1),
                ('cores', limits.total_cores, limits.total_cores_used,
                 flavor_obj.vcpus),
                ('RAM (MB)', limits.total_ram, limits.total_ram_used,
                 flavor_obj.ram)):
            if limit is None or limit < 0:
                continue
            if (used or 0) + need * count > limit:
                short.append('%s: %d used of %d, %d more needed' % (
                    what, used or 0, limit, need * count))
        if short:
            raise base.QuotaExceeded(
                project=self._project_id or '(the [nova] credentials\' '
                'project)', reason='%d server(s) of flavour %s do not fit '
                '(%s)' % (count, flavor, '; '.join(short)))

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
                cluster_name=metadata.get('cluster_name') or (
                    'elastman-%s' % cluster_id if cluster_id else name),
                seeds=','.join(seeds),
                replace_address=metadata.get(base.REPLACE_ADDRESS, ''),
                initial_tokens=metadata.get(base.INITIAL_TOKENS, ''))
        if user_data is None:
            return None
        return base64.b64encode(user_data.encode()).decode()

    # servers ----------------------------------------------------------------
    def create(self, name: str, flavor: str,
               metadata: dict[str, str] | None = None, *,
               seeds: Iterable[str] | None = None,
               request: base.ServerRequest | None = None,
               user_data: str | None = None) -> base.Server:
        """Boot a server; returns at once (status BUILD).

        ``request`` gives the image, networks, security groups, zone, server
        group and key (each defaulting to ``[nova]``). ``user_data``
        (cloud-init, plain text) wins over ``[nova] user_data_file``;
        ``seeds`` fill that template's ``${seeds}``. NoValidHost shows
        later, when the server goes to ERROR.
        """
        meta = dict(metadata or {})
        req = request or base.ServerRequest()
        cluster_id = meta.get(base.CLUSTER_TAG)
        flavor_obj = self._flavor(flavor)
        attrs: dict[str, Any] = {
            'name': name,
            'flavorRef': flavor_obj.id,
            'imageRef': self._image(req.image),
            'networks': self._networks(req.networks),
            'metadata': {k: v for k, v in meta.items()
                         if k != self.opts.user_data_seeds_key},
        }
        if self._tags:
            attrs['tags'] = [DRIVER_TAG] + ([cluster_tag(cluster_id)]
                                            if cluster_id else [])
        key_name = req.key_name or self.opts.key_name
        if key_name:
            attrs['key_name'] = key_name
        groups = (req.security_groups if req.security_groups is not None
                  else self.opts.security_groups)
        if groups:
            attrs['security_groups'] = [{'name': sg} for sg in groups]
        zone = req.availability_zone or self.opts.availability_zone
        if zone:
            attrs['availability_zone'] = zone
        group = self._server_group(cluster_id, req)
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
        if not self._ours(server):
            raise base.ServerNotFound(id=server_id)
        return self._to_server(server)

    def _ours(self, server: Any) -> bool:
        """A trust-scoped driver owns its project's servers only."""
        return (self._project_id is None
                or getattr(server, 'project_id', None) in (None,
                                                           self._project_id))

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
            if not self._ours(s):
                continue
            meta = s.metadata or {}
            if base.CLUSTER_TAG not in meta:
                continue
            if cluster_id is not None and meta[base.CLUSTER_TAG] != cluster_id:
                continue
            servers.append(self._to_server(s))
        return servers

    def find_servers(self, addresses: Iterable[str]
                     ) -> dict[str, base.Server]:
        """Every server of the project (made by elastman or not) with one of
        ``addresses``, by that address.
        """
        wanted = set(addresses)
        with self._errors('listing servers'):
            found = self._call(
                lambda: list(self.conn.compute.servers(details=True)))
        out = {}
        for s in found:
            if not self._ours(s) or map_status(s.status) == base.DELETED:
                continue
            for _net, address in _addresses(s):
                if address in wanted:
                    out[address] = self._to_server(s)
        return out

    def delete(self, server_id: str) -> None:
        if self._project_id is not None:
            try:
                with self._errors('getting server %s' % server_id):
                    server = self._call(self.conn.compute.get_server,
                                        server_id)
            except base.ComputeError as exc:
                if isinstance(exc.__cause__, os_exc.NotFoundException):
                    return
                raise
            if not self._ours(server):
                raise ForeignServer(id=server_id, owner=server.project_id,
                                    project=self._project_id)
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
            host=getattr(server, 'compute_host', None) or None,
            project_id=getattr(server, 'project_id', None) or None,
            image=_image_id(server),
            networks={a: net for net, a in _addresses(server)},
            security_groups=sorted({g.get('name') for g in (
                getattr(server, 'security_groups', None) or [])
                if isinstance(g, dict) and g.get('name')}))

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


def _image_id(server: Any) -> str | None:
    image = getattr(server, 'image', None)
    if isinstance(image, dict):
        return image.get('id') or None
    return getattr(image, 'id', None) or None


def _addresses(server: Any) -> list[tuple[str, str]]:
    """(network name, address) of every address of the server."""
    return [(net, a['addr']) for net, addrs in (server.addresses or {}
                                                ).items()
            for a in addrs or [] if a.get('addr')]


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
