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
"""Offline evaluation of the forecasters and their combinations over a trace.

Every forecaster is replayed over a trace one point at a time, exactly as the
predictor worker sees it, and every combination rule
(:mod:`elastman.predictor.combinations`) is run on the same forecasts. Two
errors are measured for each:

* one step ahead: the next point, MAPE and sMAPE;
* at the horizon (by default the actuator's: a control period plus a node's
  join time, in steps of ``[predictor]period``): the highest value among the
  next ``horizon`` points, which is what the actuator plans on. Its MAPE, and
  separately the mean under-forecast (the actual peak above the forecast: SLO
  minutes) and over-forecast (VM-hours), both in percent of the actual peak.
  A forecaster's peak is the highest value of its path; a combination's is
  its ``peak`` forecast.

For a combination also its upper quantile: the coverage, the share of
rounds whose actual peak stayed at or below the bound, and the excess, the
mean of how far the bound lies above the actual peak, in percent of that
peak (below zero in a missed round). A bound reaches any coverage by being
wide enough; the excess is what that width costs a plan made on it.

Errors are measured on the rounds after a warm-up where every forecaster
answered and the whole horizon lies within the trace, so the numbers compare
like with like.

Usage: ``elastman-manage forecast-eval TRACE.csv [--plot out.png]`` (also
``python -m elastman.predictor.evaluate``). A trace is a CSV file with a
header; a column named ``timestamp``/``time``/``t``/``minute`` is ignored,
every other numeric column is a series.
"""

import argparse
import csv
import json
import math
import sys
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from elastman.common import argtypes
from elastman.common import exception
from elastman.predictor import combinations
from elastman.predictor import ensemble as ens
from elastman.predictor import history as history_mod

TIME_COLUMNS = ('timestamp', 'time', 't', 'ts', 'date', 'minute')


def mape(actual: np.ndarray, predicted: np.ndarray) -> float:
    """Mean absolute percentage error in percent (zero actuals skipped)."""
    a, p = np.asarray(actual, float), np.asarray(predicted, float)
    ok = np.abs(a) > 1e-12
    return (
        float(np.mean(np.abs(p[ok] - a[ok]) / np.abs(a[ok])) * 100)
        if ok.any()
        else float('nan')
    )


def smape(actual: np.ndarray, predicted: np.ndarray) -> float:
    """Symmetric MAPE, in percent (0-200)."""
    a, p = np.asarray(actual, float), np.asarray(predicted, float)
    den = np.abs(a) + np.abs(p)
    ok = den > 1e-12
    return (
        float(np.mean(2 * np.abs(p[ok] - a[ok]) / den[ok]) * 100)
        if ok.any()
        else float('nan')
    )


def under_over(actual: np.ndarray, predicted: np.ndarray) -> tuple:
    """Mean under- and over-forecast in percent of the actual (zero actuals
    skipped); their sum is the MAPE.
    """
    a, p = np.asarray(actual, float), np.asarray(predicted, float)
    ok = np.abs(a) > 1e-12
    if not ok.any():
        return float('nan'), float('nan')
    rel = (p[ok] - a[ok]) / np.abs(a[ok])
    return (float(np.mean(np.maximum(-rel, 0.0)) * 100),
            float(np.mean(np.maximum(rel, 0.0)) * 100))


def upper_excess(actual: np.ndarray, bound: np.ndarray) -> float:
    """Mean of how far ``bound`` lies above ``actual``, in percent of
    ``actual`` (a round below it counts against): the over-forecast less
    the under-forecast of :func:`under_over`.
    """
    under, over = under_over(actual, bound)
    return over - under


def read_trace(path: str) -> Dict[str, np.ndarray]:
    """Numeric columns of a CSV trace, by header name."""
    with open(path, newline='') as f:
        rows = list(csv.reader(f))
    if not rows:
        return {}
    header, body = rows[0], rows[1:]
    out: Dict[str, np.ndarray] = {}
    # Columns of different lengths: trailing empty cells are not data.
    for i, name in enumerate(header):
        if name.strip().lower() in TIME_COLUMNS:
            continue
        vals = []
        for r in body:
            try:
                vals.append(float(r[i]))
            except (IndexError, ValueError):
                vals.append(np.nan)
        arr = np.asarray(vals)
        finite = np.flatnonzero(np.isfinite(arr))
        if finite.size:
            out[name.strip()] = arr[: finite[-1] + 1]
    return out


def default_horizon(step_s: Optional[float] = None) -> int:
    """The actuator's horizon in steps of ``step_s`` (default
    ``[predictor]period``): a control period, plus the time until the action
    in flight ends and a node's join time (the planning loop's
    ``horizon_s``), the latter two ``[actuator]join_timeout`` until the
    actuator has timed a join.
    """
    from elastman.conf import CONF

    step = float(step_s or CONF.predictor.period)
    join = CONF.actuator.join_timeout
    need = CONF.actuator.control_period + join + join
    return max(1, int(math.ceil(need / step)))


def default_seasons(step_s: Optional[float] = None) -> List[int]:
    """``[predictor]seasonal_periods`` in steps of ``step_s``."""
    from elastman.conf import CONF

    step = float(step_s or CONF.predictor.period)
    return [int(round(s / step)) for s in CONF.predictor.seasonal_periods
            if s >= 2 * step]


def replay(values: Sequence[float], horizon: int, window: int = 4032,
           ensemble: Optional[ens.Ensemble] = None,
           **ensemble_kwargs: Any) -> np.ndarray:
    """Every forecaster's path at every round, as the worker computes them.

    ``paths[t, i]`` is forecaster ``i``'s (``ensemble.names`` order)
    forecast of points ``t .. t + horizon - 1`` made from the points before
    ``t``; NaN where it did not answer. This is the expensive part of an
    evaluation; :func:`combine` runs any combination on it.
    """
    e = ensemble or ens.Ensemble(**ensemble_kwargs)
    y = np.asarray(values, dtype=float)
    h = max(1, int(horizon))
    names = e.names
    paths = np.full((y.size, len(names), h), np.nan)
    sp = e.series(('eval', id(values)))
    for t in range(1, y.size):
        hist = history_mod.clean(y[max(0, t - window):t])
        preds, _ = sp.forecast_all(hist, h)
        for i, n in enumerate(names):
            if n in preds:
                paths[t, i] = np.asarray(preds[n], dtype=float)[:h]
    e.forget(('eval', id(values)))
    return paths


def combine(values: Sequence[float], paths: np.ndarray,
            names: Sequence[str], combiner: ens.Combiner
            ) -> Dict[str, Any]:
    """Run one combination over replayed ``paths``: per round its point
    path's first value, its peak over the horizon, its upper bound and the
    candidate it chose (what :meth:`Ensemble.predict` answers).
    """
    y = np.asarray(values, dtype=float)
    n, _, h = paths.shape
    one, peak, upper = (np.full(n, np.nan) for _ in range(3))
    chosen: List[Optional[str]] = [None] * n
    for t in range(1, n):
        last = history_mod.clean(y[max(0, t - 1):t])
        combiner.observe(last)
        preds = {name: paths[t, i] for i, name in enumerate(names)
                 if np.isfinite(paths[t, i, 0])}
        c, up = combiner.answer(preds, h,
                                float(last[-1]) if last.size else None)
        if not len(c.values):
            continue
        one[t], peak[t], upper[t] = c.values[0], c.peak[h - 1], up[h - 1]
        chosen[t] = c.chosen
    return {'one': one, 'peak': peak, 'upper': upper, 'chosen': chosen}


def evaluate_series(
    values: Sequence[float],
    horizon: Optional[int] = None,
    warmup: int = 30,
    window: int = 4032,
    ensemble: Optional[ens.Ensemble] = None,
    rules: Optional[Sequence[str]] = None,
    paths: Optional[np.ndarray] = None,
    **ensemble_kwargs: Any
) -> Dict[str, Any]:
    """Replay ``values`` through the forecasters and every combination in
    ``rules`` (default: all); errors, coverage and the chosen timeline.

    The ensemble's own rule (``mode``) is the default combination; the
    others run beside it on the same forecasts. ``paths`` (from
    :func:`replay`, same horizon) skips the replay.
    """
    e = ensemble or ens.Ensemble(**ensemble_kwargs)
    y = np.asarray(values, dtype=float)
    names = e.names
    n = y.size
    h = max(1, int(horizon or default_horizon()))
    combos = [e.mode] + [r for r in (rules or ens.MODES) if r != e.mode]
    started = time.perf_counter()
    if paths is None:
        paths = replay(y, h, window, e)
    runs = {r: combine(y, paths, names, e.make_combiner(r)) for r in combos}
    elapsed = time.perf_counter() - started
    one = {k: paths[:, i, 0] for i, k in enumerate(names)}
    peak = {k: np.max(paths[:, i, :], axis=1) for i, k in enumerate(names)}
    upper = {}
    for r, run_ in runs.items():
        one[r], peak[r], upper[r] = run_['one'], run_['peak'], run_['upper']
    chosen = runs[e.mode]['chosen']
    answered = np.all(np.isfinite(paths[:, :, 0]), axis=1)
    keys = names + combos
    actual_peak = np.full(n, np.nan)
    for t in range(n - h + 1):
        actual_peak[t] = np.max(y[t:t + h])
    mask = (np.isfinite(y) & np.isfinite(actual_peak) & answered
            & (np.arange(n) >= warmup))
    for k in keys:
        mask &= np.isfinite(one[k]) & np.isfinite(peak[k])
    res: Dict[str, Any] = {
        'points': int(n),
        'scored': int(mask.sum()),
        'horizon': h,
        'default': e.mode,
        'quantile': e.quantile,
        'seconds': round(elapsed, 3),
        'forecasters': {},
        'combinations': {},
    }
    a, ap = y[mask], actual_peak[mask]
    for k in keys:
        under, over = under_over(ap, peak[k][mask])
        entry = {
            'mape': mape(a, one[k][mask]),
            'smape': smape(a, one[k][mask]),
            'peak_mape': mape(ap, peak[k][mask]),
            'peak_under': under,
            'peak_over': over,
        }
        if k in upper:
            entry['coverage'] = (float(np.mean(ap <= upper[k][mask] + 1e-9))
                                 * 100 if mask.any() else float('nan'))
            entry['upper_excess'] = upper_excess(ap, upper[k][mask])
            res['combinations'][k] = entry
        else:
            res['forecasters'][k] = entry
    timeline = []
    for t, c in enumerate(chosen):
        if c is not None and (not timeline or timeline[-1][1] != c):
            timeline.append((t, c))
    res['timeline'] = timeline
    res['chosen_counts'] = {
        c: chosen.count(c) for c in sorted({c for c in chosen if c})
    }
    res['_series'] = {
        'actual': y,
        'actual_peak': actual_peak,
        'one': one,
        'peak': peak,
        'upper': upper,
        'chosen': chosen,
        'mask': mask,
    }
    return res


def plot(result: Dict[str, Any], path: str, title: str = '') -> None:
    """The horizon's actual peak against every forecaster's and every
    combination's peak forecast (the default one with its upper quantile),
    the errors of all of them, and the default's chosen candidate.
    """
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    s = result['_series']
    x = np.arange(s['actual'].size)
    default = result['default']
    fig, (ax, ax2, ax3) = plt.subplots(
        3, 1, figsize=(11, 9),
        gridspec_kw={'height_ratios': [3, 2, 1]})
    ax.plot(x, s['actual'], color='0.6', linewidth=0.8, label='actual')
    ax.plot(x, s['actual_peak'], color='black', linewidth=1.4,
            label='actual peak of the next %d' % result['horizon'])
    for k in result['forecasters']:
        ax.plot(x, s['peak'][k], linewidth=0.6, alpha=0.5, label=k)
    for k in result['combinations']:
        ax.plot(x, s['peak'][k], linewidth=1.6 if k == default else 1.0,
                linestyle='-' if k == default else '--', label=k)
    ax.plot(x, s['upper'][default], color='tab:red', linewidth=0.8,
            linestyle=':', label='%s upper %g%%' % (default,
                                                    100 * result['quantile']))
    ax.set_ylabel('requests/s')
    ax.set_title(title or 'Forecast of the peak within the horizon')
    ax.legend(loc='upper left', fontsize=6, ncol=3)
    rows = list(result['forecasters'].items()) + \
        list(result['combinations'].items())
    labels = [k for k, _ in rows]
    pos = np.arange(len(rows))
    ax2.bar(pos - 0.3, [e['mape'] for _, e in rows], 0.3,
            label='1-step MAPE')
    ax2.bar(pos, [e['peak_under'] for _, e in rows], 0.3,
            label='peak under-forecast')
    ax2.bar(pos, [e['peak_over'] for _, e in rows], 0.3,
            bottom=[e['peak_under'] for _, e in rows],
            label='peak over-forecast (stacked: peak MAPE)')
    ax2.set_xticks(pos)
    ax2.set_xticklabels(labels, fontsize=7, rotation=20)
    ax2.set_ylabel('% of actual')
    ax2.legend(fontsize=7)
    cands = sorted({c for c in s['chosen'] if c})
    idx = {c: i for i, c in enumerate(cands)}
    pts = [(t, idx[c]) for t, c in enumerate(s['chosen']) if c in idx]
    if pts:
        ax3.scatter([p[0] for p in pts], [p[1] for p in pts], s=4,
                    color='tab:blue')
    ax3.set_yticks(range(len(cands)))
    ax3.set_yticklabels(cands, fontsize=7)
    ax3.set_xlim(ax.get_xlim())
    ax3.set_xlabel('time step')
    ax3.set_ylabel('%s chose' % default, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def run(trace_csv_path: str, **kwargs: Any) -> Dict[str, Dict[str, Any]]:
    """Evaluate every series (column) of a CSV trace; results keyed by
    column (the options: :func:`run_series`'s).
    """
    return run_series(read_trace(trace_csv_path), trace_csv_path, **kwargs)


def run_series(
    trace: Mapping[str, np.ndarray],
    source: str,
    columns: Optional[Sequence[str]] = None,
    horizon: Optional[int] = None,
    warmup: int = 30,
    plot_path: Optional[str] = None,
    every: int = 1,
    **kwargs: Any
) -> Dict[str, Dict[str, Any]]:
    """Evaluate every series (column) of a trace already read; results
    keyed by column (``source`` names the trace in errors).

    With ``every`` above 1 each series is first averaged ``every`` points
    at a time (:func:`elastman.predictor.history.block_means`). With
    ``plot_path`` a PNG is written per column (``out.png``, or
    ``out-<column>.png`` when there are several).
    """
    names = list(columns) if columns else list(trace)
    results = {}
    for col in names:
        if col not in trace:
            raise KeyError('no column %r in %s' % (col, source))
        res = evaluate_series(
            history_mod.block_means(trace[col], every), horizon=horizon,
            warmup=warmup, **kwargs
        )
        if plot_path:
            path = (
                plot_path
                if len(names) == 1
                else plot_path.replace('.png', '') + '-%s.png' % col
            )
            plot(res, path, title='%s: forecast of the peak within %d steps'
                 % (col, res['horizon']))
            res['plot'] = path
        results[col] = res
    return results


def format_result(column: str, res: Dict[str, Any]) -> str:
    lines = [
        '== %s: %d points, %d scored, horizon %d steps, %.1fs'
        % (column, res['points'], res['scored'], res['horizon'],
           res['seconds']),
        '%-18s %8s %8s %9s %7s %7s %8s %8s' % (
            '', '1-step', '1-step', 'peak', 'peak', 'peak', 'upper',
            'upper'),
        '%-18s %8s %8s %9s %7s %7s %8s %8s' % (
            'forecaster', 'MAPE %', 'sMAPE %', 'MAPE %', 'under', 'over',
            'covers', 'excess'),
    ]

    def row(name: str, e: Dict[str, float]) -> str:
        cover = ('%7.1f%%' % e['coverage']) if 'coverage' in e else ''
        excess = ('%7.1f%%' % e['upper_excess']) if 'upper_excess' in e \
            else ''
        return '%-18s %8.3f %8.3f %9.3f %7.3f %7.3f %8s %8s' % (
            name, e['mape'], e['smape'], e['peak_mape'], e['peak_under'],
            e['peak_over'], cover, excess)

    for name, e in sorted(res['forecasters'].items(),
                          key=lambda kv: kv[1]['peak_mape']):
        lines.append(row(name, e))
    lines.append('combination (* default; upper quantile %g)'
                 % res['quantile'])
    for name, e in res['combinations'].items():
        lines.append(row(name + ('*' if name == res['default'] else ''), e))
    best1 = min(e['mape'] for e in res['forecasters'].values())
    bestp = min(e['peak_mape'] for e in res['forecasters'].values())
    d = res['combinations'][res['default']]
    lines.append('default / best single forecaster: 1-step %.3f, peak %.3f'
                 % (d['mape'] / best1 if best1 else float('nan'),
                    d['peak_mape'] / bestp if bestp else float('nan')))
    lines.append('%s chose (step: candidate):' % res['default'])
    lines.append('  ' + ', '.join('%d: %s' % tc for tc in res['timeline']))
    if res.get('plot'):
        lines.append('plot: %s' % res['plot'])
    return '\n'.join(lines)


def _configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument(
        'trace', help='CSV trace: header, one numeric column per series'
    )
    parser.add_argument(
        '--column',
        action='append',
        dest='columns',
        help='series to evaluate (repeatable; default: all)',
    )
    parser.add_argument(
        '--step', type=float, default=None,
        help='seconds between two points of the trace (default '
             '[predictor]period); sets the default horizon and seasons')
    parser.add_argument(
        '--every', type=_positive, default=1,
        help='average this many points of the trace into one before '
             'scoring (5 on a one-minute trace: the five-minute means the '
             'predictor forecasts at its default [predictor]step); the '
             'default horizon and seasons are in steps of --step x --every')
    parser.add_argument(
        '--horizon', type=_positive, default=None,
        help='steps of the horizon whose peak is scored (default: the '
             "actuator's, a control period plus a node's join time)")
    parser.add_argument(
        '--warmup', type=_non_negative, default=30,
        help='points not scored at the start'
    )
    parser.add_argument(
        '--selection', choices=ens.MODES, default=None,
        help='the default combination (default [predictor]selection)')
    parser.add_argument(
        '--combinations',
        help='comma-separated combinations run beside it (default: all)')
    parser.add_argument(
        '--tolerance', type=_at_least_zero, default=0.05,
        help='majority/average: relative miss tolerance'
    )
    parser.add_argument(
        '--penalty', type=_unit_interval, default=0.3,
        help='majority/average: penalty factor m in [0, 1)'
    )
    parser.add_argument(
        '--discount', type=float, default=None,
        help='select/hedge: discount of the errors (default '
             '[predictor]discount)')
    parser.add_argument(
        '--eta', type=float, default=None,
        help='hedge: learning rate (default [predictor]eta)')
    parser.add_argument(
        '--relative-eta', type=float, default=None,
        help='hedge: learning rate on the excess over the best candidate\'s '
        'error, relative to it (default [predictor]relative_eta)')
    parser.add_argument(
        '--switch-discount', type=float, default=None,
        help='switch: discount of the long-run errors (default '
             '[predictor]switch_discount)')
    parser.add_argument(
        '--switch-min-rounds', type=float, default=None,
        help='switch: scored rounds a point candidate needs before it may '
             'replace hedge (default [predictor]switch_min_rounds)')
    parser.add_argument(
        '--quantile', type=_open_unit_interval, default=None,
        help='level of the upper bound (default [predictor]quantile)')
    parser.add_argument(
        '--forecasters', help='comma-separated plug-in names (default: all)'
    )
    parser.add_argument(
        '--seasonal-period',
        type=int,
        action='append',
        default=None,
        help='season length in steps (repeatable; default '
             '[predictor]seasonal_periods at --step)',
    )
    parser.add_argument(
        '--refit-interval', type=_positive, default=10, help='rounds between refits'
    )
    parser.add_argument('--plot', help='write the PNG here')
    parser.add_argument(
        '--json', action='store_true', help='print JSON instead of a table'
    )
    parser.set_defaults(func=_command)
    return parser


_positive = argtypes.bounded(int, lambda v: v >= 1, 'a whole number of at least 1')
_non_negative = argtypes.bounded(int, lambda v: v >= 0, 'a whole number of at least 0')
_at_least_zero = argtypes.bounded(float, lambda v: v >= 0, 'a number of at least 0')
_unit_interval = argtypes.bounded(float, lambda v: 0 <= v < 1, 'a number in [0, 1)')
_open_unit_interval = argtypes.bounded(float, lambda v: 0 < v < 1,
                                       'a number in (0, 1)')


def _checked_trace(args: Any) -> Tuple[Optional[Dict[str, np.ndarray]], Optional[str]]:
    """The trace ``args`` name, and why it cannot be evaluated (or None):
    the file must read and hold the columns asked for.
    """
    try:
        trace = read_trace(args.trace)
    except OSError as exc:
        return None, 'cannot read the trace %s: %s' % (args.trace,
                                                       exc.strerror or exc)
    if not trace:
        return None, 'the trace %s has no numeric column' % args.trace
    missing = [c for c in args.columns or () if c not in trace]
    if missing:
        return None, 'the trace %s has no column %s (its columns: %s)' % (
            args.trace, ', '.join(missing), ', '.join(trace))
    return trace, None


def add_subparser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``forecast-eval`` on an argparse sub-parsers object."""
    return _configure(
        subparsers.add_parser(
            'forecast-eval',
            help='replay a workload trace through the forecasters and '
            'their combinations',
        )
    )


def combination_options(group: Any, args: Any) -> dict:
    """The combination rule's options: each of ``args``' values that is
    set, else the ``[predictor]`` option of the same name in ``group``.
    """
    return {name: getattr(group, name) if getattr(args, name) is None
            else getattr(args, name) for name in combinations.OPTIONS}


def _command(args: Optional[Any] = None) -> int:
    """Run the evaluation; without ``args``, read them from ``CONF.command``.

    (``elastman-manage`` parses sub-commands with oslo.config and calls
    ``CONF.command.func()`` with no arguments.)
    """
    from elastman.conf import CONF

    if args is None:
        args = CONF.command
    names = (
        [n.strip() for n in args.forecasters.split(',')]
        if args.forecasters
        else None
    )
    rules = ([r.strip() for r in args.combinations.split(',') if r.strip()]
             if args.combinations else None)
    unknown = set(rules or ()) - set(ens.MODES)
    if unknown:
        print('unknown combinations: %s (choose from %s)'
              % (', '.join(sorted(unknown)), ', '.join(ens.MODES)),
              file=sys.stderr)
        return 2
    p = CONF.predictor
    step = float(args.step or p.period) * args.every
    ensemble_kwargs = dict(
        names=names,
        mode=args.selection or p.selection,
        tolerance=args.tolerance,
        penalty=args.penalty,
        quantile=args.quantile or p.quantile,
        quantile_gamma=p.quantile_gamma,
        combination_options=combination_options(p, args),
        seasonal_periods=(args.seasonal_period
                          if args.seasonal_period is not None
                          else default_seasons(step)),
        refit_interval=args.refit_interval,
    )
    trace, problem = _checked_trace(args)
    if problem is None:
        # the forecasters and the combination's options must be ones the
        # predictor accepts
        try:
            ens.Ensemble(**ensemble_kwargs)
        except (ValueError, exception.ConfigurationError) as exc:
            problem = str(exc)
    if problem is not None:
        print('forecast-eval: %s' % problem, file=sys.stderr)
        return 2
    results = run_series(
        trace,
        args.trace,
        columns=args.columns,
        every=args.every,
        horizon=args.horizon or default_horizon(step),
        warmup=args.warmup,
        plot_path=args.plot,
        rules=rules,
        **ensemble_kwargs,
    )
    if args.json:
        clean = {
            c: {k: v for k, v in r.items() if not k.startswith('_')}
            for c, r in results.items()
        }
        print(json.dumps(clean, indent=2))
    else:
        print('\n\n'.join(format_result(c, r) for c, r in results.items()))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = _configure(
        argparse.ArgumentParser(
            prog='forecast-eval', description=__doc__.split('\n')[0]
        )
    )
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == '__main__':
    sys.exit(main())
