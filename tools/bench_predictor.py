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
"""Cost of one prediction round of elastman-predictor for many clusters.

Each cluster has two series (read and write intensity) with a full history
window of synthetic workload (daily + weekly season, trend, noise, the odd
flash crowd).  The clusters are split over ``--workers`` processes, as the
predictor workers partition clusters.  Reported:

* first round: the very first round, every forecaster of every series does
  a full parameter estimation (no stored state: a new deployment);
* steady rounds: the following rounds (refits spread over rounds by the
  per-series refit offset), mean and max wall time;
* restarted round: each worker's ensemble state goes through JSON as the
  predictor stores it (``Ensemble.state`` every round and
  ``Ensemble.fitted_state`` after full fits), a new ensemble takes it up
  (``load_state``) and forecasts the next point: the cold round of a
  restarted predictor;
* peak resident memory per worker.

Example (numbers in doc/source/prediction.rst)::

    python3 tools/bench_predictor.py --clusters 1000 --period 300 \
        --rounds 5 --workers 2
"""

import argparse
import json
import multiprocessing
import os
import resource
import sys
import time

import numpy as np
from scipy import signal

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
)

from elastman.predictor import ensemble as ens  # noqa: E402
from elastman.predictor.forecasters import base  # noqa: E402


def synthetic_cluster(seed: int, n: int, period: float) -> dict:
    """Read and write intensity of one cluster, ``n`` points."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) * period
    day, week = 86400.0, 7 * 86400.0
    out = {}
    for metric, level in (
        ('read', rng.uniform(500, 20000)),
        ('write', rng.uniform(100, 5000)),
    ):
        y = level * (
            1
            + rng.uniform(0.1, 0.5)
            * np.sin(2 * np.pi * t / day + rng.uniform(0, 6))
            + rng.uniform(0.0, 0.2) * np.sin(2 * np.pi * t / week)
            + rng.uniform(-0.2, 0.2) * t / t[-1]
        )
        e = rng.normal(0, rng.uniform(0.01, 0.05), n)
        y *= 1 + signal.lfilter([1.0], [1.0, -0.7], e)  # AR(1) noise
        if rng.random() < 0.2:  # a flash crowd
            at = rng.integers(n // 2, n)
            y[at:] *= 1 + 2 * np.exp(-np.arange(n - at) / 20.0)
        out[metric] = np.maximum(y, 1.0)
    return out


def _worker(args: tuple) -> dict:
    ids, history, rounds, period, names, blas_threads, mode = args
    # as the predictor worker does with [predictor] blas_threads
    base.limit_blas_threads(blas_threads)
    day, week = int(86400 // period), int(7 * 86400 // period)

    def new():
        return ens.Ensemble(names=names, horizon=10, mode=mode,
                            seasonal_periods=[day, week])
    e = new()
    data = {c: synthetic_cluster(c, history + rounds + 1, period)
            for c in ids}
    times, cpu = [], []
    chosen = {}
    # what the predictor writes after each round: the state every round,
    # the fitted (large) state after a full fit of its forecaster
    stored: dict = {}
    state_bytes, fitted_bytes = [], []

    def one_round(e, r, save):
        start, start_cpu = time.perf_counter(), time.process_time()
        for c in ids:
            for metric, y in data[c].items():
                f = e.predict((c, metric), y[r:history + r])
                chosen[f.chosen] = chosen.get(f.chosen, 0) + 1
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        if not save:
            return
        written = [0, 0]
        for c in ids:
            for metric in data[c]:
                key = (c, metric)
                doc = json.dumps(e.state(key))
                fitted = e.fitted_state(key)
                written[0] += len(doc)
                entry = stored.setdefault(key, [None, None])
                entry[0] = doc
                if fitted is not None:
                    entry[1] = json.dumps(fitted)
                    written[1] += len(entry[1])
        state_bytes.append(written[0])
        fitted_bytes.append(written[1])

    for r in range(rounds + 1):
        one_round(e, r, save=True)
    # a restart: a new ensemble takes up the stored states
    del e
    e = new()
    start_cpu = time.process_time()
    for key, (doc, fitted) in stored.items():
        e.load_state(key, json.loads(doc),
                     None if fitted is None else json.loads(fitted))
    load_cpu = time.process_time() - start_cpu
    one_round(e, rounds + 1, save=False)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return {
        'times': times,
        'cpu': cpu,
        'load_cpu': load_cpu,
        'rss_mb': rss,
        'series': 2 * len(ids),
        'chosen': chosen,
        'state_bytes': state_bytes,
        'fitted_bytes': fitted_bytes,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--clusters', type=int, default=1000)
    p.add_argument(
        '--period', type=float, default=300.0, help='control period, seconds'
    )
    p.add_argument(
        '--history',
        type=int,
        default=None,
        help='points per series (default: [predictor]history_window, 4032)',
    )
    p.add_argument(
        '--rounds',
        type=int,
        default=20,
        help='steady rounds after the cold one',
    )
    p.add_argument('--workers', type=int, default=2, help='processes')
    p.add_argument(
        '--blas-threads', type=int, default=1,
        help='BLAS threads per process, as [predictor] blas_threads '
        '(default 1; 0: the library default, one per core)',
    )
    p.add_argument(
        '--forecasters', help='comma-separated plug-ins (default: all)'
    )
    p.add_argument(
        '--selection', choices=ens.MODES, default=ens.DEFAULT_MODE,
        help='the combination, as [predictor] selection (default %(default)s)'
    )
    a = p.parse_args(argv)
    history = a.history or 4032
    names = a.forecasters.split(',') if a.forecasters else None
    parts = [list(range(a.clusters))[i:: a.workers] for i in range(a.workers)]
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    with multiprocessing.get_context('fork').Pool(a.workers) as pool:
        res = pool.map(
            _worker,
            [(ids, history, a.rounds, a.period, names, a.blas_threads,
              a.selection) for ids in parts],
        )
    total = time.perf_counter() - t0
    rounds = np.max(
        [r['times'] for r in res], axis=0
    )  # workers run side by side
    restarted = rounds[-1]
    rounds = rounds[:-1]
    steady = rounds[1:]
    # CPU seconds of the busiest worker: the wall time of a round on an
    # otherwise idle machine with one core per worker (the wall clock is
    # only meaningful when nothing else runs).
    cpu = np.max([r['cpu'] for r in res], axis=0)
    cpu_total = np.sum([r['cpu'] for r in res], axis=0)
    cpu_restarted, cpu = cpu[-1], cpu[:-1]
    total_restarted, cpu_total = cpu_total[-1], cpu_total[:-1]
    series = sum(r['series'] for r in res)
    chosen = {}
    for r in res:
        for k, v in r['chosen'].items():
            chosen[k] = chosen.get(k, 0) + v
    print(
        'clusters=%d series=%d history=%d points period=%gs workers=%d cpus=%d'
        % (a.clusters, series, history, a.period, a.workers, os.cpu_count())
    )
    print('load average before: %.1f; BLAS threads per worker: %s; '
          'combination: %s'
          % (load, a.blas_threads or 'library default', a.selection))
    print(
        'first round (all full fits): wall %.1f s, CPU %.1f s busiest '
        'worker, %.1f s total'
        % (rounds[0], cpu[0], cpu_total[0])
    )
    if steady.size:
        print(
            'steady round: wall mean %.1f s max %.1f s; CPU busiest '
            'worker mean %.1f s max %.1f s;'
            ' %.2f CPU-ms per series-round; %d rounds'
            % (
                steady.mean(),
                steady.max(),
                cpu[1:].mean(),
                cpu[1:].max(),
                1000 * cpu_total[1:].mean() / series,
                steady.size,
            )
        )
        print(
            'fits within the control period: %s (busiest worker CPU '
            '%.0f%% of %gs at worst)'
            % (
                cpu[1:].max() < a.period,
                100 * cpu[1:].max() / a.period,
                a.period,
            )
        )
    if steady.size:
        print(
            'restarted round (stored states taken up): wall %.1f s, CPU '
            '%.1f s busiest worker, %.1f s total, %.2f CPU-ms per series; '
            '%.2fx the steady round\'s CPU; taking up the states: %.2f '
            'CPU-s busiest worker'
            % (restarted, cpu_restarted, total_restarted,
               1000 * total_restarted / series,
               total_restarted / cpu_total[1:].mean(),
               max(r['load_cpu'] for r in res))
        )
        state = np.sum([r['state_bytes'] for r in res], axis=0)
        fitted = np.sum([r['fitted_bytes'] for r in res], axis=0)
        print(
            'stored per round: state %.1f KB per series (every round); '
            'fitted states %.1f KB per series and round (mean of steady '
            'rounds; %.1f KB in the first round)'
            % (state[1:].mean() / 1024 / series,
               fitted[1:].mean() / 1024 / series,
               fitted[0] / 1024 / series)
        )
    print(
        'peak RSS per worker: %s MB'
        % ', '.join('%.0f' % r['rss_mb'] for r in res)
    )
    print(
        'chosen forecasters: %s'
        % ', '.join('%s=%d' % kv for kv in sorted(chosen.items()))
    )
    print('total wall time (including data generation): %.0f s' % total)
    return 0


if __name__ == '__main__':
    sys.exit(main())
