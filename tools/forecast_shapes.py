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
"""The forecasters and every combination on the shipped traces and the
evaluation's load shapes, at one step and at the actuator's horizon.

Each series is what ``elastman-manage forecast-eval`` scores (the same
:func:`elastman.predictor.evaluate.evaluate_series`); this runs them all,
two at a time, and prints one summary row per series: the best single
forecaster and the default combination at one step (MAPE) and on the
horizon's peak (MAPE, under- and over-forecast), and the default's upper
quantile: its coverage and its excess (how far above the actual peak it
lies, on average, in percent). Series:

* ``tools/traces/paper_shape.csv`` (read, write) and
  ``tools/traces/synthetic_shapes.csv`` (season 48), one point a minute;
* the simulator's traces (``elastman.evaluation.traces``, scaled to 50
  VMs): paper, ramp, campaign, steps, flash, mix at one point a minute;
  weekly and seasonal (a week each) as 5-minute means, the predictor period
  of a week-long evaluation; and the concatenation of the one-minute
  shapes.

With ``--step 300`` every series is a series of 5-minute means, as
``elastman-predictor`` forecasts at its default ``[predictor] step``: the
one-minute series are averaged five minutes at a time (``@300s`` in their
names) and a season is kept where it is a whole number of steps.

The forecasters' paths are the expensive part; ``--cache DIR`` keeps them
(``.npz``) so that other combination options are scored in seconds.

Example (tables in doc/source/prediction.rst)::

    python3 tools/forecast_shapes.py --cache /tmp/paths --json out.json
    python3 tools/forecast_shapes.py --step 300 --cache /tmp/paths
"""

import argparse
import json
import multiprocessing
import os
import sys
from typing import Any, Dict, List, Tuple

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from elastman.evaluation import traces as tr  # noqa: E402
from elastman.predictor import ensemble as ens  # noqa: E402
from elastman.predictor import evaluate  # noqa: E402
from elastman.predictor.forecasters import base as forecaster_base  # noqa: E402
from elastman.predictor import history  # noqa: E402

MINUTE_SHAPES = ('paper', 'ramp', 'campaign', 'steps', 'flash', 'mix')
WEEK_SHAPES = ('weekly', 'seasonal')


def series(step: float = 60.0
           ) -> List[Tuple[str, np.ndarray, float, List[int]]]:
    """(name, values, step in seconds, seasons in steps) of every series;
    the one-minute ones as means of ``step`` seconds when it is longer.
    """
    every = max(1, int(round(step / 60.0)))
    out = [(name if every == 1 else '%s@%ds' % (name, every * 60),
            history.block_means(y, every), 60.0 * every,
            [s // every for s in seasons if s % every == 0])
           for name, y, _, seasons in minute_series()]
    for name in WEEK_SHAPES:
        t = tr.load(name, 50)
        out.append(('%s.reads@5min' % name, history.block_means(t.reads, 5),
                    300.0, [288]))
    return out


def minute_series() -> List[Tuple[str, np.ndarray, float, List[int]]]:
    """The series of one point a minute."""
    out = []
    paper = evaluate.read_trace(os.path.join(ROOT, 'tools/traces/paper_shape.csv'))
    for col in ('read', 'write'):
        out.append(('paper_shape.' + col, paper[col], 60.0, []))
    synth = evaluate.read_trace(
        os.path.join(ROOT, 'tools/traces/synthetic_shapes.csv'))
    for col, y in synth.items():
        out.append(('synthetic.' + col, y, 60.0, [48]))
    concat = []
    for name in MINUTE_SHAPES:
        t = tr.load(name, 50)
        cols = [('reads', t.reads)] + (
            [('writes', t.writes)] if name in ('paper', 'mix') else [])
        for col, y in cols:
            out.append(('%s.%s' % (name, col), np.asarray(y), 60.0, []))
        concat.append(np.asarray(t.reads))
    out.append(('all_shapes.reads', np.concatenate(concat), 60.0, []))
    return out


def _paths(job: Tuple[str, np.ndarray, float, List[int], int, str]) -> str:
    name, y, step, seasons, horizon, cache = job
    path = os.path.join(cache, '%s-h%d.npz' % (name, horizon))
    if not os.path.exists(path):
        # one BLAS thread per worker process, as the predictor runs
        forecaster_base.limit_blas_threads(1)
        paths = evaluate.replay(y, horizon, seasonal_periods=seasons)
        np.savez_compressed(path, paths=paths)
        print('replayed %s (%d points, horizon %d)' % (name, y.size, horizon),
              file=sys.stderr, flush=True)
    return path


def summary(name: str, res: Dict[str, Any]) -> Dict[str, Any]:
    fc = res['forecasters']
    best1 = min(fc, key=lambda k: fc[k]['mape'])
    bestp = min(fc, key=lambda k: fc[k]['peak_mape'])
    d = res['combinations'][res['default']]
    return {'series': name, 'scored': res['scored'], 'horizon': res['horizon'],
            'best_1step': best1, 'best_1step_mape': fc[best1]['mape'],
            'default_1step_mape': d['mape'],
            'best_peak': bestp, 'best_peak_mape': fc[bestp]['peak_mape'],
            'default_peak_mape': d['peak_mape'],
            'default_under': d['peak_under'], 'default_over': d['peak_over'],
            'coverage': d['coverage'], 'excess': d['upper_excess'],
            'combinations': {k: {m: round(v, 3) for m, v in e.items()}
                             for k, e in res['combinations'].items()},
            'forecasters': {k: {m: round(v, 3) for m, v in e.items()}
                            for k, e in fc.items()}}


def main(argv: List[str] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--cache', default=None,
                    help='directory keeping the replayed forecaster paths')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--selection', default=None,
                    help='default combination (default [predictor]selection)')
    ap.add_argument('--discount', type=float, default=None)
    ap.add_argument('--eta', type=float, default=None)
    ap.add_argument('--relative-eta', type=float, default=None,
                    help='default [predictor]relative_eta')
    ap.add_argument('--switch-discount', type=float, default=None,
                    help='default [predictor]switch_discount')
    ap.add_argument('--switch-min-rounds', type=float, default=None,
                    help='default [predictor]switch_min_rounds')
    ap.add_argument('--quantile-gamma', type=float, default=None,
                    help='step of the upper bound\'s level adaptation '
                    '(default [predictor]quantile_gamma)')
    ap.add_argument('--only', default=None,
                    help='comma-separated series-name prefixes')
    ap.add_argument('--json', default=None, help='write every figure here')
    ap.add_argument('--step', type=float, default=60.0,
                    help='seconds of one point of the one-minute series: '
                    'longer averages them (300: the predictor\'s default '
                    'step)')
    args = ap.parse_args(argv)
    from elastman.conf import CONF
    CONF([], project='elastman')
    p = CONF.predictor
    cache = args.cache or os.path.join('/tmp', 'elastman-forecast-paths')
    os.makedirs(cache, exist_ok=True)
    todo = series(args.step)
    if args.only:
        pre = tuple(args.only.split(','))
        todo = [s for s in todo if s[0].startswith(pre)]
    jobs = [(n, y, step, seasons, evaluate.default_horizon(step), cache)
            for n, y, step, seasons in todo]
    with multiprocessing.Pool(max(1, args.jobs)) as pool:
        files = pool.map(_paths, jobs, chunksize=1)
    opts = evaluate.combination_options(p, args)
    rows = []
    for (name, y, step, seasons, h, _), f in zip(jobs, files):
        data = np.load(f, allow_pickle=True)
        e = ens.Ensemble(mode=args.selection or p.selection,
                         combination_options=opts, quantile=p.quantile,
                         quantile_gamma=(p.quantile_gamma
                                         if args.quantile_gamma is None
                                         else args.quantile_gamma))
        res = evaluate.evaluate_series(y, horizon=h, ensemble=e,
                                       paths=data['paths'])
        rows.append(summary(name, res))
    fmt = ('%-26s %4s %-15s %6s %6s %5s | %-15s %6s %6s %5s %5s %5s %5s '
           '%6s')
    print(fmt % ('series', 'h', 'best 1-step', 'MAPE', 'dflt', 'ratio',
                 'best peak', 'MAPE', 'dflt', 'ratio', 'under', 'over',
                 'cover', 'excess'))
    for r in rows:
        print(fmt % (r['series'], r['horizon'], r['best_1step'],
                     '%.2f' % r['best_1step_mape'],
                     '%.2f' % r['default_1step_mape'],
                     '%.3f' % (r['default_1step_mape'] / r['best_1step_mape']),
                     r['best_peak'], '%.2f' % r['best_peak_mape'],
                     '%.2f' % r['default_peak_mape'],
                     '%.3f' % (r['default_peak_mape'] / r['best_peak_mape']),
                     '%.2f' % r['default_under'], '%.2f' % r['default_over'],
                     '%.1f' % r['coverage'], '%.1f' % r['excess']))
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
