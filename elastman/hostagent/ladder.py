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
"""The host agent's escalation ladder: what it can do to a best-effort VM,
cheapest first (Merlin's cost ranking: cap CPU < move vCPUs < migrate
memory; then leave the host).

========================= ========= =========================================
rung                      cost (ms) what one step is
========================= ========= =========================================
``mba``                   0.01      one MBA level of the VM's resctrl class of
                                    service (a ``schemata`` write)
``cpu_quota``             0.1       the VM's vCPU quota (libvirt
                                    ``schedinfo``, a cgroup write), an indirect
                                    limit on its cache and memory traffic
``vcpu_pin``              1         its vCPUs and emulator re-pinned to the
                                    CPUs of another NUMA node (a few µs per
                                    vCPU, then its caches refill)
``page_migration``        28        one batch of its pages moved away from the
                                    victim node (``move_pages``; 256 MiB =
                                    65,536 pages at 430 ns each, plus twice
                                    that much memory traffic)
``live_migration``        10,000    a recommendation to the actuator to live-
                                    migrate it to another host through Nova
                                    (carried out only with ``[actuator]
                                    live_migrate_on_escalation``)
========================= ========= =========================================

The costs are host work per step, from Merlin's measurements (a vCPU move
1.78 µs, a 4 KiB page copy 430 ns) and the size of one step; they rank the
rungs and add up in the controller's statistics (``stats.cost_ms``).

Repercussion checks (Merlin's "hurt" to co-runners), on the colours of the
latency-critical VMs per node: before a vCPU re-pin, the target node's
latency-critical VMs must be green and the VM must have at least as much
memory on the target node as on its current one (a VM whose memory stays
behind is sensitive to the move); before a page batch, the destination must
not be the victim. After a re-pin or a page batch, a node other than the
victim that turned yellow or red (red only, in the paper's BALM mode) undoes
the step; a re-pin is also undone when the host's colour got worse. Phase
1's throttles are not checked.
"""
from __future__ import annotations

import dataclasses

THROTTLE, RELOCATE, ESCALATE = 'throttle', 'relocate', 'escalate'


@dataclasses.dataclass(frozen=True)
class Rung:
    name: str
    kind: str
    cost_ms: float
    what: str


RUNGS: tuple[Rung, ...] = (
    Rung('mba', THROTTLE, 0.01,
         'one MBA level of the VM\'s resctrl class of service'),
    Rung('cpu_quota', THROTTLE, 0.1,
         'the vCPU quota of the VM (libvirt schedinfo)'),
    Rung('vcpu_pin', RELOCATE, 1.0,
         'the VM\'s vCPUs and emulator re-pinned to another NUMA node'),
    Rung('page_migration', RELOCATE, 28.0,
         'one 256 MiB batch of the VM\'s pages moved off the victim node'),
    Rung('live_migration', ESCALATE, 10000.0,
         'a recommendation to live-migrate the VM away through Nova'),
)
BY_NAME = {r.name: r for r in RUNGS}
NAMES = tuple(r.name for r in RUNGS)

#: the rungs of each controller mode: BALM as published (MBA and page
#: migration), its two baselines, and the full ladder
MODE_RUNGS = {
    'balm': ('mba', 'page_migration', 'live_migration'),
    'mba': ('mba', 'live_migration'),
    'pgm': ('page_migration', 'live_migration'),
    'ladder': NAMES,
    'off': (),
}


def ordered(names) -> tuple[str, ...]:
    """``names`` in the ladder's cost order; ValueError names an unknown one."""
    unknown = set(names) - set(NAMES)
    if unknown:
        raise ValueError('unknown ladder rung(s) %s (known: %s)'
                         % (', '.join(sorted(unknown)), ', '.join(NAMES)))
    return tuple(n for n in NAMES if n in set(names))


def step_cost(name: str, nbytes: float = 0.0) -> float:
    """Host cost of one step; a page batch scales with the bytes moved."""
    rung = BY_NAME[name]
    if name == 'page_migration':
        return rung.cost_ms * nbytes / float(256 * 2 ** 20)
    return rung.cost_ms
