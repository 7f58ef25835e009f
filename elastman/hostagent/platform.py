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
"""What the bandwidth controller needs from a host, and the Linux implementation.

:class:`Platform` is implemented by :class:`LinuxPlatform` (resctrl MBA and
MBM files, /proc numa_maps, move_pages on the QEMU process) and by
:class:`elastman.evaluation.hostsim.SimulatedHost`.
"""
from __future__ import annotations

import abc
import time
from typing import Mapping

from oslo_log import log as logging

from elastman.hostagent import bwap
from elastman.hostagent import pagemigration
from elastman.hostagent import resctrl

LOG = logging.getLogger(__name__)


class Platform(abc.ABC):
    """Host operations used by BALM; ``vm`` is a domain UUID (or sim name)."""

    @abc.abstractmethod
    def now(self) -> float:
        """Seconds, monotonic (simulated time on the simulator)."""

    @abc.abstractmethod
    def nodes(self) -> list[int]:
        """Memory node ids."""

    @abc.abstractmethod
    def home_node(self, vm: str) -> int:
        """The node the VM's vCPUs run on."""

    @abc.abstractmethod
    def get_mba(self, vm: str) -> int:
        """Current MBA level (percent, 100 = unthrottled)."""

    @abc.abstractmethod
    def set_mba(self, vm: str, level: int) -> None:
        """Set the MBA level of the VM's class of service."""

    @abc.abstractmethod
    def node_bandwidth(self, vm: str) -> dict[int, float]:
        """Recent memory traffic of the VM per memory node, bytes/s (MBM)."""

    @abc.abstractmethod
    def page_distribution(self, vm: str) -> dict[int, float]:
        """Bytes of the VM's memory on each node."""

    @abc.abstractmethod
    def migrate(self, vm: str, src: int, dst: int, nbytes: float) -> float:
        """Start moving up to ``nbytes`` of the VM's pages src -> dst.

        Returns the bytes that will move (0 when none are left on src).
        """

    def migration_busy(self, vm: str) -> bool:
        """True while a started batch is still moving (asynchronous hosts)."""
        return False

    def allowed_nodes(self, vm: str) -> list[int]:
        """Nodes the VM's memory may use (its numatune nodeset)."""
        return self.nodes()

    def has_mba(self) -> bool:
        """Whether MBA levels can be set (resctrl MB)."""
        return True

    def get_cpu_share(self, vm: str) -> float | None:
        """The VM's CPU quota as a fraction of its placement quota (1.0 =
        as placed); None when this host cannot change it.
        """
        return None

    def set_cpu_share(self, vm: str, share: float) -> None:
        """Set the VM's CPU quota to ``share`` of its placement quota."""
        raise NotImplementedError

    def cpu_nodes(self) -> list[int]:
        """Nodes with CPUs a VM's vCPUs may be pinned to."""
        return self.nodes()

    def can_repin(self, vm: str) -> bool:
        """Whether the VM's vCPUs may be moved to another node."""
        return False

    def repin(self, vm: str, node: int) -> None:
        """Move the VM's vCPUs and emulator to the CPUs of ``node``."""
        raise NotImplementedError

    def bandwidth_matrix(self) -> dict[int, dict[int, float]]:
        """bw[src][dst], bytes/s; default: remote at half the local bandwidth."""
        return {s: {d: (1.0 if s == d else 0.5) for d in self.nodes()}
                for s in self.nodes()}

    def target_weights(self, vm: str) -> dict[int, float]:
        """The VM's BWAP canonical weights over its allowed nodes."""
        return bwap.canonical_weights(self.bandwidth_matrix(),
                                      [self.home_node(vm)],
                                      self.allowed_nodes(vm))


class LinuxPlatform(Platform):
    """The real host: resctrl groups per best-effort VM, move_pages on QEMU,
    CPU quota and vCPU pinning through libvirt (``domain_ops``).

    ``vms`` maps a VM id to ``{'pid': qemu pid, 'home': node,
    'allowed': [nodes]}``; the manager keeps it current. ``domain_ops`` (a
    :class:`elastman.hostagent.placement.DomainOps`) changes running domains;
    without it the CPU rungs are not available.
    """

    def __init__(self, topology, resctrl_groups: resctrl.ResctrlManager | None,
                 vms: Mapping[str, dict] | None = None,
                 bw_matrix: dict[int, dict[int, float]] | None = None,
                 domain_ops=None) -> None:
        self.topology = topology
        self.resctrl = resctrl_groups
        self.vms: dict[str, dict] = dict(vms or {})
        self._bw_matrix = bw_matrix
        self._mba: dict[str, int] = {}
        self._mbm_prev: dict[str, tuple[float, dict[int, int]]] = {}
        self.domain_ops = domain_ops
        self.last_error: str | None = None

    def has_mba(self) -> bool:
        return self.resctrl is not None and self.resctrl.info.mba

    def get_cpu_share(self, vm: str) -> float | None:
        if self.domain_ops is None or vm not in self.vms:
            return None
        return self.vms[vm].get('cpu_share', 1.0)

    def set_cpu_share(self, vm: str, share: float) -> None:
        self.domain_ops.set_cpu_share(vm, share)
        self.vms[vm]['cpu_share'] = share

    def cpu_nodes(self) -> list[int]:
        return [n for n in self.nodes() if self.topology.nodes[n].cpus]

    def can_repin(self, vm: str) -> bool:
        return self.domain_ops is not None and vm in self.vms and \
            len(self.cpu_nodes()) > 1

    def repin(self, vm: str, node: int) -> None:
        self.domain_ops.pin_to_node(vm, node)
        self.vms[vm]['home'] = node

    def now(self) -> float:
        return time.monotonic()

    def nodes(self) -> list[int]:
        return self.topology.node_ids

    def home_node(self, vm: str) -> int:
        return self.vms[vm]['home']

    def allowed_nodes(self, vm: str) -> list[int]:
        return self.vms[vm].get('allowed') or self.nodes()

    def bandwidth_matrix(self) -> dict[int, dict[int, float]]:
        if self._bw_matrix:
            return self._bw_matrix
        # distances from sysfs: bandwidth taken as inversely proportional.
        out = {}
        for s, node in self.topology.nodes.items():
            row = {}
            for d in self.nodes():
                dist = node.distances[d] if d < len(node.distances) else 20
                row[d] = 10.0 / max(dist, 10)
            out[s] = row
        return out

    def get_mba(self, vm: str) -> int:
        return self._mba.get(vm, 100)

    def set_mba(self, vm: str, level: int) -> None:
        if self.resctrl is None or not self.resctrl.info.mba:
            self._mba[vm] = 100
            return
        self.resctrl.set_mba(vm, level)
        self._mba[vm] = level

    def node_bandwidth(self, vm: str) -> dict[int, float]:
        if self.resctrl is None or not self.resctrl.info.mbm_total:
            return {n: 0.0 for n in self.nodes()}
        now = time.monotonic()
        counters = self.resctrl.read_mbm(vm)
        prev = self._mbm_prev.get(vm)
        self._mbm_prev[vm] = (now, counters)
        if prev is None or now <= prev[0]:
            return {n: 0.0 for n in self.nodes()}
        dt = now - prev[0]
        return {n: max(0, counters.get(n, 0) - prev[1].get(n, 0)) / dt
                for n in self.nodes()}

    def page_distribution(self, vm: str) -> dict[int, float]:
        pid = self.vms[vm]['pid']
        try:
            return {n: float(b) for n, b in
                    pagemigration.numa_maps_bytes(pid).items()}
        except OSError as exc:
            self.last_error = 'numa_maps of %s: %s' % (vm, exc)
            return {}

    def migrate(self, vm: str, src: int, dst: int, nbytes: float) -> float:
        """One batch; 0 (and ``last_error``) when the kernel refuses, e.g.
        a destination node this host does not have.
        """
        pid = self.vms[vm].get('pid')
        if not pid:
            return 0.0
        try:
            return float(pagemigration.move_batch(pid, src, dst,
                                                  int(nbytes)))
        except OSError as exc:
            self.last_error = 'move_pages %s %d->%d: %s' % (
                vm, src, dst, exc)
            LOG.warning('page migration of %s refused: %s', vm, exc)
            return 0.0
