#!/usr/bin/env python3
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
"""BALM, the escalation ladder and the adaptive CPU allocation against their
baselines on the simulated host, one command.

    python3 tools/balm_compare.py [--seed 42] [--phase-seconds 36]
        [--png doc/source/_static/balm_compare.png]

Runs the simulated dual-socket host (LC load 10% -> 100%) for every policy
of :mod:`elastman.hostagent.evaluation` in both scenarios: A, the BE VM on
the other socket (the paper's motivating case), and B, both VMs on socket 0;
then the CPU-sharing host (an LC VM with 60 s high and low phases and bursts
beside a CPU-bound BE VM) under fixed quotas and the adaptive allocation.
Prints the tables and the comparisons the docs quote, and writes one plot:
best-effort throughput and LC SLO-violation time per load, one row per
scenario, and a row with the CPU allocation over time.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..'))

from elastman.hostagent import evaluation  # noqa: E402

SCENARIOS = (('A', 'BE on the other socket', False),
             ('B', 'both VMs on socket 0', True))


def table(results: dict) -> str:
    policies = list(results)
    loads = [p.load for p in results[policies[0]].phases]
    head = 'load  ' + ''.join('%-21s' % p for p in policies)
    sub = '      ' + ''.join('%-21s' % 'GB/s  viol%  react' for _ in policies)
    lines = [head, sub]
    for i, load in enumerate(loads):
        row = '%3.0f%%  ' % (load * 100)
        for p in policies:
            ph = results[p].phases[i]
            row += '%-21s' % ('%4.1f %6.2f %5.2fs' % (
                ph.be_gbs, ph.violation * 100, ph.max_reaction))
        lines.append(row)
    return '\n'.join(lines)


def criteria(results: dict) -> list[str]:
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
    sb, sl = b.stats, lad.stats
    out.append('page batches: BALM %d (%.1f GiB), ladder %d (%.1f GiB), '
               'ladder re-pins %d, CPU-quota steps %d; violation over the '
               'run: BALM %.2f%%, ladder %.2f%%' % (
                   sb['batches'], sb['bytes_moved'] / 2 ** 30, sl['batches'],
                   sl['bytes_moved'] / 2 ** 30, sl['repins'], sl['cpu_steps'],
                   b.violation * 100, lad.violation * 100))
    nomba = results.get('ladder-nomba')
    if nomba is not None:
        g, v = nomba.high_load(1.0)
        out.append('ladder without MBA (CPU quota as the throttle): %.1f '
                   'GB/s at 100%% load, violation %.2f%%, %d CPU steps, '
                   '%d batches' % (g, v * 100, nomba.stats['cpu_steps'],
                                   nomba.stats['batches']))
    for p, r in results.items():
        out.append('%-12s longest violation -> non-red %.2f s; cost %.0f ms '
                   'of host work' % (p, r.max_reaction, r.stats['cost_ms']))
    return out


def cpu_table(results: dict) -> list[str]:
    fixed = results['fixed']
    lines = ['policy           BE cores  BE work  viol%  LC served  LC cores '
             'high/low  moves']
    for p, r in results.items():
        lines.append('%-16s %8.2f %7.2fx %6.2f %9.2f%% %8.1f/%-4.1f %6d' % (
            p, r.be_cores, r.be_cores / fixed.be_cores, r.violation * 100,
            r.lc_served * 100, r.lc_cores_high, r.lc_cores_low, r.moves))
    best = results['adaptive']
    lines.append('adaptive: the BE VM does %.0f%% more work (a fixed amount '
                 'finishes %.0f%% sooner) at %.2f%% violation against %.2f%%'
                 % ((best.be_cores / fixed.be_cores - 1) * 100,
                    (1 - fixed.be_cores / best.be_cores) * 100,
                    best.violation * 100, fixed.violation * 100))
    return lines


def plot(all_results: dict, path: str, cpu: dict | None = None) -> None:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    rows = len(all_results) + (1 if cpu else 0)
    fig, axes = plt.subplots(rows, 2, figsize=(11, 3.6 * rows),
                             squeeze=False)
    for row, (name, results) in zip(axes, all_results.items()):
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
        ax1.set_title('CPU sharing: the best-effort VM\'s cores')
        ax1.set_xlabel('time (s)')
        ax1.set_ylabel('cores')
        ax1.legend(fontsize=8)
        ax2.set_title('CPU sharing: LC p99 (SLO 35 ms)')
        ax2.set_xlabel('time (s)')
        ax2.set_ylabel('ms')
        ax2.set_yscale('log')
        ax2.axhline(35.0, color='k', lw=.8)
        ax1.grid(alpha=.3)
        ax2.grid(alpha=.3)
    fig.suptitle('BALM, the ladder and adaptive CPU sharing against their '
                 'baselines, simulated hosts')
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=90)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--seed', type=int, default=42)
    ap.add_argument('--phase-seconds', type=float, default=36.0)
    ap.add_argument('--png', default='doc/source/_static/balm_compare.png')
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    all_results = {}
    for name, what, same_socket in SCENARIOS:
        results = evaluation.compare(seed=args.seed,
                                     phase_seconds=args.phase_seconds,
                                     same_socket=same_socket)
        all_results[name] = results
        print('Scenario %s (%s)' % (name, what))
        print(table(results))
        print()
        for line in criteria(results):
            print(line)
        print()
    cpu = evaluation.compare_cpu(seed=args.seed, record=bool(args.png))
    print('CPU sharing (16 cores; LC phases of 60 s at 8 and 3 cores, '
          'bursts; fixed quotas 12 + 4)')
    for line in cpu_table(cpu):
        print(line)
    print()
    if args.png:
        plot(all_results, args.png, cpu)
        print('plot: %s' % args.png)
    print('(%.1f s wall clock)' % (time.monotonic() - t0))
    return 0


if __name__ == '__main__':
    sys.exit(main())
