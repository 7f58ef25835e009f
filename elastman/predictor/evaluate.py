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
"""Offline evaluation of the forecasters and the ensemble over a trace.

Every forecaster and the weighted-majority ensemble (both ``majority`` and
``average`` modes, which share one set of weights) are replayed over a trace
one point at a time, exactly as the predictor worker would see it.  Errors
are measured on the points where every forecaster had a forecast, after a
warm-up, so the numbers compare like with like.

Usage: ``python -m elastman.predictor.evaluate TRACE.csv [--plot out.png]``
(also ``elastman-manage forecast-eval``).  A trace is a CSV file with a header;
a column named ``timestamp``/``time``/``t`` is ignored, every other numeric
column is a series.
"""

import argparse
import csv
import json
import sys
import time
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from elastman.predictor import ensemble as ens

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


def evaluate_series(
    values: Sequence[float],
    horizon: int = 1,
    warmup: int = 30,
    window: int = 4032,
    ensemble: Optional[ens.Ensemble] = None,
    **ensemble_kwargs: Any
) -> Dict[str, Any]:
    """Replay ``values`` through an ensemble; errors and chosen timeline."""
    e = ensemble or ens.Ensemble(**ensemble_kwargs)
    y = np.asarray(values, dtype=float)
    names = e.names
    n, h = y.size, max(1, int(horizon))
    pred = {k: np.full(n, np.nan) for k in names + ['majority', 'average']}
    chosen: List[Optional[str]] = [None] * n
    started = time.perf_counter()
    for t in range(1, n):
        f = e.predict('eval', y[max(0, t - window):t], horizon=h)
        target = t + h - 1  # the point this round's last step forecasts
        if target >= n or not f.values:
            continue
        chosen[target] = f.chosen
        pred['majority'][target] = f.values[h - 1]
        for k, p in f.predictions.items():
            pred[k][target] = p[h - 1]
        if f.predictions:
            w = np.array([f.weights[k] for k in f.predictions])
            pred['average'][target] = float(
                np.dot(w, [p[h - 1] for p in f.predictions.values()]) / w.sum()
            )
    elapsed = time.perf_counter() - started
    actual = y
    mask = np.isfinite(actual) & (np.arange(n) >= warmup)
    for k in pred:
        mask &= np.isfinite(pred[k])
    res: Dict[str, Any] = {
        'points': int(n),
        'scored': int(mask.sum()),
        'horizon': h,
        'seconds': round(elapsed, 3),
        'forecasters': {},
    }
    for k in pred:
        entry = {
            'mape': mape(actual[mask], pred[k][mask]),
            'smape': smape(actual[mask], pred[k][mask]),
        }
        if k in names:
            res['forecasters'][k] = entry
        else:
            res[k] = entry
    timeline = []
    for t, c in enumerate(chosen):
        if c is not None and (not timeline or timeline[-1][1] != c):
            timeline.append((t, c))
    res['timeline'] = timeline
    res['chosen_counts'] = {
        c: chosen.count(c) for c in sorted({c for c in chosen if c})
    }
    res['_series'] = {
        'actual': actual,
        'predicted': pred,
        'chosen': chosen,
        'mask': mask,
    }
    return res


def plot(result: Dict[str, Any], path: str, title: str = '') -> None:
    """Actual vs predicted, and the chosen forecaster (cf. Figure 3.13)."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    s = result['_series']
    x = np.arange(s['actual'].size)
    fig, (ax, ax2) = plt.subplots(
        2,
        1,
        sharex=True,
        figsize=(10, 6),
        gridspec_kw={'height_ratios': [3, 1]},
    )
    ax.plot(x, s['actual'], label='actual', color='black', linewidth=1.2)
    ax.plot(
        x,
        s['predicted']['majority'],
        label='predicted (weighted majority, MAPE %.2f%%)'
        % result['majority']['mape'],
        color='tab:red',
        linewidth=1,
        linestyle='--',
    )
    ax.set_ylabel('requests/s')
    ax.legend(loc='upper left')
    ax.set_title(title or 'Workload prediction: actual vs predicted')
    names = sorted(result['forecasters'])
    idx = {n: i for i, n in enumerate(names)}
    pts = [(t, idx[c]) for t, c in enumerate(s['chosen']) if c in idx]
    if pts:
        ax2.scatter(
            [p[0] for p in pts], [p[1] for p in pts], s=4, color='tab:blue'
        )
    ax2.set_yticks(range(len(names)))
    ax2.set_yticklabels(names, fontsize=7)
    ax2.set_xlabel('time step')
    ax2.set_ylabel('chosen')
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def run(
    trace_csv_path: str,
    columns: Optional[Sequence[str]] = None,
    horizon: int = 1,
    warmup: int = 30,
    plot_path: Optional[str] = None,
    **ensemble_kwargs: Any
) -> Dict[str, Dict[str, Any]]:
    """Evaluate every series (column) of a CSV trace; results keyed by column.

    With ``plot_path`` a PNG is written per column (``out.png``, or
    ``out-<column>.png`` when there are several).
    """
    trace = read_trace(trace_csv_path)
    names = list(columns) if columns else list(trace)
    results = {}
    for col in names:
        if col not in trace:
            raise KeyError('no column %r in %s' % (col, trace_csv_path))
        res = evaluate_series(
            trace[col], horizon=horizon, warmup=warmup, **ensemble_kwargs
        )
        if plot_path:
            path = (
                plot_path
                if len(names) == 1
                else plot_path.replace('.png', '') + '-%s.png' % col
            )
            plot(res, path, title='%s: actual vs predicted' % col)
            res['plot'] = path
        results[col] = res
    return results


def format_result(column: str, res: Dict[str, Any]) -> str:
    lines = [
        '== %s: %d points, %d scored, horizon %d, %.1fs'
        % (
            column,
            res['points'],
            res['scored'],
            res['horizon'],
            res['seconds'],
        ),
        '%-18s %9s %9s' % ('forecaster', 'MAPE %', 'sMAPE %'),
    ]
    rows = sorted(res['forecasters'].items(), key=lambda kv: kv[1]['mape'])
    rows += [('ensemble/' + k, res[k]) for k in ('majority', 'average')]
    for name, e in rows:
        lines.append('%-18s %9.3f %9.3f' % (name, e['mape'], e['smape']))
    lines.append('chosen-forecaster timeline (step: forecaster):')
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
        '--horizon', type=int, default=1, help='steps ahead to score'
    )
    parser.add_argument(
        '--warmup', type=int, default=30, help='points not scored at the start'
    )
    parser.add_argument(
        '--tolerance', type=float, default=0.05, help='relative miss tolerance'
    )
    parser.add_argument(
        '--penalty', type=float, default=0.3, help='penalty factor m in [0, 1)'
    )
    parser.add_argument(
        '--forecasters', help='comma-separated plug-in names (default: all)'
    )
    parser.add_argument(
        '--seasonal-period',
        type=int,
        action='append',
        default=[],
        help='season length in steps (repeatable)',
    )
    parser.add_argument(
        '--refit-interval', type=int, default=10, help='rounds between refits'
    )
    parser.add_argument('--plot', help='write actual vs predicted PNG here')
    parser.add_argument(
        '--json', action='store_true', help='print JSON instead of a table'
    )
    parser.set_defaults(func=_command)
    return parser


def add_subparser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``forecast-eval`` on an argparse sub-parsers object."""
    return _configure(
        subparsers.add_parser(
            'forecast-eval',
            help='replay a workload trace through the forecasters and '
            'the ensemble',
        )
    )


def _command(args: Optional[Any] = None) -> int:
    """Run the evaluation; without ``args``, read them from ``CONF.command``.

    (``elastman-manage`` parses sub-commands with oslo.config and calls
    ``CONF.command.func()`` with no arguments.)
    """
    if args is None:
        from elastman.conf import CONF

        args = CONF.command
    names = (
        [n.strip() for n in args.forecasters.split(',')]
        if args.forecasters
        else None
    )
    results = run(
        args.trace,
        columns=args.columns,
        horizon=args.horizon,
        warmup=args.warmup,
        plot_path=args.plot,
        names=names,
        tolerance=args.tolerance,
        penalty=args.penalty,
        seasonal_periods=args.seasonal_period,
        refit_interval=args.refit_interval,
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
