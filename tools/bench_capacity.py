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
"""Benchmark of the capacity model: refit cost, query cost, memory per model.

Builds one cluster with ``--vms`` VMs of one flavour, each with ``--cells``
occupied grid cells (``--samples`` samples each, labelled by a noisy plane
whose capacity differs by VM), then times one full ModelRegistry.refit over a
process pool of ``--workers`` (VM models plus the pooled flavour model), and
the capacity query of a linear and an RBF model.

    python3 tools/bench_capacity.py --vms 1000 --cells 2000 --workers 2
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from elastman.capacity import capacity as cap  # noqa: E402
from elastman.capacity.grid import CellGrid  # noqa: E402
from elastman.capacity import model as model_mod  # noqa: E402
from elastman.capacity.params import ModelParams  # noqa: E402
from elastman.capacity.registry import ModelRegistry  # noqa: E402
from elastman.capacity import serialization as ser  # noqa: E402

GRAN = {'read_rate': 100, 'write_rate': 100, 'data_size': 512}


def fill_grid(grid: CellGrid, cells: int, samples: int, rng, factor: float) -> None:
    """``cells`` distinct cells around a plane r/R + w/W + s/S = 1."""
    g = grid.granularity
    keys = set()
    while len(keys) < cells:
        share, size = rng.uniform(0, 1), rng.uniform(256, 8192)
        u = rng.uniform(0.1, 1.8)
        capacity = factor * (1 - size / 16384) / (share / 8000 + (1 - share) / 12000)
        p = (u * capacity * share, u * capacity * (1 - share), size)
        key = grid.key_of(p)
        if key in keys:
            continue
        keys.add(key)
        util = p[0] / (8000 * factor) + p[1] / (12000 * factor) + size / (16384 * factor)
        for i in range(samples):
            lat = 35.0 * util * rng.lognormal(0, 0.25)
            grid.add((np.asarray(key) + 0.5) * g, lat, 1e6 - rng.uniform(0, 3600))


def bench_refit(args) -> dict:
    params = ModelParams(granularity=GRAN, kernel=args.kernel, solver=args.solver)
    reg = ModelRegistry('bench', params)
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    for i in range(args.vms):
        node = 'vm-%04d' % i
        reg.register_node(node, 'm1.large')
        fill_grid(reg.grids[node], args.cells, args.samples, rng, rng.uniform(0.8, 1.2))
    build = time.perf_counter() - t0
    with concurrent.futures.ProcessPoolExecutor(args.workers) as pool:
        list(pool.map(abs, range(args.workers)))          # start the workers
        t0 = time.perf_counter()
        updates = reg.refit(now=1e6, executor=pool)
        refit = time.perf_counter() - t0
    kinds = {}
    for u in updates:
        kinds[u.model.kind] = kinds.get(u.model.kind, 0) + 1
    flavor = reg.flavor_model('m1.large')
    return {'vms': args.vms, 'cells_per_vm': args.cells, 'samples_per_cell': args.samples,
            'kernel': args.kernel, 'solver': args.solver, 'workers': args.workers,
            'build_s': round(build, 1), 'refit_s': round(refit, 1),
            'refit_per_model_ms': round(1000 * refit / max(1, len(updates)), 2),
            'models_updated': len(updates), 'kinds': kinds,
            'flavor_cells': flavor.n_cells if flavor else 0,
            'mean_train_accuracy': round(float(np.mean(
                [u.model.train_accuracy for u in updates if u.model.two_class]
                or [np.nan])), 4)}


def bench_query_and_memory(args) -> dict:
    rng = np.random.default_rng(1)
    params = ModelParams(granularity=GRAN, buffer_size=10)
    tracemalloc.start()
    grid = CellGrid(params.granularity_vector(), params.buffer_size)
    fill_grid(grid, args.cells, args.samples, rng, 1.0)
    grid_bytes = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    x, y, w = grid.labelled(35.0, 0.5, now=1e6, half_life=300.0)
    out = {'grid_bytes_per_vm': grid_bytes,
           'grid_state_bytes_per_vm': len(ser.dumps(grid.to_dict()))}
    for kernel, c in (('linear', 1.0), ('rbf', 30.0)):
        p = params.replace(kernel=kernel, svm_c=c)
        t0 = time.perf_counter()
        m = model_mod.fit(x, y, p, [True, True, False], weights=w)
        fit_s = time.perf_counter() - t0
        pts = np.c_[rng.uniform(0, 4000, 2000), rng.uniform(0, 4000, 2000),
                    rng.uniform(256, 8192, 2000)]
        t0 = time.perf_counter()
        for q in pts:
            cap.capacity(m, q)
        per_q = (time.perf_counter() - t0) / len(pts)
        out[kernel] = {'fit_ms_single': round(1000 * fit_s, 1),
                       'query_us': round(1e6 * per_q, 1),
                       'model_json_bytes': len(ser.dumps(ser.model_to_dict(m))),
                       'support_vectors': 0 if m.support is None else len(m.support)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--vms', type=int, default=1000)
    ap.add_argument('--cells', type=int, default=2000)
    ap.add_argument('--samples', type=int, default=3, help='samples per cell')
    ap.add_argument('--workers', type=int, default=2)
    ap.add_argument('--kernel', default='linear')
    ap.add_argument('--solver', default='auto')
    ap.add_argument('--skip-refit', action='store_true')
    args = ap.parse_args()
    result = {'query_and_memory': bench_query_and_memory(args)}
    print(json.dumps(result, indent=1), flush=True)
    if not args.skip_refit:
        result['refit'] = bench_refit(args)
    print(json.dumps(result, indent=1))


if __name__ == '__main__':
    main()
