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
"""The ``local`` compute driver: each server is a Cassandra process here.

State lives in ``[DEFAULT] state_path/local-cloud/<server id>/``: ``server.json``
(name, flavour, address, ports, metadata) next to the node's own directory
tree (``node.json``, conf, data, logs, pid file). Scanning that directory is
all it takes to find the servers again after elastman restarts.
"""
from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import json
import os
import shutil
import time
import uuid

from oslo_log import log as logging

from elastman.cassandra import node as cassandra_node
from elastman.common import files
from elastman.common import ports
from elastman.compute import base
from elastman.compute import cgroups
from elastman.compute import flavors as flavor_mod

LOG = logging.getLogger(__name__)

SERVER_FILE = 'server.json'
# a server still BUILD this long after its record was written is stale, even
# when a process with the builder's pid exists (the pid was reused)
BUILD_TIMEOUT = 600.0

# Read-size tracking (CoordinatorReadSize) only runs with read thresholds on;
# the warn levels are far above any row the monitor would ever see.
MONITORING_YAML = {
    'read_thresholds_enabled': True,
    'coordinator_read_size_warn_threshold': '512MiB',
    'local_read_size_warn_threshold': '512MiB',
}


class LocalDriver(base.ComputeDriver):
    """Servers as local Cassandra processes, flavours as cgroup CPU quotas."""

    name = 'local'

    @property
    def supports_replace(self) -> bool:
        return True

    @property
    def supports_initial_tokens(self) -> bool:
        return True

    def __init__(self, conf, recover: bool = True) -> None:
        super().__init__(conf)
        self.opts = conf.local_cloud
        self.state_dir = os.path.join(conf.state_path, 'local-cloud')
        os.makedirs(self.state_dir, exist_ok=True)
        self._flavors = flavor_mod.parse_all(self.opts.flavor)
        self._network = ipaddress.ip_network(self.opts.network)
        self._cgroup_version: str | None = None
        self._cgroup_root = ''
        if recover:
            self.recover()

    # flavours ---------------------------------------------------------------
    def flavors(self) -> dict[str, dict]:
        return {n: f.to_dict() for n, f in self._flavors.items()}

    def flavor(self, name: str) -> flavor_mod.Flavor:
        try:
            return self._flavors[name]
        except KeyError:
            raise base.FlavorNotFound(id=name)

    # cgroups ----------------------------------------------------------------
    def cpu_cgroup(self, server_id: str) -> cgroups.CpuCgroup | None:
        """The CPU cgroup of a server (its flavour's quota), or None where
        ``[local_cloud] cgroup`` is ``none``.
        """
        if self._cgroup_version is None:
            self._cgroup_version, self._cgroup_root = cgroups.detect(
                self.opts.cgroup, self.opts.cgroup_root)
            if self._cgroup_version == 'none':
                LOG.warning('[local_cloud] cgroup = none: flavour CPU quotas '
                            'are not enforced')
        if self._cgroup_version == 'none':
            return None
        return cgroups.CpuCgroup(self._cgroup_version, self._cgroup_root,
                                 self.opts.cgroup_parent, server_id)

    # records ----------------------------------------------------------------
    def _dir(self, server_id: str) -> str:
        return os.path.join(self.state_dir, server_id)

    def _read(self, server_id: str) -> dict:
        try:
            with open(os.path.join(self._dir(server_id), SERVER_FILE)) as f:
                return json.load(f)
        except FileNotFoundError:
            raise base.ServerNotFound(id=server_id)

    def _write(self, record: dict) -> None:
        # another process's driver may write the same record at the same
        # moment (both recovering), or read it while this one writes
        files.replace_json(os.path.join(self._dir(record['id']), SERVER_FILE),
                           record, indent=1, sort_keys=True)

    def _records(self) -> list[dict]:
        records = []
        for entry in sorted(os.listdir(self.state_dir)):
            if entry.startswith('.'):
                continue
            try:
                records.append(self._read(entry))
            except (base.ServerNotFound, ValueError):
                continue
        return records

    def node(self, server_id: str) -> cassandra_node.LocalNode:
        """The Cassandra process behind a server."""
        self._read(server_id)
        return cassandra_node.LocalNode.load(self.conf, self._dir(server_id))

    @contextlib.contextmanager
    def _locked(self):
        with open(os.path.join(self.state_dir, '.lock'), 'w') as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _to_server(self, record: dict) -> base.Server:
        status, fault = base.ACTIVE, None
        if record.get('building'):
            status = base.BUILD
        else:
            try:
                running = cassandra_node.LocalNode.load(
                    self.conf, self._dir(record['id'])).is_running()
            except (OSError, ValueError):
                running = False
            if not running:
                status, fault = base.ERROR, 'Cassandra process is not running'
        return base.Server(
            id=record['id'], name=record['name'], address=record['address'],
            flavor=record['flavor'], status=status,
            metadata=dict(record.get('metadata') or {}),
            cql_port=record['cql_port'], jmx_host='127.0.0.1',
            jmx_port=record['jmx_port'], created_at=record['created_at'],
            fault=fault)

    # API --------------------------------------------------------------------
    def get(self, server_id: str) -> base.Server:
        return self._to_server(self._read(server_id))

    def list(self, cluster_id: str | None = None) -> list[base.Server]:
        servers = [self._to_server(r) for r in self._records()]
        if cluster_id is not None:
            servers = [s for s in servers if s.cluster_id == str(cluster_id)]
        return sorted(servers, key=lambda s: (s.created_at or 0, s.id))

    def create(self, name: str, flavor: str,
               metadata: dict[str, str] | None = None, *,
               seeds=None, request: base.ServerRequest | None = None
               ) -> base.Server:
        """Start a node of ``flavor``; returns once its JVM runs.

        ``metadata`` may carry the cluster tag (``elastman_cluster``),
        ``seeds`` (comma-separated addresses; default: the cluster's oldest
        running servers, or the node itself for the first one),
        ``cluster_name``, the security keys of
        :func:`elastman.compute.base.security_metadata` and
        ``elastman_replace_address`` (the address of a dead node whose tokens
        this one takes over on its first boot) and
        ``elastman_initial_tokens`` (its tokens, comma-separated: it
        bootstraps with them while other nodes may too); the ``seeds``
        argument wins when not empty. A local server has no image, network
        or server group: ``request`` is not used.
        """
        spec_flavor = self.flavor(flavor)
        metadata = {str(k): str(v) for k, v in (metadata or {}).items()}
        if seeds:
            metadata['seeds'] = ','.join(seeds)
        server_id = str(uuid.uuid4())
        with self._locked():
            records = self._records()
            address, host_index = self._allocate(records)
            cluster = metadata.get(base.CLUSTER_TAG)
            seeds = self._seeds(records, cluster, metadata.get('seeds'),
                                address)
            record = {
                'id': server_id, 'name': name, 'flavor': flavor,
                'metadata': metadata, 'address': address,
                'cql_port': self.opts.cql_port,
                'storage_port': self.opts.storage_port,
                'jmx_port': self.opts.jmx_port_base + host_index,
                'created_at': time.time(), 'building': True,
                'builder_pid': os.getpid(), 'seeds': seeds,
            }
            os.makedirs(self._dir(server_id))
            self._write(record)
        try:
            self._start(record, spec_flavor, metadata)
        except Exception:
            LOG.exception('server %s (%s) failed to start; cleaning up',
                          server_id, name)
            self.delete(server_id)
            raise
        record['building'] = False
        self._write(record)
        return self.get(server_id)

    def _start(self, record: dict, flavor: flavor_mod.Flavor,
               metadata: dict) -> None:
        cluster = metadata.get(base.CLUSTER_TAG)
        client_tls = metadata.get(base.CLIENT_TLS_META) == 'true'
        jmx_tls = metadata.get(base.JMX_TLS_META) == 'true'
        if (client_tls or jmx_tls) and not self.opts.tls_keystore:
            raise base.ComputeError(
                driver=self.name, reason='server %s asks for TLS but '
                '[local_cloud] tls_keystore is not set' % record['name'])
        spec = cassandra_node.NodeSpec(
            name=record['name'], base_dir=self._dir(record['id']),
            address=record['address'], cql_port=record['cql_port'],
            storage_port=record['storage_port'],
            jmx_port=record['jmx_port'], seeds=tuple(record['seeds']),
            cluster_name=metadata.get('cluster_name') or (
                'elastman-%s' % cluster if cluster else 'elastman-local'),
            heap=flavor.heap, num_tokens=self.opts.num_tokens,
            extra_yaml={**MONITORING_YAML, **flavor.cassandra_settings()},
            jvm_opts=tuple(flavor.jvm_options() + list(
                self.opts.jvm_options)),
            authentication=metadata.get(base.AUTH_META) == 'password',
            client_tls=client_tls, jmx_tls=jmx_tls,
            keystore=self.opts.tls_keystore if client_tls or jmx_tls
            else None,
            keystore_password=self.opts.tls_keystore_password
            if client_tls or jmx_tls else None)
        replace = metadata.get(base.REPLACE_ADDRESS)
        if replace:
            # only on the first boot: a restart of the replacement is a
            # plain restart (Cassandra ignores it once bootstrapped)
            spec.jvm_opts += ('-Dcassandra.replace_address_first_boot=%s'
                              % replace,)
        initial = metadata.get(base.INITIAL_TOKENS)
        if initial:
            spec.extra_yaml['initial_token'] = initial
            spec.jvm_opts += ('-Dcassandra.consistent.rangemovement=false',)
        node = cassandra_node.LocalNode(self.conf, spec)
        wrapper = None
        if flavor.cpu:
            group = self.cpu_cgroup(record['id'])
            if group is not None:
                group.create(flavor.cpu, self.opts.cpu_period_us)
                wrapper = group.wrapper()
        node.start(cpu_wrapper=wrapper)
        _wait_running(node, timeout=15)

    def reboot(self, server_id: str) -> base.Server:
        """Start the process of a server in ERROR again (same data)."""
        record = self._read(server_id)
        node = self.node(server_id)
        if not node.is_running():
            flavor = self.flavor(record['flavor'])
            group = self.cpu_cgroup(server_id) if flavor.cpu else None
            if group is not None:
                group.create(flavor.cpu, self.opts.cpu_period_us)
            node.start(cpu_wrapper=group.wrapper() if group else None)
            _wait_running(node, timeout=15)
        return self.get(server_id)

    def delete(self, server_id: str) -> None:
        path = self._dir(server_id)
        if not os.path.isdir(path):
            return
        if os.path.exists(os.path.join(path, 'node.json')):
            node = cassandra_node.LocalNode.load(self.conf, path)
            node.stop()
        group = self.cpu_cgroup(server_id)
        if group is not None:
            group.remove()
        shutil.rmtree(path, ignore_errors=True)
        LOG.info('deleted local server %s', server_id)

    def recover(self) -> list[base.Server]:
        """Re-attach to the servers of an earlier run; finish half-made ones.

        A server whose creation was interrupted (still BUILD, no process,
        and the process that was creating it gone or ``BUILD_TIMEOUT``
        seconds past) is removed; running ones are adopted; stopped ones
        stay in ERROR for the caller to reboot or delete.
        """
        for entry in sorted(os.listdir(self.state_dir)):
            path = self._dir(entry)
            if entry.startswith('.') or not os.path.isdir(path):
                continue
            try:
                record = self._read(entry)
            except (base.ServerNotFound, ValueError):
                record = None
            running = False
            if os.path.exists(os.path.join(path, 'node.json')):
                try:
                    running = cassandra_node.LocalNode.load(
                        self.conf, path).is_running()
                except (TypeError, ValueError) as exc:
                    LOG.warning('local server %s: unreadable node.json (%s); '
                                'taken as not running', entry, exc)
            if record is not None and record.get('building') and (
                    not running and _process_alive(record.get('builder_pid'))
                    and time.time() - record['created_at'] < BUILD_TIMEOUT):
                # another driver (another worker process) is creating it now
                continue
            if record is None or (record.get('building') and not running):
                LOG.warning('removing half-created local server %s', entry)
                self.delete(entry)
            elif record.get('building'):
                record['building'] = False
                self._write(record)
        servers = self.list()
        LOG.info('local cloud: %d server(s) found in %s (%d running)',
                 len(servers), self.state_dir,
                 sum(s.status == base.ACTIVE for s in servers))
        return servers

    # helpers -------------------------------------------------------------
    def _allocate(self, records: list[dict]) -> tuple[str, int]:
        used = {r['address'] for r in records}
        for host in self._network.hosts():
            address = str(host)
            index = int(host) - int(self._network.network_address)
            if address in used:
                continue
            if ports.answers(address, self.opts.cql_port, 0.3) or \
                    ports.answers('127.0.0.1', self.opts.jmx_port_base + index,
                                  0.3):
                LOG.warning('%s (or its JMX port) is taken by a process this '
                            'driver did not start; skipping it', address)
                continue
            return address, index
        raise base.ComputeError(driver=self.name,
                                reason='no free address left in %s'
                                       % self._network)

    def _seeds(self, records: list[dict], cluster: str | None,
               explicit: str | None, address: str) -> list[str]:
        if explicit:
            return [s.strip() for s in explicit.split(',') if s.strip()]
        peers = [r for r in sorted(records, key=lambda r: r['created_at'])
                 if cluster and (r.get('metadata') or {}).get(
                     base.CLUSTER_TAG) == cluster and not r.get('building')]
        seeds = [r['address'] for r in peers
                 if self._to_server(r).status == base.ACTIVE]
        return seeds[:self.opts.max_seeds] or [address]


def _process_alive(pid: int | None) -> bool:
    """True if process ``pid`` exists on this host."""
    if not pid:
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _is_wrapper(pid: int) -> bool:
    """True while ``pid`` is still the cgroup shell (or mid-exec)."""
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            argv0 = f.read().split(b'\0', 1)[0]
    except OSError:
        return True
    return argv0 in (b'', b'/bin/sh')


def _wait_running(node: cassandra_node.LocalNode, timeout: float) -> None:
    """Wait until the started wrapper has exec'd into the Cassandra JVM."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pid = node.pid()
        if pid is not None and not _is_wrapper(pid):
            return
        proc = node.process
        if proc is not None and proc.poll() is not None:
            break
        time.sleep(0.2)
    raise base.ComputeError(
        driver='local', reason='node %s did not start; see %s' % (
            node.spec.name, os.path.join(node.log_dir, 'stdout.log')))
