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
"""One shared 3-node local cluster for the compute and monitor tests.

Starting Cassandra nodes is the expensive part of these tests, so every test
module that needs a cluster acquires the same one; at the end of the session
every server is deleted and nothing may be left behind.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import threading
import uuid

from elastman.cassandra import nodetool
from elastman.compute import base
from elastman.compute import local
from tests.functional import services

NETWORK = os.environ.get('ELASTMAN_TEST_LOCAL_NETWORK', '127.0.60.0/24')
JMX_BASE = int(os.environ.get('ELASTMAN_TEST_LOCAL_JMX_BASE', '17200'))
FLAVORS = ['c1:cpu=1,heap=384M', 'c05:cpu=0.5,heap=320M']

_CLOUD_OPTIONS = ('flavor', 'network', 'jmx_port_base', 'cgroup_parent')
_lock = threading.Lock()
_shared: 'LocalCluster | None' = None


class LocalCluster:
    """A cluster of local servers plus the driver that made them."""

    def __init__(self, conf, size: int = 3, flavor: str = 'c1',
                 flavors: list[str] | None = None, network: str = NETWORK,
                 jmx_base: int = JMX_BASE) -> None:
        """``flavors``, ``network`` and ``jmx_base`` let a test that runs
        beside the shared cluster have its own addresses, ports and limits.
        """
        self.conf = conf
        self.size = size
        self.flavor = flavor
        self.cluster_id = str(uuid.uuid4())
        self.state_path = tempfile.mkdtemp(prefix='elastman-localcloud-')
        self.cgroup_parent = 'elastman-test-%s' % uuid.uuid4().hex[:6]
        # what destroy() puts back: a second cluster (another test's) must
        # not leave the shared one with the defaults, whose driver reads
        # them when it deletes its servers at the end of the session
        self._saved = {(name, None): conf[name] for name in ('state_path',)}
        self._saved.update({(name, 'local_cloud'): conf.local_cloud[name]
                            for name in _CLOUD_OPTIONS})
        self._mine = {('state_path', None): self.state_path,
                      ('flavor', 'local_cloud'): flavors or FLAVORS,
                      ('network', 'local_cloud'): network,
                      ('jmx_port_base', 'local_cloud'): jmx_base,
                      ('cgroup_parent', 'local_cloud'): self.cgroup_parent}
        self.reapply()
        self.driver = local.LocalDriver(conf)
        self.servers: list[base.Server] = []

    def reapply(self) -> None:
        """Set this cluster's local-cloud options again: its driver reads
        them live, and another test's fixture may have cleared them.
        """
        for (name, group), value in self._mine.items():
            self.conf.set_override(name, value, group)

    @property
    def metadata(self) -> dict[str, str]:
        return {base.CLUSTER_TAG: self.cluster_id}

    def nodetool(self, server: base.Server | None = None) -> nodetool.Nodetool:
        server = server or self.servers[0]
        return nodetool.Nodetool(self.conf, server.jmx_host, server.jmx_port,
                                 log_dir=os.path.join(self.state_path, 'nt'))

    def add(self, flavor: str | None = None, wait_un: bool = True,
            timeout: float = 240) -> base.Server:
        index = len(self.servers) + 1
        server = self.driver.create('node%d' % index, flavor or self.flavor,
                                    self.metadata)
        self.servers.append(server)
        if wait_un:
            self.wait_un(server, timeout)
        return server

    def wait_un(self, server: base.Server, timeout: float = 240) -> None:
        node = self.driver.node(server.id)
        node.wait_for_cql(timeout)
        tool = self.nodetool(self.servers[0])

        def joined():
            try:
                status = {n.address: n.code for n in tool.status()}
            except Exception:
                return False
            return status.get(server.address) == 'UN'
        services.wait_for(joined, timeout=timeout, interval=2)

    def start(self) -> None:
        for _ in range(self.size):
            self.add()

    def leftovers(self) -> list[str]:
        """Processes, directories or cgroups of this cluster still present."""
        found = []
        for entry in os.listdir(self.driver.state_dir):
            if not entry.startswith('.'):
                found.append('directory %s' % entry)
        for pid in os.listdir('/proc'):
            if not pid.isdigit():
                continue
            try:
                with open('/proc/%s/cmdline' % pid, 'rb') as f:
                    if self.state_path.encode() in f.read():
                        found.append('process %s' % pid)
            except OSError:
                continue
        for root in ('/sys/fs/cgroup/cpu', '/sys/fs/cgroup'):
            path = os.path.join(root, self.cgroup_parent)
            if os.path.isdir(path):
                found += ['cgroup %s/%s' % (path, c) for c in os.listdir(path)
                          if os.path.isdir(os.path.join(path, c))]
        return found

    def destroy(self) -> None:
        self.reapply()
        services.delete_all(self.driver)
        for root in ('/sys/fs/cgroup/cpu', '/sys/fs/cgroup'):
            path = os.path.join(root, self.cgroup_parent)
            if os.path.isdir(path):
                try:
                    os.rmdir(path)
                except OSError:
                    pass
        left = self.leftovers()
        shutil.rmtree(self.state_path, ignore_errors=True)
        for (name, group), value in self._saved.items():
            self.conf.set_override(name, value, group)
        assert not left, 'left behind: %s' % left


def acquire(conf, config) -> LocalCluster:
    """The shared cluster, started on first use and destroyed when the
    pytest session ends (``config`` is pytest's config object).
    """
    global _shared
    with _lock:
        if _shared is None:
            cluster = LocalCluster(conf)
            try:
                cluster.start()
            except Exception:
                cluster.destroy()
                raise
            _shared = cluster
            config.add_cleanup(_destroy)
        _shared.reapply()
        return _shared


def _destroy() -> None:
    global _shared
    with _lock:
        cluster, _shared = _shared, None
    if cluster is not None:
        cluster.destroy()
