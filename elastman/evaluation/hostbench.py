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

import argparse
import csv
import dataclasses
import os
import sys
import time
from typing import Any

from oslo_config import cfg as cfg_mod

from elastman.common import argtypes
from elastman.conf import hostagent as hostagent_conf
from elastman.evaluation import hostsim as sim
from elastman.evaluation import tool
from elastman.hostagent import balm
from elastman.hostagent import cpualloc

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


def agent_config(mode: str) -> balm.BalmConfig:
    """The controller configuration the agent builds from ``[hostagent]``
    with every option at its default, except ``mode``.
    """
    conf = cfg_mod.ConfigOpts()
    conf.register_opts(hostagent_conf.hostagent_opts, group='hostagent')
    conf([], default_config_files=[], default_config_dirs=[])
    conf.set_override('mode', mode, 'hostagent')
    return balm.BalmConfig.from_conf(conf.hostagent)


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
    """Run one policy through every load phase; deterministic for a seed,
    and every policy on a seed sees the same probe noise in each poll.
    """
    host = build_host(policy, seed, same_socket)
    lc = host.lcs['lc']
    monitor = balm.SloMonitor()
    monitor.register('lc', lc.node, lc.slo_ms)
    mode = {'ladder-nomba': 'ladder'}.get(policy, policy)
    if mode not in ('mba', 'pgm', 'balm', 'ladder'):
        mode = 'off'
    cfg = dataclasses.replace(config, mode=mode) if config is not None \
        else agent_config(mode)
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


def _steady(load: float, level: float, lc_share: float, throttle: float,
            home: int) -> tuple[float, float]:
    """The BE VM's GB/s and the LC VM's noise-free p99 in one tick of the
    host model at LC load ``load`` (the LC VM on node 0) and BE intensity
    ``level``, with the BE VM's vCPUs on node ``home``, the share
    ``lc_share`` of its pages on node 0 and its demand scaled by
    ``throttle`` (what MBA or a CPU quota do).
    """
    host = sim.SimulatedHost(sim.SimConfig())
    host.add_lc(sim.SimLC('lc', node=0, load=load))
    be = sim.SimBE('be', node=home, phases=((1.0, level),), cpu=throttle)
    host.add_be(be, {0: lc_share, 1: 1.0 - lc_share})
    host.step()
    return host.be_rate['be'], host.lc_true_latency['lc']


def placement_ceiling(load: float, shares: int = 101) -> float:
    """The most BE GB/s a controller can get at LC load ``load`` and never
    violate: for each of the BE VM's intensity sub-phases, the best of
    every home node of its vCPUs, every share of its pages on the LC VM's
    node (``shares`` steps from 0 to 1) and the least throttle that keeps
    the LC VM's noise-free p99 within its SLO, every change free and
    instant (no migration traffic, no detection window); time-weighted over
    the sub-phases. It bounds BALM and every rung of the ladder, in either
    scenario, since a re-pin moves the BE VM between them.
    """
    phases = sim.SimBE('be', 0).phases
    slo = sim.SimLC('lc', 0).slo_ms
    total = 0.0
    for duration, level in phases:
        best = 0.0
        for home in (0, 1):
            for i in range(shares):
                share = i / (shares - 1)
                rate, lat = _steady(load, level, share, 1.0, home)
                if lat > slo:
                    lo, hi = 0.0, 1.0     # the p99 grows with the BE's demand
                    for _ in range(30):
                        mid = (lo + hi) / 2
                        if _steady(load, level, share, mid, home)[1] > slo:
                            hi = mid
                        else:
                            lo = mid
                    rate = _steady(load, level, share, lo, home)[0]
                best = max(best, rate)
        total += duration * best
    return total / sum(d for d, _ in phases)


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
    """One CPU-sharing policy on :class:`hostsim.CpuSimHost`. ``adaptive``
    and ``adaptive-fuzzy`` run the agent's own allocator
    (:class:`elastman.hostagent.cpualloc.HostAllocator`) the way
    ``HostAgentManager.allocate_cpu`` and ``cpu_danger`` do: once per
    interval (Table 4.2) on the LC VM's colour from BALM's monitor and the BE
    VM's UIPT, and between intervals when the LC VM turns yellow or red (at
    most once per ``settle_time``). A cap that moves by less than 0.05 cores
    is not applied; one that moves restarts the monitor's window. Every
    policy on a seed sees the same LC demand and the same noise in each
    tick (:class:`hostsim.CpuSimHost`).
    """
    host = sim.CpuSimHost(sim.CpuSimConfig(seed=seed))
    cfg = host.cfg
    monitor = balm.SloMonitor()
    monitor.register('lc', 0, cfg.slo_ms)
    host.be_cap = cfg.cores - FIXED_LC_CORES
    algorithm = 'fuzzy' if policy == 'adaptive-fuzzy' else 'hill_climbing'
    allocator = cpualloc.HostAllocator({0: int(cfg.cores)},
                                       algorithm=algorithm) \
        if policy != 'fixed' else None
    if allocator is not None:
        # the hill climb's random steps: a stream of their own, so the
        # host's bursts and noise are those of the fixed-quota run
        allocator.rng.seed(sim.stream_seed(seed, 'allocator'))
    moves = 0
    settle = agent_config('off').settle_time
    last_danger = -1e9
    ticks = int(round(seconds / cfg.tick))
    per_interval = int(round(cpualloc.TABLE_4_2['interval_s'] / cfg.tick))
    be_sum = bad = served = 0.0
    high = [0.0, 0]
    low = [0.0, 0]
    acc_be = acc_used = 0.0
    timeline = {'t': [], 'latency': [], 'be_cap': [], 'demand': []}
    top = max(level for _, level in cfg.phases)
    for i in range(ticks):
        host.step()
        sample = host.observe()
        monitor.add_sample('lc', host.t, sample)
        bad += sample > cfg.slo_ms
        be_sum += host.be_cap
        served += min(1.0, host.lc_cores / max(host.demand, 1e-9))
        bucket = high if host.phase_level(host.t) >= top else low
        bucket[0] += host.lc_cores
        bucket[1] += 1
        acc_be += host.be_cap
        acc_used += host.lc_used()
        caps: dict[str, float] = {}
        if allocator is not None and host.t - last_danger >= settle:
            # HostAgentManager.cpu_danger, at the poll's pace
            ev = monitor.evaluate(host.t)
            if ev.ready and ev.colour in balm.DANGER:
                caps = allocator.danger(['lc'])
                last_danger = host.t if caps else last_danger
        if (i + 1) % per_interval == 0:
            if allocator is not None:
                # HostAgentManager.allocate_cpu, every interval
                ev = monitor.evaluate(host.t)
                colours = {vm: balm.colour_of(lat, cfg.slo_ms)
                           for vm, lat in ev.latency.items()}
                be_used = acc_be / per_interval
                # the LC VM can run on every core; fixed quotas
                # guarantee it FIXED_LC_CORES
                vms = {'lc': {'class': 'latency-critical', 'node': 0,
                              'vcpus': cfg.cores,
                              'guarantee': FIXED_LC_CORES, 'cores': cfg.cores,
                              'used': acc_used / per_interval,
                              'perf': acc_used / per_interval},
                       'be': {'class': 'best-effort', 'node': 0,
                              'vcpus': cfg.cores, 'cores': host.be_cap,
                              'used': be_used, 'perf': host.uipt(be_used)}}
                caps = allocator.interval(vms, colours)
            acc_be = acc_used = 0.0
        if 'be' in caps and abs(caps['be'] - host.be_cap) >= 0.05:
            moves += 1
            host.be_cap = caps['be']
            monitor.mark_change(host.t)
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


# -- one command: tables, CSV and plot ------------------------------------

SCENARIOS = (('A', 'BE VM on the other socket', False),
             ('B', 'both VMs on socket 0', True))
CSV_FIELDS = ('experiment', 'scenario', 'policy', 'load', 'be_throughput',
              'unit', 'violation_pct', 'longest_violation_s', 'page_batches',
              'gib_moved', 'repins', 'cpu_steps', 'mba_steps',
              'allocation_moves', 'host_cost_ms')


def bandwidth_table(results: dict[str, RunResult]) -> list[str]:
    """Per load phase and policy: BE GB/s, % of samples above the SLO and
    the longest violation.
    """
    policies = list(results)
    loads = [p.load for p in results[policies[0]].phases]
    lines = ['load  ' + ''.join('%-21s' % p for p in policies),
             '      ' + ''.join('%-21s' % 'GB/s  viol%  react'
                                for _ in policies)]
    for i, load in enumerate(loads):
        row = '%3.0f%%  ' % (load * 100)
        for p in policies:
            ph = results[p].phases[i]
            row += '%-21s' % ('%4.1f %6.2f %5.2fs' % (
                ph.be_gbs, ph.violation * 100, ph.max_reaction))
        lines.append(row)
    return lines


def bandwidth_criteria(results: dict[str, RunResult],
                       ceilings: dict[float, float] | None = None) -> list[str]:
    """The Done-when comparisons: BALM and the ladder against MBA-only at
    high load (and against ``ceilings``, :func:`placement_ceiling` per LC
    load, where given), and the page migrations of the ladder against
    BALM's.
    """
    b, mba, lad = results['balm'], results['mba'], results['ladder']
    out = []
    for thr in (0.9, 1.0):
        bg, bv = b.high_load(thr)
        mg, mv = mba.high_load(thr)
        lg, lv = lad.high_load(thr)
        out.append('load >= %3.0f%%: BALM %.1f GB/s = %.2fx MBA-only (%.1f), '
                   'violation %.2f%% vs %.2f%%; ladder %.1f GB/s = %.2fx '
                   'MBA-only, violation %.2f%%' % (
                       thr * 100, bg, bg / mg, mg, bv * 100, mv * 100, lg,
                       lg / mg, lv * 100))
    if ceilings:
        for thr in (0.9, 1.0):
            loads = [ld for ld in ceilings if ld >= thr - 1e-9]
            cg = sum(ceilings[ld] for ld in loads) / len(loads)
            mg = mba.high_load(thr)[0]
            out.append('load >= %3.0f%%: ceiling without violation %.1f GB/s '
                       '= %.2fx MBA-only (any placement and throttle, every '
                       'move free and instant; BALM %.0f%% of it, the '
                       'ladder %.0f%%)' % (
                           thr * 100, cg, cg / mg,
                           100 * b.high_load(thr)[0] / cg,
                           100 * lad.high_load(thr)[0] / cg))
    sb, sl = b.stats, lad.stats
    out.append('page batches: BALM %d (%.1f GiB), ladder %d (%.1f GiB); '
               'ladder re-pins %d, CPU-quota steps %d; violation over the '
               'run: BALM %.2f%%, ladder %.2f%%; host work BALM %.0f ms, '
               'ladder %.0f ms' % (
                   sb['batches'], sb['bytes_moved'] / 2 ** 30, sl['batches'],
                   sl['bytes_moved'] / 2 ** 30, sl['repins'], sl['cpu_steps'],
                   b.violation * 100, lad.violation * 100, sb['cost_ms'],
                   sl['cost_ms']))
    return out


def cpu_lines(results: dict[str, CpuResult]) -> list[str]:
    fixed = results['fixed']
    lines = ['policy           BE cores  BE work  viol%  LC served  LC cores '
             'high/low  moves']
    for p, r in results.items():
        lines.append('%-16s %8.2f %7.2fx %6.2f %9.2f%% %8.1f/%-4.1f %6d' % (
            p, r.be_cores, r.be_cores / fixed.be_cores, r.violation * 100,
            r.lc_served * 100, r.lc_cores_high, r.lc_cores_low, r.moves))
    for name in results:
        if name == 'fixed':
            continue
        r = results[name]
        lines.append('%s: the BE VM does %.0f%% more work (a fixed amount '
                     'finishes %.0f%% sooner) at %.2f%% violation against '
                     '%.2f%% with fixed quotas' % (
                         name, (r.be_cores / fixed.be_cores - 1) * 100,
                         (1 - fixed.be_cores / r.be_cores) * 100,
                         r.violation * 100, fixed.violation * 100))
    return lines


def csv_rows(bandwidth: dict[str, dict[str, RunResult]],
             cpu: dict[str, CpuResult]) -> list[dict[str, Any]]:
    """One row per scenario, policy and load phase, one per scenario and
    policy over the whole run (``load`` = ``all``, with the controller's
    action counts), and one per CPU-sharing policy.
    """
    rows = []
    for scenario, results in bandwidth.items():
        for policy, r in results.items():
            for ph in r.phases:
                rows.append({'experiment': 'bandwidth', 'scenario': scenario,
                             'policy': policy, 'load': '%.2f' % ph.load,
                             'be_throughput': '%.3f' % ph.be_gbs,
                             'unit': 'GB/s',
                             'violation_pct': '%.3f' % (ph.violation * 100),
                             'longest_violation_s': '%.2f' % ph.max_reaction})
            st = r.stats
            rows.append({
                'experiment': 'bandwidth', 'scenario': scenario,
                'policy': policy, 'load': 'all',
                'be_throughput': '%.3f' % (sum(p.be_gbs for p in r.phases)
                                           / len(r.phases)),
                'unit': 'GB/s', 'violation_pct': '%.3f' % (r.violation * 100),
                'longest_violation_s': '%.2f' % r.max_reaction,
                'page_batches': st['batches'],
                'gib_moved': '%.2f' % (st['bytes_moved'] / 2 ** 30),
                'repins': st['repins'], 'cpu_steps': st['cpu_steps'],
                'mba_steps': st['mba_steps'],
                'host_cost_ms': '%.1f' % st['cost_ms']})
    for policy, r in cpu.items():
        rows.append({'experiment': 'cpu', 'scenario': 'C', 'policy': policy,
                     'load': 'all', 'be_throughput': '%.3f' % r.be_cores,
                     'unit': 'cores',
                     'violation_pct': '%.3f' % (r.violation * 100),
                     'allocation_moves': r.moves})
    return rows


def write_csv(rows: list[dict[str, Any]], path: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS, restval='')
        w.writeheader()
        w.writerows(rows)


def plot(bandwidth: dict[str, dict[str, RunResult]], path: str,
         cpu: dict[str, CpuResult] | None = None) -> None:
    """BE throughput and SLO-violation time per load, one row per
    scenario, and a row with the CPU allocation over time.
    """
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    rows = len(bandwidth) + (1 if cpu else 0)
    fig, axes = plt.subplots(rows, 2, figsize=(11, 3.6 * rows),
                             squeeze=False)
    for row, (name, results) in zip(axes, bandwidth.items()):
        ax1, ax2 = row
        for p, r in results.items():
            loads = [ph.load * 100 for ph in r.phases]
            ax1.plot(loads, [ph.be_gbs for ph in r.phases], marker='o',
                     label=p)
            ax2.plot(loads, [ph.violation * 100 for ph in r.phases],
                     marker='o', label=p)
        ax1.set_title('scenario %s: best-effort throughput' % name)
        ax1.set_xlabel('LC load (% of max load)')
        ax1.set_ylabel('GB/s')
        ax2.set_title('scenario %s: LC SLO violation time' % name)
        ax2.set_xlabel('LC load (% of max load)')
        ax2.set_ylabel('% of samples above the SLO')
        ax2.set_yscale('symlog', linthresh=1)
        ax1.grid(alpha=.3)
        ax2.grid(alpha=.3)
    axes[0][0].legend(fontsize=8)
    if cpu:
        ax1, ax2 = axes[-1]
        for p, r in cpu.items():
            tl = r.timeline
            step = max(1, len(tl['t']) // 3000)
            ax1.plot(tl['t'][::step], tl['be_cap'][::step], label=p, lw=1)
            ax2.plot(tl['t'][::step], tl['latency'][::step], label=p, lw=.6)
        ax1.set_title('scenario C: the best-effort VM\'s cores')
        ax1.set_xlabel('time (s)')
        ax1.set_ylabel('cores')
        ax1.legend(fontsize=8)
        ax2.set_title('scenario C: LC p99 (SLO 35 ms)')
        ax2.set_xlabel('time (s)')
        ax2.set_ylabel('ms')
        ax2.set_yscale('log')
        ax2.axhline(35.0, color='k', lw=.8)
        ax1.grid(alpha=.3)
        ax2.grid(alpha=.3)
    fig.suptitle('BALM, the ladder and adaptive CPU allocation against '
                 'their baselines, simulated host')
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _seconds(tick: float):
    """An argparse type: seconds, at least one ``tick`` of the simulated host."""
    return argtypes.bounded(float, lambda v: v >= tick,
                            'a number of seconds of at least one tick of the '
                            'simulated host (%g)' % tick)


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('--seed', type=int, default=42)
    ap.add_argument('--phase-seconds', type=_seconds(sim.SimConfig.tick), default=36.0,
                    help='length of each LC load phase (scenarios A and B)')
    ap.add_argument('--cpu-seconds', type=_seconds(sim.CpuSimConfig.tick), default=600.0,
                    help='length of the CPU-sharing run (scenario C)')
    ap.add_argument('--csv', default='host-bench.csv')
    ap.add_argument('--png', default='host-bench.png',
                    help='the plot (empty: none)')


def run_args(args: argparse.Namespace) -> int:
    t0 = time.monotonic()
    bandwidth = {}
    # one ceiling for both scenarios: it searches every home node
    ceilings = {ld: placement_ceiling(ld) for ld in (0.9, 1.0)}
    for name, what, same_socket in SCENARIOS:
        results = compare(seed=args.seed, phase_seconds=args.phase_seconds,
                          same_socket=same_socket)
        bandwidth[name] = results
        print('Scenario %s (%s)' % (name, what))
        print('\n'.join(bandwidth_table(results)))
        print()
        print('\n'.join(bandwidth_criteria(results, ceilings)))
        print()
    cpu = compare_cpu(seed=args.seed, seconds=args.cpu_seconds,
                      record=bool(args.png))
    print('Scenario C (CPU sharing: 16 cores, LC phases of 60 s at 8 and 3 '
          'cores with bursts; fixed quotas 12 + 4)')
    print('\n'.join(cpu_lines(cpu)))
    print()
    write_csv(csv_rows(bandwidth, cpu), args.csv)
    print('table: %s' % args.csv)
    if args.png:
        plot(bandwidth, args.png, cpu)
        print('plot: %s' % args.png)
    print('wall time %.1f s' % (time.monotonic() - t0))
    return 0


TOOL = tool.Tool(
    command='host-bench', module='elastman.evaluation.hostbench',
    help=('BALM, the escalation ladder and adaptive CPU '
          'allocation against their baselines on the simulated host'),
    doc=__doc__, add_arguments=add_arguments, run=run_args)
add_subparser = TOOL.add_subparser
main = TOOL.main


if __name__ == '__main__':
    sys.exit(main())
