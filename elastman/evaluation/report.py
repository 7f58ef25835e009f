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
"""Run every policy on the same simulated trace and report side by side.

Per policy: SLO-violation minutes (and % of the run), VM-hours, VM-hours
relative to the oracle, number of actions, and the utility of Hubbub-Scale
(Sec. 5.8): ``U = VM_hours + penalty * violation_hours`` over a range of
penalties. Writes ``summary.csv``, ``utility.csv``, ``timeseries.csv``,
``actions.csv`` and ``report.png`` (VMs and p99 against time with the SLO
line, like OnlineElastMan, Figs. 3.14/3.15). Same seed, same bytes.

    python -m elastman.evaluation.report --trace weekly --nodes 1000 --days 7 \\
        --seed 1 --out /tmp/sim
"""
from __future__ import annotations

import argparse
import concurrent.futures
import os
import sys
import time
from typing import Any, Mapping, Sequence

import numpy as np
from oslo_log import log as logging

from elastman.evaluation import policies as pol
from elastman.evaluation import simulator as sim_mod
from elastman.evaluation import summary
from elastman.evaluation import sweep
from elastman.evaluation import tool
from elastman.evaluation import traces as tr

LOG = logging.getLogger(__name__)

DEFAULT_PENALTIES = (0.0, 10.0, 100.0, 1000.0)


def _run_one(trace: tr.Trace, name: str, seed: int, cfg: sim_mod.SimConfig,
             flavors: Sequence[sim_mod.Flavor],
             settings: Mapping[str, Any]) -> dict[str, Any]:
    """One policy's run (a process of its own with ``jobs``)."""
    p, = pol.make([name], options=dict(settings))
    t0 = time.monotonic()
    res = sim_mod.run(trace, p, cfg, flavors, seed)
    res['describe'] = p.describe()
    res['elapsed_s'] = time.monotonic() - t0
    return res


def run_all(trace: tr.Trace, names: Sequence[str], seed: int,
            cfg: sim_mod.SimConfig | None = None,
            flavors: Sequence[sim_mod.Flavor] | None = None,
            progress: Any = None,
            settings: Mapping[str, Any] | None = None,
            jobs: int = 1) -> dict[str, dict[str, Any]]:
    """Every policy on the same trace, hardware lottery and seed;
    ``settings`` are scaling policy fields of the elastman policies. With
    ``jobs`` above 1 the policies run in that many processes; each run
    depends only on its own policy and seed, so the results are the same.
    """
    cfg = cfg or sim_mod.SimConfig()
    flavors = list(flavors or [sim_mod.Flavor('m1.medium')])
    names = [p.name for p in pol.make(names)]       # unknown names fail here
    args = [(trace, n, seed, cfg, flavors, dict(settings or {})) for n in names]
    out: dict[str, dict[str, Any]] = {}

    def done(name: str, res: dict[str, Any]) -> None:
        out[name] = res
        if progress:
            progress('%-22s %6.1f s' % (name, res['elapsed_s']))
    if jobs > 1 and len(names) > 1:
        with concurrent.futures.ProcessPoolExecutor(jobs) as ex:
            futures = {ex.submit(_run_one, *a): a[1] for a in args}
            for f in concurrent.futures.as_completed(futures):
                done(futures[f], f.result())
        return {n: out[n] for n in names}                 # the report's order
    for a in args:
        done(a[1], _run_one(*a))
    return out


def tables(results: dict[str, dict[str, Any]], step_s: int,
           penalties: Sequence[float]) -> tuple[list[dict], list[dict]]:
    rows = [summary.summarise(n, r, step_s) for n, r in results.items()]
    ref = next((r['vm_hours'] for r in rows if r['policy'] == 'oracle'), None)
    for r in rows:
        r['vm_hours_vs_oracle'] = r['vm_hours'] / ref if ref else float('nan')
    util = []
    for r in rows:
        for pen in penalties:
            util.append({'policy': r['policy'], 'penalty': pen,
                         'utility': r['vm_hours'] + pen * r['violation_minutes'] / 60.0})
    return rows, util


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return '%.3f' % v
    return str(v)


def write_csv(path: str, rows: list[dict], fields: Sequence[str]) -> None:
    with open(path, 'w') as f:
        f.write(','.join(fields) + '\n')
        for r in rows:
            f.write(','.join(_fmt(r[k]) for k in fields) + '\n')


def write_series(path: str, results: dict[str, dict[str, Any]]) -> None:
    """Per policy and minute: the load, the VMs, the cluster's p99 and
    whether it violated, and what the minute was like: the policy's action
    in flight, VMs joining, VMs over their capacity and how many of those
    were in an interference episode or streaming.
    """
    with open(path, 'w') as f:
        f.write('policy,minute,load_ops,vms,serving,p99_ms,violation,in_flight,'
                'joining,vms_over,over_interfered,over_streaming\n')
        for name, res in results.items():
            s = res['series']
            for i in range(len(s['t'])):
                f.write('%s,%d,%.0f,%d,%d,%.2f,%d,%d,%d,%d,%d,%d\n' % (
                    name, int(s['t'][i] // 60), s['load'][i], s['vms'][i],
                    s['serving'][i], min(s['p99'][i], 1e6), s['violation'][i],
                    s['in_flight'][i], s['joining'][i], s['over'][i],
                    s['over_interfered'][i], s['over_streaming'][i]))


def write_actions(path: str, results: dict[str, dict[str, Any]]) -> None:
    with open(path, 'w') as f:
        f.write('policy,minute,kind,flavor,count,done_minute,reason\n')
        for name, res in results.items():
            for a in sorted(res['actions'] + res.get('trims', []), key=lambda a: a.t):
                f.write('%s,%d,%s,%s,%d,%d,"%s"\n' % (
                    name, int(a.t // 60), a.kind, a.flavor, a.count, int(a.done_at // 60),
                    a.reason.replace('"', "'")))


def plot(path: str, results: dict[str, dict[str, Any]], slo_ms: float,
         util: list[dict], title: str) -> None:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(4, 1, figsize=(11, 13), sharex=False,
                           gridspec_kw={'height_ratios': [1, 2, 2, 1.4]})
    first = next(iter(results.values()))['series']
    hours = first['t'] / 3600.0
    ax[0].plot(hours, first['load'], color='black', lw=0.8)
    ax[0].set_ylabel('client ops/s')
    ax[0].set_title(title)
    for name, res in results.items():
        s = res['series']
        ax[1].plot(hours, s['vms'], lw=0.9, label=name)
        ax[2].plot(hours, np.minimum(s['p99'], 50 * slo_ms), lw=0.6, label=name)
    ax[1].set_ylabel('VMs')
    ax[1].legend(fontsize=8, ncol=3)
    ax[2].axhline(slo_ms, color='red', ls='--', lw=1, label='SLO')
    ax[2].set_yscale('log')
    ax[2].set_ylabel('cluster p99 read (ms)')
    ax[2].set_xlabel('hours')
    names = list(results)
    pens = sorted({u['penalty'] for u in util})
    width = 0.8 / max(len(pens), 1)
    for j, pen in enumerate(pens):
        vals = [next(u['utility'] for u in util if u['policy'] == n and u['penalty'] == pen)
                for n in names]
        ax[3].bar(np.arange(len(names)) + j * width, vals, width, label='penalty %g' % pen)
    ax[3].set_xticks(np.arange(len(names)) + 0.4 - width / 2)
    ax[3].set_xticklabels(names, fontsize=8)
    ax[3].set_ylabel('utility (VM-h)')
    ax[3].set_yscale('log')
    ax[3].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=80, metadata={'Software': None})
    plt.close(fig)


def report(trace_name: str, nodes: int, days: float | None, seed: int, out: str,
           names: Sequence[str] = pol.ALL, penalties: Sequence[float] = DEFAULT_PENALTIES,
           progress: Any = None, png: bool = True,
           settings: Mapping[str, Any] | None = None,
           cfg: sim_mod.SimConfig | None = None, jobs: int = 1) -> list[dict]:
    """Run and write everything to ``out``; returns the summary rows."""
    os.makedirs(out, exist_ok=True)
    cfg = cfg or sim_mod.SimConfig()
    trace = tr.load(trace_name, nodes, days, seed, cfg.hardware)
    results = run_all(trace, names, seed, cfg, progress=progress, settings=settings,
                      jobs=jobs)
    rows, util = tables(results, trace.step_s, penalties)
    write_csv(os.path.join(out, 'summary.csv'), rows, summary.FIELDS)
    write_csv(os.path.join(out, 'utility.csv'), util, ('policy', 'penalty', 'utility'))
    write_series(os.path.join(out, 'timeseries.csv'), results)
    write_actions(os.path.join(out, 'actions.csv'), results)
    with open(os.path.join(out, 'policies.txt'), 'w') as f:
        for res in results.values():
            f.write(res['describe'] + '\n')
    if png:
        plot(os.path.join(out, 'report.png'), results, cfg.slo_ms, util,
             '%s trace, %d nodes, seed %d' % (trace.name, nodes, seed))
    return rows


def format_table(rows: list[dict]) -> str:
    head = '%-22s %9s %7s %10s %8s %7s %7s' % ('policy', 'viol.min', 'viol.%', 'VM-hours',
                                               'vs.orc', 'actions', 'max VMs')
    lines = [head]
    for r in rows:
        lines.append('%-22s %9.0f %7.2f %10.1f %8.3f %7d %7d' % (
            r['policy'], r['violation_minutes'], r['violation_pct'], r['vm_hours'],
            r['vm_hours_vs_oracle'], r['actions'], r['max_vms']))
    return '\n'.join(lines)


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('--trace', default='weekly',
                    help='trace name (%s) or a CSV path; with --sweep a comma-separated '
                         'list or "all"' % ', '.join(tr.ALL))
    ap.add_argument('--nodes', default='1000',
                    help='scale: the peak needs about this many nominal VMs; with '
                         '--sweep a comma-separated list')
    ap.add_argument('--days', type=float, default=None,
                    help='length (default: the trace file length)')
    ap.add_argument('--seed', default='1',
                    help='the random stream of the simulated cluster and trace; with '
                         '--sweep a comma-separated list, each setting run once per '
                         'seed and the frontiers drawn through the means')
    ap.add_argument('--out', required=True, help='output directory')
    ap.add_argument('--policies', default=','.join(pol.ALL),
                    help='comma-separated subset of %s' % ', '.join(pol.ALL))
    ap.add_argument('--penalties', default=','.join('%g' % p for p in DEFAULT_PENALTIES),
                    help='utility penalties, VM-hours per hour of SLO violation')
    ap.add_argument('--no-png', action='store_true')
    ap.add_argument('--sweep', action='store_true',
                    help='run every policy over its main knob and write the frontiers '
                         '(violation %% against VM-hours / oracle) per trace and size')
    ap.add_argument('--values', action='append', default=[], metavar='POLICY=V1,V2,...',
                    help='with --sweep: the knob values of a policy (default: its own)')
    ap.add_argument('--hysteresis', action='append', default=[],
                    metavar='POLICY[=V1,V2,...]',
                    help='with --sweep: cross the policy\'s knob with its second one, '
                         'how far below its scale-out point it keeps its VMs '
                         '(reactive: scale-in threshold / scale-out threshold; '
                         'target: scale-down stabilisation window, s; elastman: '
                         'scale_in_headroom); values default to its own')
    ap.add_argument('--jobs', type=int, default=1,
                    help='runs in parallel (processes): the policies of a report, '
                         'or with --sweep its runs')
    ap.add_argument('--join-slots', type=int, default=sim_mod.SimConfig.join_slots,
                    metavar='N',
                    help='VMs of a cluster that join at once (0: every VM of a '
                         'scale-out in parallel; 1: one after the other, as the '
                         'actuator does and Cassandra requires); default %(default)s')
    ap.add_argument('--removal-slots', type=int,
                    default=sim_mod.SimConfig.removal_slots, metavar='N',
                    help='VMs of a cluster that leave at once (0: every VM of a '
                         'scale-in together; 1: one after the other, as the '
                         'actuator removes them); default %(default)s')
    ap.add_argument('--interference-per-day', type=float,
                    default=sim_mod.SimConfig.interference_per_day, metavar='RATE',
                    help='interference episodes per VM per day (0: none); the '
                         'oracle foresees them, every other policy meets them; '
                         'default %(default)s')
    ap.add_argument('--read-routing', choices=sim_mod.READ_ROUTING,
                    default=sim_mod.SimConfig.read_routing,
                    help='how a read reaches one of its replicas: by token '
                         'share whatever the replica\'s speed (token: clients '
                         'whose driver ignores it), or by token share times '
                         'capacity factor (capacity: the Java driver 4\'s '
                         'default policy, tools/bench_read_routing.py); every '
                         'policy, the oracle included, meets the same; default '
                         '%(default)s')
    ap.add_argument('--forecast-at', choices=pol.FORECAST_AT,
                    default=sim_mod.SimConfig.forecast_at,
                    help='when elastman\'s forecast is made: as the service\'s '
                         'predictor makes it at its default [predictor] step '
                         '(grid: control-period means ending a minute before '
                         'each point of the control period\'s grid, one '
                         'forecast a grid point), or at each decision, from the '
                         'control period just ended (decision); default '
                         '%(default)s')
    ap.add_argument('--set', action='append', default=[], dest='settings',
                    metavar='FIELD=VALUE',
                    help='a scaling policy field of the elastman policies (VALUE is '
                         'JSON, a bare word a string), as a cluster\'s policy document in '
                         'the API takes it, model={...} its capacity model parameters; '
                         'repeat for several. elastman-paper '
                         'keeps the paper\'s rule, and a swept knob wins over it')


def run_args(args: argparse.Namespace) -> int:
    try:
        settings = pol.parse_settings(args.settings)
    except ValueError as e:
        raise SystemExit('simulate: %s' % e)
    for option, value in (('--join-slots', args.join_slots),
                          ('--removal-slots', args.removal_slots),
                          ('--interference-per-day', args.interference_per_day)):
        if not value >= 0:
            raise SystemExit('simulate: %s %g: 0 or more' % (option, value))
    cfg = sim_mod.SimConfig(join_slots=args.join_slots,
                            removal_slots=args.removal_slots,
                            interference_per_day=args.interference_per_day,
                            forecast_at=args.forecast_at,
                            read_routing=args.read_routing)
    if args.days is not None and not args.days > 0:
        raise SystemExit('simulate: --days %g: more than 0' % args.days)
    if args.sweep:
        return run_sweep(args, settings, cfg)
    try:
        nodes, seed, names, penalties = single_run(args)
    except ValueError as e:
        raise SystemExit('simulate: %s' % e)
    t0 = time.monotonic()
    rows = report(args.trace, nodes, args.days, seed, args.out, names, penalties,
                  progress=lambda m: print(m, file=sys.stderr, flush=True),
                  png=not args.no_png, settings=settings, cfg=cfg,
                  jobs=max(1, args.jobs))
    print(format_table(rows))
    print('wall time %.1f s; files in %s' % (time.monotonic() - t0, args.out))
    return 0


def single_run(args: argparse.Namespace
               ) -> tuple[int, int, list[str], list[float]]:
    """The VMs, seed, policies and penalties of one report, checked before
    anything runs (ValueError naming the option).
    """
    for option, value in (('--nodes', args.nodes), ('--seed', args.seed)):
        if ',' in str(value):
            raise ValueError('%s %r: one integer (a list only with --sweep)'
                             % (option, value))
    if ',' in args.trace or args.trace == 'all':
        raise ValueError('--trace %r: one trace (a list or all only with '
                         '--sweep)' % args.trace)
    sweep.trace_names(args.trace)
    nodes = sweep.sizes(str(args.nodes))[0]
    seed = sweep.seeds(str(args.seed))[0]
    names = [n.strip() for n in args.policies.split(',') if n.strip()]
    pol.check_names(names)
    try:
        penalties = [float(p) for p in args.penalties.split(',') if p.strip()]
    except ValueError:
        raise ValueError('--penalties %r: comma-separated numbers'
                         % args.penalties) from None
    return nodes, seed, names, penalties


def run_sweep(args: argparse.Namespace, settings: Mapping[str, Any],
              cfg: sim_mod.SimConfig) -> int:
    t0 = time.monotonic()
    names = [n.strip() for n in args.policies.split(',') if n.strip()]
    try:
        rows = sweep.run(sweep.trace_names(args.trace), sweep.sizes(args.nodes), names,
                         args.days, sweep.seeds(args.seed), sweep.parse_values(args.values),
                         max(1, args.jobs),
                         progress=lambda m: print(m, file=sys.stderr, flush=True),
                         settings=settings, cfg=cfg,
                         hysteresis=sweep.parse_hysteresis(args.hysteresis))
    except ValueError as e:
        raise SystemExit('simulate --sweep: %s' % e)
    sweep.write(args.out, rows, png=not args.no_png)
    print(sweep.format_table(sweep.means(rows)))
    print('wall time %.1f s; files in %s' % (time.monotonic() - t0, args.out))
    return 0


TOOL = tool.Tool(
    command='simulate', module='elastman.evaluation.report',
    help=('run the scaling policies on a simulated trace side '
          'by side and write the report'),
    doc=__doc__, add_arguments=add_arguments, run=run_args)
add_subparser = TOOL.add_subparser
main = TOOL.main


if __name__ == '__main__':
    sys.exit(main())
