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
"""Every policy over its main knob: frontiers of violation against VM-hours.

Each policy class declares its knob and the values to try
(:attr:`~elastman.evaluation.policies.base.Policy.knob` and ``sweep``: target
tracking's CPU target, reactive's thresholds, elastman's headroom); a policy
without one (static, oracle) is a single point. For every trace and size, each
setting runs on the same trace, seed and hardware lottery, and the oracle's
VM-hours are the unit of cost. Per trace and size the sweep writes
``sweep-<trace>-<nodes>.csv`` and draws ``frontier-<trace>-<nodes>.png``
(violation % against VM-hours / oracle, each policy's Pareto frontier, the
1.05-1.5x band of :mod:`~elastman.evaluation.frontier`); ``sweep.csv`` holds
every row, ``between.csv`` each frontier at the comparison levels.

``--hysteresis POLICY`` crosses a policy's knob with its second one, how far
below its scale-out point it keeps its VMs (:attr:`~elastman.evaluation.
policies.base.Policy.hysteresis`: reactive's scale-in threshold as a fraction of
its scale-out one, target tracking's scale-down stabilisation window,
elastman's scale-in band); its frontier is then the Pareto front over every
pair of settings.

With several seeds (``--seed 1,2,3``) every setting runs once per seed, each
against that seed's oracle; ``sweep.csv`` holds every run and the per-trace
files, the plots and ``between.csv`` the means over the seeds
(:func:`means`). One seed is one random stream of per-VM noise, hardware
and interference episodes, and the capacity models and forecasts that
follow from it: a run is deterministic on one machine, but elastman's runs
differ between machines with different CPUs (most likely other rounding in
the model fits tips a decision), so a frontier judgement rests on several
seeds.

    elastman-manage simulate --sweep --trace all --nodes 50 --out /tmp/sweep50
"""
from __future__ import annotations

import concurrent.futures
import os
import time
from typing import Any, Callable, Iterable, Mapping, Sequence

from elastman.evaluation import frontier as fr
from elastman.evaluation import policies as pol
from elastman.evaluation import simulator as sim_mod
from elastman.evaluation import summary
from elastman.evaluation import traces as tr

FIELDS = ('trace', 'nodes', 'policy', 'knob', 'value', 'hysteresis', 'value2', 'default',
          'violation_minutes',
          'violation_pct', 'vm_hours', 'vm_hours_vs_oracle', 'actions', 'max_vms',
          'seed')
#: What :func:`means` averages over the seeds (``max_vms``: the largest).
MEAN_FIELDS = ('violation_minutes', 'violation_pct', 'vm_hours', 'vm_hours_vs_oracle',
               'actions')


def knob_settings(names: Sequence[str], values: dict[str, Sequence[float]] | None = None,
                  hysteresis: Mapping[str, Sequence[float] | None] | None = None
                  ) -> list[tuple[str, float | None, float | None]]:
    """(policy, knob value, second knob value) triples: each policy over its
    sweep (or ``values``), None for a policy without a knob; a policy named
    in ``hysteresis`` over every pair of its knob's values and its second
    knob's (the given ones, or its own with None), the others with None as
    the second value. The oracle is always included.
    """
    values, hysteresis = values or {}, dict(hysteresis or {})
    for option, given in (('--values', values), ('--hysteresis', hysteresis)):
        unknown = set(given) - set(names)
        if unknown:
            raise ValueError('%s for policies not swept: %s'
                             % (option, ', '.join(sorted(unknown))))
    out: list[tuple[str, float | None, float | None]] = []
    names = list(names) + ([] if 'oracle' in names else ['oracle'])
    for name, p in zip(names, pol.make(names)):
        if name in hysteresis and not (p.knob and p.hysteresis):
            raise ValueError('policy %s has no second knob to sweep' % name)
        if not p.knob:
            if name in values:
                raise ValueError('policy %s has no knob to sweep' % name)
            out.append((name, None, None))
            continue
        for v in values.get(name, ()):
            try:
                p.check_knob(float(v))
            except ValueError as e:
                raise ValueError('--values %s' % e) from None
        seconds: Sequence[float | None] = [None]
        if name in hysteresis:
            seconds = [float(v) for v in (hysteresis[name] or p.hysteresis_sweep)]
        out.extend((name, float(v), w) for v in values.get(name, p.sweep)
                   for w in seconds)
    return out


def _run_one(trace_name: str, nodes: int, days: float | None, seed: int, name: str,
             value: float | None, value2: float | None, settings: Mapping[str, Any],
             cfg: sim_mod.SimConfig) -> dict[str, Any]:
    trace = tr.load(trace_name, nodes, days, seed, cfg.hardware)
    p = pol.make([name], options=dict(settings))[0]
    default, default2 = p.knob_value(), p.hysteresis_value()
    if value is not None:
        p.set_knob(value)
    if value2 is not None:
        p.set_hysteresis(value2)
    t0 = time.monotonic()
    res = sim_mod.run(trace, p, cfg, [sim_mod.Flavor('m1.medium')], seed)
    row = summary.summarise(name, res, trace.step_s)
    row.update(trace=trace.name, nodes=nodes, knob=p.knob or '', value=value,
               hysteresis=p.hysteresis if value2 is not None else '', value2=value2,
               default=(value is not None and value == default
                        and (value2 is None or value2 == default2)),
               elapsed_s=time.monotonic() - t0, seed=str(seed))
    return row


def run(trace_names: Sequence[str], sizes: Sequence[int], names: Sequence[str],
        days: float | None = None, seed: int | Sequence[int] = 1,
        values: dict[str, Sequence[float]] | None = None, jobs: int = 1,
        progress: Callable[[str], None] | None = None,
        settings: Mapping[str, Any] | None = None,
        cfg: sim_mod.SimConfig | None = None,
        hysteresis: Mapping[str, Sequence[float] | None] | None = None
        ) -> list[dict[str, Any]]:
    """Run every setting on every trace, size and seed; rows in a fixed
    order. ``settings`` are scaling policy fields of the elastman policies
    (their swept knobs win); ``cfg`` the simulated cluster's timings;
    ``hysteresis`` the policies whose second knob is crossed with the first
    (:func:`knob_settings`).
    """
    grid = knob_settings(names, values, hysteresis)
    fields = dict(settings or {})
    cfg = cfg or sim_mod.SimConfig()
    runs = [int(seed)] if isinstance(seed, int) else [int(s) for s in seed]
    if not runs:
        raise ValueError('no seed to run')
    tasks = [(t, n, days, sd, name, v, w, fields, cfg) for t in trace_names for n in sizes
             for sd in runs for name, v, w in grid]
    if jobs > 1:
        with concurrent.futures.ProcessPoolExecutor(jobs) as ex:
            futures = [ex.submit(_run_one, *task) for task in tasks]
            rows = []
            for f in futures:
                rows.append(f.result())
                _report(rows[-1], progress)
    else:
        rows = []
        for task in tasks:
            rows.append(_run_one(*task))
            _report(rows[-1], progress)
    for (t, n, sd) in {(r['trace'], r['nodes'], r['seed']) for r in rows}:
        group = [r for r in rows
                 if r['trace'] == t and r['nodes'] == n and r['seed'] == sd]
        ref = next(r['vm_hours'] for r in group if r['policy'] == 'oracle')
        for r in group:
            r['vm_hours_vs_oracle'] = r['vm_hours'] / ref
    return rows


def means(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per trace, size and setting: the mean over its seeds of
    :data:`MEAN_FIELDS` (each run measured against its own seed's oracle),
    the largest ``max_vms``; ``seed`` lists the seeds. Rows of one seed
    come back as they are.
    """
    if len({r['seed'] for r in rows}) <= 1:
        return list(rows)
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r['trace'], r['nodes'], r['policy'], r['value'],
                           r.get('value2')), []).append(r)
    out = []
    for group in groups.values():
        row = dict(group[0])
        for k in MEAN_FIELDS:
            row[k] = sum(float(r[k]) for r in group) / len(group)
        row['max_vms'] = max(r['max_vms'] for r in group)
        row['elapsed_s'] = sum(r['elapsed_s'] for r in group)
        row['seed'] = 'mean of seeds ' + ' '.join(str(r['seed']) for r in group)
        out.append(row)
    return out


def setting(row: Mapping[str, Any]) -> str:
    """A row's knob value, with its second knob's after a slash."""
    if row['value'] is None:
        return ''
    if row.get('value2') is None:
        return '%g' % row['value']
    return '%g/%g' % (row['value'], row['value2'])


def _report(row: dict[str, Any], progress: Callable[[str], None] | None) -> None:
    if progress:
        progress('%-9s %5d %-22s %-8s %9s  viol %6.2f%%  %8.1f VM-h  %6.1f s' % (
            row['trace'], row['nodes'], row['policy'], row['knob'], setting(row),
            row['violation_pct'], row['vm_hours'], row['elapsed_s']))


def curves(rows: Iterable[dict[str, Any]]) -> dict[str, list[tuple[float, float]]]:
    """Per policy: its (VM-hours / oracle, violation %) points."""
    out: dict[str, list[tuple[float, float]]] = {}
    for r in rows:
        out.setdefault(r['policy'], []).append((r['vm_hours_vs_oracle'], r['violation_pct']))
    return out


def _fmt(v: Any) -> str:
    if v is None:
        return ''
    if isinstance(v, bool):
        return 'yes' if v else ''
    if isinstance(v, float):
        return '%.3f' % v
    return str(v)


def write_csv(path: str, rows: Sequence[dict[str, Any]],
              fields: Sequence[str] = FIELDS) -> None:
    with open(path, 'w') as f:
        f.write(','.join(fields) + '\n')
        for r in rows:
            f.write(','.join(_fmt(r[k]) for k in fields) + '\n')


def plot(path: str, rows: Sequence[dict[str, Any]], title: str) -> None:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5.5))
    ax.axvspan(fr.LOW, fr.HIGH, color='0.93', zorder=0, label='compared: %gx-%gx oracle'
               % (fr.LOW, fr.HIGH))
    order = list(pol.ALL) + ['elastman-paper']
    for name, pts in curves(rows).items():
        mine = [r for r in rows if r['policy'] == name]
        xs = [r['vm_hours_vs_oracle'] for r in mine]
        ys = [r['violation_pct'] for r in mine]
        color = 'C%d' % (order.index(name) if name in order else len(order) % 10)
        if len(pts) > 1:
            front = fr.pareto(pts)
            ax.plot(front[:, 0], front[:, 1], lw=1.2, color=color, label=name)
            ax.scatter(xs, ys, s=18, color=color, zorder=3)
        else:
            ax.scatter(xs, ys, s=50, marker='D' if name == 'oracle' else 's', zorder=3,
                       color=color, label=name)
        for r in mine:
            if r['value'] is not None:
                ax.annotate(setting(r), (r['vm_hours_vs_oracle'], r['violation_pct']),
                            fontsize=7, xytext=(3, 3), textcoords='offset points',
                            fontweight='bold' if r['default'] else 'normal')
    ax.set_xlabel('VM-hours / oracle')
    ax.set_ylabel('SLO violation, % of minutes')
    ax.set_yscale('symlog', linthresh=1.0)
    ax.set_ylim(bottom=0)
    ax.grid(True, lw=0.3)
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=80, metadata={'Software': None})
    plt.close(fig)


def write(out: str, rows: Sequence[dict[str, Any]], png: bool = True) -> list[str]:
    """Per trace and size: CSV and frontier plot; all rows; the frontiers at
    the comparison levels (of the means over the seeds, :func:`means`).
    Returns the paths written.
    """
    os.makedirs(out, exist_ok=True)
    paths = [os.path.join(out, 'sweep.csv')]
    write_csv(paths[0], rows)
    rows = means(rows)
    between = []
    groups = sorted({(r['trace'], r['nodes']) for r in rows},
                    key=lambda g: (list(tr.ALL).index(g[0]) if g[0] in tr.ALL else 99,) + g)
    for t, n in groups:
        group = [r for r in rows if r['trace'] == t and r['nodes'] == n]
        path = os.path.join(out, 'sweep-%s-%d.csv' % (t, n))
        write_csv(path, group)
        paths.append(path)
        cmp = fr.compare({k: v for k, v in curves(group).items() if len(v) > 1})
        for row in cmp.rows():
            for name in cmp.values:
                between.append({'trace': t, 'nodes': n, 'policy': name,
                                'vm_hours_vs_oracle': row['vm_hours_vs_oracle'],
                                'violation_pct': row[name]})
        if png:
            path = os.path.join(out, 'frontier-%s-%d.png' % (t, n))
            seed = group[0]['seed']
            plot(path, group, '%s trace, %d VMs at the peak, %s' % (
                t, n, seed if seed.startswith('mean') else 'seed ' + seed))
            paths.append(path)
    path = os.path.join(out, 'between.csv')
    write_csv(path, between, ('trace', 'nodes', 'policy', 'vm_hours_vs_oracle',
                              'violation_pct'))
    paths.append(path)
    return paths


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    lines = ['%-9s %5s %-22s %-8s %9s %8s %10s %7s' % (
        'trace', 'nodes', 'policy', 'knob', 'value', 'viol.%', 'VM-hours', 'vs.orc')]
    for r in rows:
        lines.append('%-9s %5d %-22s %-8s %9s %8.2f %10.1f %7.3f%s' % (
            r['trace'], r['nodes'], r['policy'], r['knob'], setting(r), r['violation_pct'],
            r['vm_hours'], r['vm_hours_vs_oracle'], ' *' if r['default'] else ''))
    return '\n'.join(lines)


def seeds(spec: str) -> list[int]:
    """``1`` or ``1,2,3`` -> the seeds to run."""
    try:
        out = [int(n) for n in str(spec).split(',') if n.strip()]
    except ValueError:
        raise ValueError('--seed %r: expected comma-separated integers' % spec) from None
    if not out:
        raise ValueError('--seed %r: no seed' % spec)
    if min(out) < 0:
        raise ValueError('--seed %r: 0 or more' % spec)
    if len(set(out)) < len(out):
        raise ValueError('--seed %r: a seed twice' % spec)
    return out


def parse_values(specs: Sequence[str]) -> dict[str, list[float]]:
    """``POLICY=v1,v2,...`` (repeatable) -> {policy: [values]}."""
    out: dict[str, list[float]] = {}
    for spec in specs:
        name, values = _policy_values(spec, '--values')
        if values is None:
            raise ValueError('--values %r: expected POLICY=v1,v2,...' % spec)
        out[name] = values
    return out


def parse_hysteresis(specs: Sequence[str]) -> dict[str, list[float] | None]:
    """``POLICY`` or ``POLICY=v1,v2,...`` (repeatable) -> {policy: [values]
    or None for the policy's own}.
    """
    return dict(_policy_values(spec, '--hysteresis') for spec in specs)


def _policy_values(spec: str, option: str) -> tuple[str, list[float] | None]:
    name, sep, vals = spec.partition('=')
    name = name.strip()
    if not name:
        raise ValueError('%s %r: expected POLICY[=v1,v2,...]' % (option, spec))
    if not sep:
        return name, None
    try:
        values = [float(v) for v in vals.split(',') if v.strip()]
    except ValueError:
        raise ValueError('%s %r: expected POLICY=v1,v2,...' % (option, spec)) from None
    if not values:
        raise ValueError('%s %r: no values' % (option, spec))
    return name, values


def trace_names(spec: str) -> list[str]:
    if spec == 'all':
        return list(tr.ALL)
    names = [n.strip() for n in spec.split(',') if n.strip()]
    for n in names:
        tr.shape(n)                     # a clear error for an unknown trace
    return names


def sizes(spec: str) -> list[int]:
    try:
        out = [int(n) for n in spec.split(',') if n.strip()]
    except ValueError:
        raise ValueError('--nodes %r: expected comma-separated integers' % spec) from None
    if not out or min(out) < 3:
        raise ValueError('--nodes %r: at least 3 VMs' % spec)
    return out
