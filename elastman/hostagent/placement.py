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
"""Placement of a domain once it runs, through libvirt-python.

* latency-critical: vCPUs and the emulator pinned to the CPUs of one NUMA
  node (the least loaded by other LC VMs), memory strictly on that node;
* best-effort: vCPUs and emulator on the CPUs of the node with the fewest LC
  VMs (all threads of a VM on one socket, as BALM assumes), a vCPU quota,
  memory allowed on every node (so BALM can move pages across sockets), and
  an MBA class of service (resctrl group) when MBA exists.

Live tuning only (``VIR_DOMAIN_AFFECT_LIVE``): nothing in the persistent
definition changes, and Nova stays the owner of the domain XML. Memory
binding of a running domain can only change its ``nodeset``, not its mode.
"""
from __future__ import annotations

import dataclasses

from oslo_log import log as logging

from elastman.hostagent import domains as dom_mod
from elastman.hostagent import topology as topo_mod

LOG = logging.getLogger(__name__)

AFFECT_LIVE = 1  # libvirt.VIR_DOMAIN_AFFECT_LIVE


@dataclasses.dataclass
class Decision:
    vm_class: str
    node: int | None
    cpus: list[int]
    emulator_cpus: list[int]
    memory_nodes: list[int]
    vcpu_quota: int
    mba: int | None = None

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def decide(domain: dom_mod.Domain, topology: topo_mod.Topology,
           lc_per_node: dict[int, int], lc_quota: int = -1,
           be_quota: int = 50000) -> Decision:
    """Where a domain should run (pure function, no libvirt)."""
    nodes = [n for n in topology.node_ids if topology.nodes[n].cpus]
    all_cpus = sorted(c for n in nodes for c in topology.nodes[n].cpus)
    if domain.latency_critical:
        node = min(nodes, key=lambda n: (lc_per_node.get(n, 0), n))
        cpus = list(topology.nodes[node].cpus)
        return Decision(dom_mod.LATENCY_CRITICAL, node, cpus, cpus, [node],
                        lc_quota)
    node = min(nodes, key=lambda n: (lc_per_node.get(n, 0), -n))
    cpus = list(topology.nodes[node].cpus) or all_cpus
    return Decision(dom_mod.BEST_EFFORT, node, cpus, cpus,
                    topology.node_ids, be_quota, mba=100)


def _cpumap(cpus: list[int], host_cpus: int) -> tuple[bool, ...]:
    return tuple(i in cpus for i in range(host_cpus))


def apply(conn, domain: dom_mod.Domain, decision: Decision) -> dict:
    """Apply a decision to the running domain; returns what was set."""
    import libvirt
    dom = conn.lookupByUUIDString(domain.uuid)
    host_cpus = conn.getInfo()[2]
    cpumap = _cpumap(decision.cpus, host_cpus)
    applied: dict = {}
    nvcpus = dom.vcpusFlags(libvirt.VIR_DOMAIN_AFFECT_LIVE)
    for vcpu in range(nvcpus):
        dom.pinVcpuFlags(vcpu, cpumap, AFFECT_LIVE)
    applied['vcpupin'] = topo_mod.format_cpulist(decision.cpus)
    dom.pinEmulator(_cpumap(decision.emulator_cpus, host_cpus), AFFECT_LIVE)
    applied['emulatorpin'] = topo_mod.format_cpulist(decision.emulator_cpus)
    params = {'vcpu_quota': decision.vcpu_quota}
    try:
        dom.setSchedulerParametersFlags(params, AFFECT_LIVE)
        applied['vcpu_quota'] = decision.vcpu_quota
    except libvirt.libvirtError as exc:
        LOG.warning('%s: cannot set vcpu_quota: %s', domain.name, exc)
    nodeset = topo_mod.format_cpulist(decision.memory_nodes)
    try:
        dom.setNumaParameters({'numa_nodeset': nodeset}, AFFECT_LIVE)
        applied['numa_nodeset'] = nodeset
    except libvirt.libvirtError as exc:
        # e.g. a domain started without <numatune>: not fatal
        LOG.info('%s: numa_nodeset not changed: %s', domain.name, exc)
    return applied


def qemu_pid(domain: dom_mod.Domain, run_dir: str = '/run/libvirt/qemu') -> int | None:
    """PID of the domain's QEMU process from libvirt's pid file."""
    import os
    path = os.path.join(run_dir, domain.name + '.pid')
    try:
        with open(path, encoding='ascii') as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


class DomainOps:
    """Live CPU changes to running domains: the ladder's CPU rungs and the
    adaptive CPU allocation.

    A VM's ``vcpu_quota`` is its full quota times the ladder's share. The
    full quota is the allocator's cap when it set one, else the quota the
    VM was placed with (``quotas``; -1: unlimited, a period's worth once a
    share below 1 applies).
    """

    PERIOD = 100000

    def __init__(self, connect, topology: topo_mod.Topology) -> None:
        self.connect = connect
        self.topology = topology
        self.quotas: dict[str, int] = {}
        self.caps: dict[str, int] = {}
        self.shares: dict[str, float] = {}

    def forget(self, uuid: str) -> None:
        for d in (self.quotas, self.caps, self.shares):
            d.pop(uuid, None)

    def quota_of(self, uuid: str) -> int:
        """The vcpu_quota the VM should have now (-1: unlimited)."""
        full = self.caps.get(uuid) or max(self.quotas.get(uuid, -1), -1)
        share = self.shares.get(uuid, 1.0)
        if full <= 0:
            if share >= 1.0:
                return -1
            full = self.PERIOD
        return max(1000, int(round(full * min(1.0, share))))

    def _apply(self, uuid: str) -> int:
        quota = self.quota_of(uuid)
        dom = self.connect().lookupByUUIDString(uuid)
        dom.setSchedulerParametersFlags(
            {'vcpu_quota': quota, 'vcpu_period': self.PERIOD}, AFFECT_LIVE)
        return quota

    def set_cpu_share(self, uuid: str, share: float) -> int:
        """The ladder's throttle: ``share`` of the full quota."""
        self.shares[uuid] = float(share)
        return self._apply(uuid)

    def set_cap(self, uuid: str, cores: float, vcpus: int) -> int:
        """The allocator's cap: ``cores`` for the whole VM."""
        self.caps[uuid] = max(1000, int(round(
            cores / max(1, vcpus) * self.PERIOD)))
        return self._apply(uuid)

    def cap_cores(self, uuid: str, vcpus: int, node_cpus: int) -> float:
        """The cores the VM may use now (its full quota, not the share)."""
        full = self.caps.get(uuid) or self.quotas.get(uuid, -1)
        if full <= 0:
            return float(min(vcpus, node_cpus))
        return full / self.PERIOD * vcpus

    def pin_to_node(self, uuid: str, node: int) -> list[int]:
        """Pin every vCPU and the emulator to the CPUs of ``node``."""
        import libvirt
        conn = self.connect()
        dom = conn.lookupByUUIDString(uuid)
        cpus = list(self.topology.nodes[node].cpus)
        cpumap = _cpumap(cpus, conn.getInfo()[2])
        for vcpu in range(dom.vcpusFlags(libvirt.VIR_DOMAIN_AFFECT_LIVE)):
            dom.pinVcpuFlags(vcpu, cpumap, AFFECT_LIVE)
        dom.pinEmulator(cpumap, AFFECT_LIVE)
        return cpus
