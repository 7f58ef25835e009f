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
"""Host topology: NUMA nodes, their CPUs and memory, resctrl MBA/MBM support."""
from __future__ import annotations

import dataclasses
import os


@dataclasses.dataclass
class NumaNode:
    id: int
    cpus: list[int]
    memory_kib: int = 0
    distances: list[int] = dataclasses.field(default_factory=list)
    socket: int | None = None


@dataclasses.dataclass
class ResctrlInfo:
    """What resctrl offers; ``mba`` False when not mounted or unsupported."""

    mounted: bool = False
    mba: bool = False
    mba_min: int = 100
    mba_granularity: int = 10
    mba_delay_linear: bool = True
    num_closids: int = 0
    mbm_total: bool = False
    mbm_local: bool = False


@dataclasses.dataclass
class Topology:
    nodes: dict[int, NumaNode]
    resctrl: ResctrlInfo

    def node_of_cpu(self, cpu: int) -> int | None:
        for node in self.nodes.values():
            if cpu in node.cpus:
                return node.id
        return None

    @property
    def node_ids(self) -> list[int]:
        return sorted(self.nodes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def parse_cpulist(text: str) -> list[int]:
    """'0-3,8,10-11' -> [0, 1, 2, 3, 8, 10, 11]."""
    cpus: list[int] = []
    for part in text.strip().split(','):
        part = part.strip()
        if not part:
            continue
        if '-' in part:
            lo, hi = part.split('-', 1)
            cpus.extend(range(int(lo), int(hi) + 1))
        else:
            cpus.append(int(part))
    return cpus


def format_cpulist(cpus) -> str:
    """[0, 1, 2, 5] -> '0-2,5' (libvirt and sysfs syntax)."""
    cpus = sorted(set(cpus))
    out, start, prev = [], None, None
    for c in cpus + [None]:
        if start is None:
            start = prev = c
        elif c is not None and c == prev + 1:
            prev = c
        else:
            out.append(str(start) if start == prev else '%d-%d' % (start, prev))
            start = prev = c
    return ','.join(out)


def _read(path: str, default: str = '') -> str:
    try:
        with open(path, encoding='ascii') as f:
            return f.read().strip()
    except OSError:
        return default


def read_numa_nodes(sysfs_root: str = '/sys') -> dict[int, NumaNode]:
    base = os.path.join(sysfs_root, 'devices', 'system', 'node')
    nodes: dict[int, NumaNode] = {}
    try:
        entries = os.listdir(base)
    except OSError:
        entries = []
    for entry in entries:
        if not (entry.startswith('node') and entry[4:].isdigit()):
            continue
        nid = int(entry[4:])
        path = os.path.join(base, entry)
        cpus = parse_cpulist(_read(os.path.join(path, 'cpulist')))
        mem = 0
        for line in _read(os.path.join(path, 'meminfo')).splitlines():
            if 'MemTotal:' in line:
                mem = int(line.split()[-2])
        dist = [int(x) for x in _read(os.path.join(path, 'distance')).split()]
        socket = None
        if cpus:
            pkg = _read(os.path.join(sysfs_root, 'devices', 'system', 'cpu',
                                     'cpu%d' % cpus[0], 'topology',
                                     'physical_package_id'))
            socket = int(pkg) if pkg.lstrip('-').isdigit() else None
        nodes[nid] = NumaNode(nid, cpus, mem, dist, socket)
    if not nodes:  # no NUMA in the kernel: one node with every online CPU
        online = _read(os.path.join(sysfs_root, 'devices', 'system', 'cpu',
                                    'online'), '0')
        nodes[0] = NumaNode(0, parse_cpulist(online), 0, [10], 0)
    return nodes


def read_resctrl(resctrl_root: str = '/sys/fs/resctrl') -> ResctrlInfo:
    info = ResctrlInfo()
    if not os.path.isdir(os.path.join(resctrl_root, 'info')):
        return info
    info.mounted = True
    mb = os.path.join(resctrl_root, 'info', 'MB')
    if os.path.isdir(mb):
        info.mba = True
        info.mba_min = int(_read(os.path.join(mb, 'min_bandwidth'), '10'))
        info.mba_granularity = int(_read(os.path.join(mb, 'bandwidth_gran'),
                                         '10'))
        info.mba_delay_linear = _read(os.path.join(mb, 'delay_linear'),
                                      '1') == '1'
        info.num_closids = int(_read(os.path.join(mb, 'num_closids'), '0'))
    mon = _read(os.path.join(resctrl_root, 'info', 'L3_MON', 'mon_features'))
    info.mbm_total = 'mbm_total_bytes' in mon
    info.mbm_local = 'mbm_local_bytes' in mon
    return info


def discover(sysfs_root: str = '/sys',
             resctrl_root: str = '/sys/fs/resctrl') -> Topology:
    """Read the host topology from sysfs and resctrl."""
    return Topology(read_numa_nodes(sysfs_root), read_resctrl(resctrl_root))
