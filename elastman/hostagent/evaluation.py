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
"""BALM against its baselines on the simulated dual-socket host (BALM, Sec. IV).

Scenario (the paper's motivating case): a latency-critical VM on socket 0
whose load rises in phases from 10% to 100% of its max load, beside a
bandwidth-heavy best-effort VM on socket 1 whose pages start at BWAP's
canonical interleave over both nodes (``same_socket=True`` puts the BE VM on
socket 0 as well). Policies:

* ``unmanaged``: canonical interleave, no control;
* ``unshared``: BE pages only on its own node, no control;
* ``mba``: MBA only; ``pgm``: page migration only; ``balm``: both;
* ``ladder``: the agent's default controller, every rung of the escalation
  ladder in cost order (:mod:`elastman.hostagent.ladder`);
* ``ladder-nomba``: the same on a host without MBA, where the CPU quota is
  the throttle.
"""
from __future__ import annotations

import dataclasses
import random

from elastman.conf import hostagent as hostagent_conf
from elastman.hostagent import balm
from elastman.hostagent import simulator as sim

POLICIES = ('unmanaged', 'unshared', 'mba', 'pgm', 'balm', 'ladder',
            'ladder-nomba')


@dataclasses.dataclass
class PhaseResult:
    load: float
    be_gbs: float
    violation: float          # fraction of samples above the SLO
    episodes: int             # true-latency violations that started
    max_reaction: float       # longest violation episode, seconds
    mean_reaction: float


@dataclasses.dataclass
class RunResult:
    policy: str
    phases: list[PhaseResult]
    stats: dict
    timeline: dict

    def high_load(self, threshold: float = 0.9) -> tuple[float, float]:
        """(mean BE GB/s, violation fraction) over phases with load >= threshold."""
        sel = [p for p in self.phases if p.load >= threshold - 1e-9]
        return (sum(p.be_gbs for p in sel) / len(sel),
                sum(p.violation for p in sel) / len(sel))

    @property
    def violation(self) -> float:
        """Fraction of the run's samples above the SLO."""
        return sum(p.violation for p in self.phases) / len(self.phases)

    @property
    def max_reaction(self) -> float:
        return max((p.max_reaction for p in self.phases), default=0.0)


def _default(name: str):
    """The agent's default of ``[hostagent] name``."""
    return next(o.default for o in hostagent_conf.hostagent_opts
                if o.name == name)


def build_host(policy: str, seed: int = 42, same_socket: bool = False
               ) -> sim.SimulatedHost:
    host = sim.SimulatedHost(sim.SimConfig(seed=seed,
                                           mba=policy != 'ladder-nomba'))
    host.add_lc(sim.SimLC('lc', node=0))
    be = sim.SimBE('be', node=0 if same_socket else 1)
    if policy == 'unshared':
        host.add_be(be, {n: (1.0 if n == be.node else 0.0)
                         for n in host.nodes()})
    else:
        host.add_be(be)
    return host


def run(policy: str, loads=tuple(i / 10 for i in range(1, 11)),
        phase_seconds: float = 36.0, seed: int = 42, same_socket: bool = False,
        config: balm.BalmConfig | None = None, record: bool = False
        ) -> RunResult:
    """Run one policy through every load phase; deterministic for a seed."""
    host = build_host(policy, seed, same_socket)
    lc = host.lcs['lc']
    monitor = balm.SloMonitor()
    monitor.register('lc', lc.node, lc.slo_ms)
    mode = {'ladder-nomba': 'ladder'}.get(policy, policy)
    if mode not in ('mba', 'pgm', 'balm', 'ladder'):
        mode = 'off'
    cfg = dataclasses.replace(config or balm.BalmConfig(), mode=mode)
    if mode == 'ladder' and cfg.page_reclaim_holdoff is None:
        cfg = dataclasses.replace(cfg, page_reclaim_holdoff=_default(
            'page_reclaim_holdoff'))
    ctl = balm.BalmController(host, monitor, cfg)
    ctl.set_best_effort(['be'])
    ticks = int(round(phase_seconds / host.cfg.tick))
    phases = []
    timeline = {'t': [], 'latency': [], 'be_gbs': [], 'mba': [], 'remote': []}
    for load in loads:
        lc.load = load
        be_sum = 0.0
        bad = 0
        episodes: list[float] = []
        start = None
        for _ in range(ticks):
            host.step()
            sample = host.observe('lc')
            monitor.add_sample('lc', host.now(), sample)
            ctl.tick()
            be_sum += host.be_rate['be']
            bad += sample > lc.slo_ms
            red = host.lc_true_latency['lc'] > lc.slo_ms
            if red and start is None:
                start = host.now()
            elif not red and start is not None:
                episodes.append(host.now() - start)
                start = None
            if record:
                be = host.bes['be']
                timeline['t'].append(host.now())
                timeline['latency'].append(sample)
                timeline['be_gbs'].append(host.be_rate['be'])
                timeline['mba'].append(be.mba)
                timeline['remote'].append(
                    be.pages.get(lc.node, 0.0) / be.memory_gb)
        if start is not None:
            episodes.append(host.now() - start)
        phases.append(PhaseResult(
            load=load, be_gbs=be_sum / ticks, violation=bad / ticks,
            episodes=len(episodes),
            max_reaction=max(episodes, default=0.0),
            mean_reaction=sum(episodes) / len(episodes) if episodes else 0.0))
    return RunResult(policy, phases, dataclasses.asdict(ctl.stats), timeline)


def compare(policies=POLICIES, **kwargs) -> dict[str, RunResult]:
    return {p: run(p, **kwargs) for p in policies}


# -- adaptive CPU allocation (Guo's thesis) on the simulated host ---------

CPU_POLICIES = ('fixed', 'adaptive', 'adaptive-fuzzy')
#: the LC VM's fixed quota: 3 of every 4 cores, the thesis' static quota
FIXED_LC_CORES = 12.0


@dataclasses.dataclass
class CpuResult:
    policy: str
    be_cores: float          # the BE VM's mean cores: its work per second
    violation: float         # fraction of ticks whose p99 is above the SLO
    lc_served: float         # mean share of the LC demand it had cores for
    lc_cores_high: float     # mean cores the LC VM could use, high phases
    lc_cores_low: float
    moves: int               # allocation changes applied
    timeline: dict


def run_cpu(policy: str, seconds: float = 600.0, seed: int = 42,
            record: bool = False) -> CpuResult:
    """One CPU-sharing policy on :class:`simulator.CpuSimHost`."""
    from elastman.hostagent import cpualloc
    host = sim.CpuSimHost(sim.CpuSimConfig(seed=seed))
    cfg = host.cfg
    monitor = balm.SloMonitor()
    monitor.register('lc', 0, cfg.slo_ms)
    fixed_be = cfg.cores - FIXED_LC_CORES
    host.be_cap = fixed_be
    adaptive = policy != 'fixed'
    lc = cpualloc.SloTenant(FIXED_LC_CORES, floor=1.0,
                            ceiling=cfg.cores - 0.5)
    be = cpualloc.UiptTenant(fixed_be, min_cores=0.5, max_cores=cfg.cores,
                             algorithm='fuzzy' if policy == 'adaptive-fuzzy'
                             else 'hill_climbing',
                             rng=random.Random(seed))
    moves = 0

    def apply() -> None:
        nonlocal moves
        alloc = cpualloc.allocate(cfg.cores, {'lc': lc.request},
                                  {'be': be.request},
                                  floors={'lc': 1.0, 'be': 0.5})
        if abs(alloc.cores['be'] - host.be_cap) > 1e-9:
            moves += 1
            host.be_cap = alloc.cores['be']
            monitor.mark_change(host.t)

    ticks = int(round(seconds / cfg.tick))
    per_interval = int(round(cpualloc.TABLE_4_2['interval_s'] / cfg.tick))
    be_sum = bad = served = 0.0
    high = [0.0, 0]
    low = [0.0, 0]
    acc_be = acc_used = 0.0
    last_fast = -1.0
    timeline = {'t': [], 'latency': [], 'be_cap': [], 'demand': []}
    for i in range(ticks):
        host.step()
        sample = host.observe()
        monitor.add_sample('lc', host.t, sample)
        bad += sample > cfg.slo_ms
        be_sum += host.be_cap
        served += min(1.0, host.lc_cores / max(host.demand, 1e-9))
        bucket = high if host.phase_level(host.t) >= max(
            level for _, level in cfg.phases) else low
        bucket[0] += host.lc_cores
        bucket[1] += 1
        acc_be += host.be_cap
        acc_used += host.lc_used()
        if adaptive:
            ev = monitor.evaluate(host.t)
            if ev.ready and ev.colour in balm.DANGER and \
                    host.t - last_fast >= 0.1:
                lc.danger()              # at the poll's pace
                apply()
                last_fast = host.t
            if (i + 1) % per_interval == 0:
                colour = ev.colour if ev.ready else balm.GREY
                lc.update(colour, acc_used / per_interval)
                cores = acc_be / per_interval
                be.update(cores, host.uipt(cores))
                apply()
        if (i + 1) % per_interval == 0:
            acc_be = acc_used = 0.0
        if record:
            timeline['t'].append(host.t)
            timeline['latency'].append(sample)
            timeline['be_cap'].append(host.be_cap)
            timeline['demand'].append(host.demand)
    return CpuResult(policy, be_sum / ticks, bad / ticks, served / ticks,
                     high[0] / max(high[1], 1), low[0] / max(low[1], 1),
                     moves, timeline)


def compare_cpu(policies=CPU_POLICIES, **kwargs) -> dict[str, CpuResult]:
    """Every CPU-sharing policy on the same simulated host."""
    return {p: run_cpu(p, **kwargs) for p in policies}
