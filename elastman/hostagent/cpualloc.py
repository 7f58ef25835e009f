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
"""Adaptive CPU allocation between latency-critical and best-effort VMs
(Guo's thesis, Ch. 3-5: UIPT, hill climbing, fuzzy control, sharing policies).

Each VM has a tenant controller that turns, once per measurement interval,
its recent performance into a CPU request (in effective cores); a master
shares the host's cores by policy and the agent applies the result as CPU
quotas.

* Best-effort VMs: the thesis' allocation algorithm on UIPT (user-level
  instructions per second; where the host has no PMU, CPU time per second
  stands in, which the thesis shows to be a weaker proxy): hill climbing
  (Algorithm 2) or fuzzy control (Algorithms 3 and 4) as the inner
  controller, with the multi-interval corrector, the greedy core reduction
  and the AIMD reaction to large changes, all with Table 4.2's defaults.
* Latency-critical VMs: the same AIMD structure on the SLO colour instead of
  UIPT (a latency-critical service at its UIPT knee runs at the utilisation
  where its tail latency breaks): yellow or red asks for a corrector step
  more at once, and at least the VM's guarantee (Ch. 5.2.3: its own
  size, the cores it lent while it needed less come back in one step, not
  a step at a time); green for a multi-interval window gives back a step
  (at most a core) while the VM keeps a corrector step and a tenth of that
  peak idle after the removal above the most it used in the corrector's
  span, its last two windows (6 intervals): the demand of a bursty service
  is its recent peak, not its last interval's use, and its bursts grow
  with it (greedy reduction: on host-bench's scenario C, seeds 1-10 and
  42, a yellow or red followed within 3 s 62% of the removals that
  left under 1 core idle in the last interval, 40% of those that left 1-2,
  28% for 2-3); grey holds. A VM never asks for more than its vCPUs, which
  is all it can run on. Table 4.2's corrector step of 2 cores was set for
  workloads given up to 32 cores; a VM's step is :data:`STEP_SHARE` of its
  vCPUs, at most those 2 cores, so that a VM of 3 vCPUs or fewer lends
  too.
* Master: the priority policy (Ch. 5.2.2) with the guarantee policy's floor
  (Ch. 5.2.3): latency-critical requests first, each VM at least its
  ``floor``; best-effort VMs share what is left by weighted max-min
  (Algorithm 5).

Table 4.2 (measurement interval 1 s; greedy reduction threshold -0.01;
demand change threshold 0.5; hill-climbing change threshold 0.04; fuzzy
gains g_dy = 12, g_du = 1, g_dC = 1; multi-interval corrector: 2 cores,
a window of 3 intervals, change threshold 0.1) is :data:`TABLE_4_2`.
"""
from __future__ import annotations

import collections
import dataclasses
import random
from typing import Mapping

TABLE_4_2 = {
    'interval_s': 1.0,
    'greedy_threshold': -0.01,
    'demand_threshold': 0.5,
    'search_threshold': 0.04,
    'fuzzy_gdy': 12.0, 'fuzzy_gdu': 1.0, 'fuzzy_gdc': 1.0,
    'corrector_cores': 2.0,
    'corrector_window': 3,
    'corrector_threshold': 0.1,
}


def hill_climbing(dy: float, du: float, threshold: float) -> float:
    """Algorithm 1: one step in the direction that helped."""
    sign = 1.0 if du >= 0 else -1.0
    if dy > threshold:
        return sign
    if dy < -threshold:
        return -sign
    return 0.0


def _tri(x: float, centre: float, half: float) -> float:
    return max(0.0, 1.0 - abs(x - centre) / half)


def fuzzy(dy: float, du: float, gdy: float = 12.0, gdu: float = 1.0,
          gdc: float = 1.0) -> float:
    """Algorithms 3-4: Table 4.1's eight rules, min inference, weighted
    average of the consequents' centres (+-1, +-2).
    """
    x = max(-1.0, min(1.0, du * gdu))
    inc_c, dec_c = _tri(x, 1.0, 2.0), _tri(x, -1.0, 2.0)
    y = max(-2.0, min(2.0, dy * gdy))
    inc = _tri(y, 1.0, 1.0)
    dec = _tri(y, -1.0, 1.0)
    inc_l = 1.0 if y >= 2.0 else _tri(y, 2.0, 1.0)
    dec_l = 1.0 if y <= -2.0 else _tri(y, -2.0, 1.0)
    rules = [(min(inc_c, inc), 1.0), (min(inc_c, dec), -1.0),
             (min(dec_c, dec), 1.0), (min(dec_c, inc), -1.0),
             (min(inc_c, inc_l), 2.0), (min(inc_c, dec_l), -2.0),
             (min(dec_c, dec_l), 2.0), (min(dec_c, inc_l), -2.0)]
    weight = sum(w for w, _ in rules)
    if weight <= 0:
        return 0.0
    return round(sum(w * c for w, c in rules) / weight * gdc)


#: Share of a latency-critical VM's recent peak use that a removal leaves
#: idle on top of the corrector's step: its bursts grow with its load.
PEAK_MARGIN = 0.1

#: A latency-critical VM's corrector step as a share of its vCPUs, at most
#: Table 4.2's 2 cores (2 of 16 vCPUs); what it gives back at a time is the
#: step, at most a core.
STEP_SHARE = 1.0 / 8


class UiptTenant:
    """A best-effort VM's request from its UIPT (Algorithm 2 or 3)."""

    def __init__(self, cores: float, min_cores: float = 0.1,
                 max_cores: float = float('inf'),
                 algorithm: str = 'hill_climbing', params: Mapping | None = None,
                 rng: random.Random | None = None) -> None:
        self.p = dict(TABLE_4_2, **(params or {}))
        self.algorithm = algorithm
        self.min_cores = min_cores
        self.max_cores = max_cores
        self.request = cores
        self.rng = rng or random.Random(0)
        self.history: list[tuple[float, float]] = []   # (cores, uipt)
        self.intervals = 0      # intervals recorded, the corrector's clock

    def update(self, cores: float, uipt: float) -> float:
        """Record the interval's (allocated cores, UIPT); the next request."""
        self.history.append((cores, uipt))
        self.history = self.history[-2 * self.p['corrector_window']:]
        self.intervals += 1
        dc = self._step()
        self.request = min(self.max_cores, max(self.min_cores, cores + dc))
        return self.request

    def _step(self) -> float:
        h, w = self.history, self.p['corrector_window']
        if len(h) < 2:
            return 0.0
        (c0, p0), (c1, p1) = h[-2], h[-1]
        dy_now = (p1 - p0) / p0 if p0 > 0 else 0.0
        if self.intervals >= 2 * w and self.intervals % w == 0:
            # multi-interval corrector: means of the last two windows
            old, new = h[-2 * w:-w], h[-w:]
            pu = sum(p for _, p in old) / w
            pn = sum(p for _, p in new) / w
            cu = sum(c for c, _ in old) / w
            cn = sum(c for c, _ in new) / w
            dy = (pn - pu) / pu if pu > 0 else 0.0
            dc = self.p['corrector_cores'] * hill_climbing(
                dy, cn - cu, self.p['corrector_threshold'])
        elif c1 == c0:
            dc = self.rng.choice((-1.0, 0.0, 1.0))
        else:
            du = c1 - c0
            if self.algorithm == 'fuzzy':
                dc = fuzzy(dy_now, du, self.p['fuzzy_gdy'], self.p['fuzzy_gdu'],
                           self.p['fuzzy_gdc'])
            else:
                dc = hill_climbing(dy_now, du, self.p['search_threshold'])
            if dc == 0 and du < 0 and dy_now > self.p['greedy_threshold']:
                dc = -1.0
        # AIMD on a large change in UIPT (the workload changed)
        if dy_now > self.p['demand_threshold']:
            dc = self.p['corrector_cores']
        elif dy_now < -self.p['demand_threshold']:
            dc = -c1 / 2.0
        return dc


class SloTenant:
    """A latency-critical VM's request from its SLO colour.

    ``ceiling`` is the most the VM can use (its vCPUs, at most its node's
    CPUs); ``cores``, its guarantee, is what it gets back at once when it
    turns yellow or red (at most the ceiling). Its corrector step is
    :data:`STEP_SHARE` of the ceiling, at most Table 4.2's; a removal gives
    back the step, at most a core, and must leave a step and
    :data:`PEAK_MARGIN` of the peak idle above the peak of the cores used
    over the corrector's span (two windows: ``2 * corrector_window``
    intervals).
    """

    def __init__(self, cores: float, floor: float, ceiling: float,
                 params: Mapping | None = None) -> None:
        self.p = dict(TABLE_4_2, **(params or {}))
        self.ceiling = ceiling
        self.floor = min(floor, ceiling)
        self.guarantee = min(cores, ceiling)
        self.step = min(self.p['corrector_cores'], STEP_SHARE * ceiling)
        self.unit = min(1.0, self.step)
        self.request = self.guarantee
        self._green = 0
        self._used: collections.deque[float] = collections.deque(
            maxlen=2 * int(self.p['corrector_window']))

    def danger(self) -> float:
        """Yellow or red now (between intervals, at the poll's pace): the
        corrector's step, and at least the guarantee.
        """
        self._green = 0
        self.request = min(self.ceiling, max(
            self.request + self.step, self.guarantee))
        return self.request

    def peak_used(self) -> float:
        """The most cores used in an interval of the corrector's span."""
        return max(self._used, default=0.0)

    def update(self, colour: str, used_cores: float) -> float:
        self._used.append(used_cores)
        if colour in ('yellow', 'red'):
            return self.danger()
        if colour == 'green':
            self._green += 1
            # the removal must leave a corrector step and a tenth of the
            # peak idle above the peak
            room = self.unit + self.step + PEAK_MARGIN * self.peak_used()
            if self._green >= self.p['corrector_window'] and \
                    self.peak_used() < self.request - room:
                self.request = max(self.floor, self.request - self.unit)
                self._green = 0
        else:
            self._green = 0
        return self.request


def weighted_max_min(total: float, requests: Mapping[str, float],
                     weights: Mapping[str, float] | None = None
                     ) -> dict[str, float]:
    """Algorithm 5: the most equal weighted shares that meet the requests."""
    weights = weights or {k: 1.0 for k in requests}
    alloc = {k: 0.0 for k in requests}
    available = total
    while available > 1e-9:
        hungry = [k for k in requests if alloc[k] < requests[k] - 1e-9]
        weight = sum(weights[k] for k in hungry)
        if not hungry or weight <= 0:
            break
        unit = available / weight
        for k in hungry:
            delta = min(unit * weights[k], requests[k] - alloc[k])
            alloc[k] += delta
            available -= delta
    return alloc


@dataclasses.dataclass
class Allocation:
    cores: dict[str, float]
    requests: dict[str, float]


def allocate(total: float, lc_requests: Mapping[str, float],
             be_requests: Mapping[str, float],
             floors: Mapping[str, float] | None = None,
             be_weights: Mapping[str, float] | None = None) -> Allocation:
    """Priority with floors: every VM first gets its floor (guarantee),
    latency-critical requests next, best-effort VMs share the rest.
    """
    floors = dict(floors or {})
    cores = {k: min(floors.get(k, 0.0), r) for k, r in
             {**lc_requests, **be_requests}.items()}
    left = total - sum(cores.values())
    for vm, req in sorted(lc_requests.items(), key=lambda kv: -kv[1]):
        extra = max(0.0, min(req - cores[vm], left))
        cores[vm] += extra
        left -= extra
    share = weighted_max_min(max(0.0, left),
                             {k: max(0.0, r - cores[k])
                              for k, r in be_requests.items()}, be_weights)
    for vm, extra in share.items():
        cores[vm] += extra
    return Allocation(cores, {**lc_requests, **be_requests})


class HostAllocator:
    """The agent's allocator: tenants per VM, a master per NUMA node.

    ``interval(vms, colours)`` takes ``{vm: {'class', 'node', 'vcpus',
    'cores', 'used', 'perf'}}`` (``cores``: the CPU it was allowed, ``used``:
    the CPU it used and ``perf``: its UIPT, or its CPU time per second where
    the host has no PMU, over the interval; an LC VM may also have a
    ``guarantee`` below its vCPUs, which is its size by default) and the LC
    VMs' colours; it returns the best-effort VMs' new caps in cores. Between intervals,
    ``danger(vms)`` answers a latency-critical VM that turned yellow or red
    at once (Table 4.2's corrector step). Latency-critical VMs are not
    capped: their share is what the best-effort VMs on their node are not
    given.
    """

    def __init__(self, node_cpus: Mapping[int, int], algorithm: str =
                 'hill_climbing', be_floor: float = 0.1,
                 params: Mapping | None = None) -> None:
        self.node_cpus = dict(node_cpus)
        self.algorithm = algorithm
        self.be_floor = be_floor
        self.params = dict(params or {})
        self.lc: dict[str, SloTenant] = {}
        self.be: dict[str, UiptTenant] = {}
        self.rng = random.Random(0)
        self._node_of: dict[str, int] = {}

    def forget(self, vm: str) -> None:
        self.lc.pop(vm, None)
        self.be.pop(vm, None)
        self._node_of.pop(vm, None)

    def _allocate(self, node: int) -> dict[str, float]:
        """The best-effort caps on ``node`` from the tenants' requests."""
        here = [vm for vm, n in self._node_of.items() if n == node]
        lc_req = {vm: self.lc[vm].request for vm in here if vm in self.lc}
        be_req = {vm: self.be[vm].request for vm in here if vm in self.be}
        if not be_req:
            return {}
        floors = {vm: min(1.0, r) for vm, r in lc_req.items()}
        floors.update({vm: self.be_floor for vm in be_req})
        alloc = allocate(float(self.node_cpus[node]), lc_req, be_req, floors)
        return {vm: alloc.cores[vm] for vm in be_req}

    def danger(self, vms) -> dict[str, float]:
        """Latency-critical ``vms`` turned yellow or red between intervals
        (at BALM's poll pace): each asks for ``corrector_cores`` more and
        at least its guarantee (:meth:`SloTenant.danger`), and the
        best-effort VMs of their nodes get the caps that leaves.
        """
        nodes = set()
        for vm in vms:
            if vm in self.lc and vm in self._node_of:
                self.lc[vm].danger()
                nodes.add(self._node_of[vm])
        caps: dict[str, float] = {}
        for node in sorted(nodes):
            caps.update(self._allocate(node))
        return caps

    def interval(self, vms: Mapping[str, Mapping],
                 colours: Mapping[str, str]) -> dict[str, float]:
        caps: dict[str, float] = {}
        self._node_of = {vm: v['node'] for vm, v in vms.items()
                         if v['node'] in self.node_cpus}
        for node, total in self.node_cpus.items():
            here = {vm: v for vm, v in vms.items() if v['node'] == node}
            for vm, v in here.items():
                if v['class'] == 'latency-critical':
                    tenant = self.lc.setdefault(vm, SloTenant(
                        float(v.get('guarantee', v['vcpus'])), floor=1.0,
                        ceiling=float(min(total, v['vcpus'])),
                        params=self.params))
                    tenant.update(colours.get(vm, 'grey'), v['used'])
                else:
                    tenant = self.be.setdefault(vm, UiptTenant(
                        v['cores'], min_cores=self.be_floor,
                        max_cores=float(min(total, v['vcpus'])),
                        algorithm=self.algorithm, params=self.params,
                        rng=self.rng))
                    tenant.update(v['cores'], v['perf'])
            caps.update(self._allocate(node))
        return caps
