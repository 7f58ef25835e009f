#!/usr/bin/env python3
"""BALM vs unmanaged / unshared / MBA-only / page-migration-only, one command.

    python3 tools/balm_compare.py [--seed 42] [--phase-seconds 36]
        [--png doc/source/_static/balm_compare.png] [--same-socket]

Runs the simulated dual-socket scenario (LC load 10% -> 100%) for every
policy, prints the per-load table and the done-criteria of issue 8, and
writes a plot: best-effort throughput and LC SLO-violation time per load.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..'))

from elastman.hostagent import evaluation  # noqa: E402


def table(results: dict) -> str:
    policies = list(results)
    loads = [p.load for p in results[policies[0]].phases]
    head = 'load  ' + ''.join('%-22s' % p for p in policies)
    sub = '      ' + ''.join('%-22s' % 'BE GB/s  viol%  react' for _ in policies)
    lines = [head, sub]
    for i, load in enumerate(loads):
        row = '%3.0f%%  ' % (load * 100)
        for p in policies:
            ph = results[p].phases[i]
            row += '%-22s' % ('%5.1f  %5.2f  %5.2fs' % (
                ph.be_gbs, ph.violation * 100, ph.max_reaction))
        lines.append(row)
    return '\n'.join(lines)


def criteria(results: dict) -> list[str]:
    b, mba = results['balm'], results['mba']
    out = []
    for thr in (0.8, 0.9, 1.0):
        bg, bv = b.high_load(thr)
        mg, mv = mba.high_load(thr)
        ug, _ = results['unshared'].high_load(thr)
        out.append('load >= %3.0f%%: BALM %.1f GB/s = %.2fx MBA-only (%.1f), '
                   '%.2fx unshared (%.1f); violation time BALM %.2f%% vs '
                   'MBA-only %.2f%% (difference %+.2f points)' % (
                       thr * 100, bg, bg / mg, mg, bg / ug, ug, bv * 100,
                       mv * 100, (bv - mv) * 100))
    for p, r in results.items():
        out.append('%-9s max reaction (violation -> non-red): %.2f s; '
                   'controller: %s' % (p, r.max_reaction, r.stats))
    return out


def plot(results: dict, path: str) -> None:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for p, r in results.items():
        loads = [ph.load * 100 for ph in r.phases]
        ax1.plot(loads, [ph.be_gbs for ph in r.phases], marker='o', label=p)
        ax2.plot(loads, [ph.violation * 100 for ph in r.phases], marker='o',
                 label=p)
    ax1.set_xlabel('LC load (% of max load)')
    ax1.set_ylabel('best-effort throughput (GB/s)')
    ax2.set_xlabel('LC load (% of max load)')
    ax2.set_ylabel('LC SLO violation time (%)')
    ax2.set_yscale('symlog', linthresh=1)
    ax1.legend()
    ax1.grid(alpha=.3)
    ax2.grid(alpha=.3)
    fig.suptitle('BALM vs baselines, simulated dual-socket host')
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=90)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--seed', type=int, default=42)
    ap.add_argument('--phase-seconds', type=float, default=36.0)
    ap.add_argument('--same-socket', action='store_true',
                    help='BE VM on the LC VM\'s socket (outbound migration)')
    ap.add_argument('--png', default='doc/source/_static/balm_compare.png')
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    results = evaluation.compare(seed=args.seed,
                                 phase_seconds=args.phase_seconds,
                                 same_socket=args.same_socket)
    print(table(results))
    print()
    for line in criteria(results):
        print(line)
    if args.png:
        plot(results, args.png)
        print('\nplot: %s' % args.png)
    print('(%.1f s wall clock)' % (time.monotonic() - t0))
    return 0


if __name__ == '__main__':
    sys.exit(main())
