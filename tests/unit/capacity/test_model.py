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
"""Grid, fit, capacity search, one-class bounds, serialisation, validation."""
import math
import time

import numpy as np
import pytest

from elastman.capacity import capacity as cap
from elastman.capacity import features
from elastman.capacity.grid import CellGrid
from elastman.capacity.grid import pool
from elastman.capacity.grid import prune_conflicts
from elastman.capacity import model
from elastman.capacity.params import InvalidParams
from elastman.capacity.params import ModelParams
from elastman.capacity import serialization as ser
from elastman.capacity.validation import check_sample
from elastman.capacity.validation import InvalidSample

MASK = [True, True, False]
P = ModelParams(granularity={'read_rate': 100, 'write_rate': 100, 'data_size': 512})


def _plane_cells(kernel='linear', **kw):
    """Cells labelled by the plane r/4000 + w/6000 + s/16384 <= 1."""
    rng = np.random.default_rng(3)
    x = np.c_[rng.uniform(0, 8000, 1500), rng.uniform(0, 12000, 1500),
              rng.uniform(0, 8192, 1500)]
    y = np.where(x[:, 0] / 4000 + x[:, 1] / 6000 + x[:, 2] / 16384 <= 1, 1, -1)
    return x, y, model.fit(x, y, P.replace(kernel=kernel, **kw), MASK)


def test_features_from_stevedore_and_data_size_weighting():
    feats = features.load_features(['read_rate', 'write_rate', 'data_size'])
    assert [f.name for f in feats] == ['read_rate', 'write_rate', 'data_size']
    s = {'reads_per_s': 300, 'writes_per_s': 100, 'read_bytes_mean': 1000,
         'write_bytes_mean': 5000}
    assert features.extract_point(feats, s) == [300.0, 100.0, 2000.0]
    assert features.DataSize().extract({'reads_per_s': 0, 'writes_per_s': 0,
                                        'read_bytes_mean': 100}) == 100.0
    assert math.isnan(features.ReadRate().extract({'reads_per_s': 'x'}))


def test_params_validation_and_dict_round_trip():
    with pytest.raises(InvalidParams):
        ModelParams(confidence=0)
    with pytest.raises(InvalidParams):
        ModelParams(kernel='sigmoid')
    with pytest.raises(InvalidParams):
        ModelParams(granularity={'read_rate': -1})
    with pytest.raises(InvalidParams):
        ModelParams.from_dict({'bogus': 1})
    with pytest.raises(InvalidParams, match='recency_floor'):
        ModelParams(recency_floor=1.5)
    p = ModelParams(svm_c=2.0, features=('read_rate', 'write_rate'))
    assert ModelParams.from_dict(p.to_dict()) == p


def test_grid_is_sparse_keeps_last_n_and_labels_flip_both_ways():
    g = CellGrid([100, 100, 512], buffer_size=4)
    for v in (10, 10, 10, 10):
        g.add([150, 50, 700], v, 0)
    g.add([10_000_000, 0, 0], 50, 0)                 # far away: one more cell
    assert len(g) == 2
    key = g.key_of([150, 50, 700])
    assert key == (1, 0, 1)
    _, y, _ = g.labelled(35, 0.5, prune=False)
    assert sorted(y.tolist()) == [-1, 1]
    for v in (50, 50, 50):                          # 1 met of the last 4
        g.add([150, 50, 700], v, 1)
    assert g.cell_values(key) == [10, 50, 50, 50]
    x, y, _ = g.labelled(35, 0.5, prune=False)
    assert (y == -1).all()                          # met -> violated
    for v in (10, 10, 10):
        g.add([150, 50, 700], v, 2)
    x, y, _ = g.labelled(35, 0.5, prune=False)
    assert y[np.argmin(x[:, 0])] == 1               # violated -> met again


def test_old_met_cells_keep_the_recency_floor():
    """A met cell an hour older than the newest weighs 2^-12 without a
    floor and the floor with one, in a VM's grid and in a flavour's pool; a
    violated cell weighs 1 at any age (keep_violated).
    """
    one = CellGrid([100, 100, 512], buffer_size=4)
    old = CellGrid([100, 100, 512], buffer_size=4)
    new = CellGrid([100, 100, 512], buffer_size=4)
    for grid in (one, old):
        grid.add([100, 100, 100], 5, 0)      # met, an hour old
        grid.add([900, 900, 100], 50, 0)     # violated, as old
    for grid in (one, new):
        grid.add([200, 200, 100], 5, 3600)   # met, newest
    kw = dict(now=3600, half_life=300, prune=False, keep_violated=True)
    for floor, weight in ((0.0, 2 ** -12), (0.5, 0.5)):
        _, labels, w = one.labelled(35, 0.5, weight_floor=floor, **kw)
        assert labels.tolist() == [1, -1, 1]
        np.testing.assert_allclose(w, [weight, 1.0, 1.0])
        _, labels, w = pool([old, new], 35, 0.5, weight_floor=floor, **kw)
        assert labels.tolist() == [1, -1, 1]
        np.testing.assert_allclose(w, [weight, 1.0, 1.0])


def test_grid_round_trip_and_pruning():
    g = CellGrid([100, 100, 512], buffer_size=3)
    g.add([500, 500, 100], 50, 10)       # violated, newer
    g.add([900, 900, 600], 5, 1)         # met at more load, older: contradicted
    g.add([100, 100, 100], 5, 2)
    keys, labels = g.keys(), np.array([-1, 1, 1])
    assert prune_conflicts(keys, labels, g.last_seen()).tolist() == [True, False, True]
    h = CellGrid.from_dict(ser.loads(ser.dumps(g.to_dict())))
    for a, b in zip(g.labelled(35, 0.5), h.labelled(35, 0.5)):
        np.testing.assert_allclose(a, b)
    h.add([500, 500, 100], 1, 20)
    assert h.cell_values((5, 5, 0)) == [50, 1]


def test_linear_capacity_is_the_plane_crossing():
    _, _, m = _plane_cells()
    assert m.two_class and m.train_accuracy > 0.97
    for share, size in ((0.2, 1024), (0.5, 4096), (0.9, 2048)):
        truth = (1 - size / 16384) / (share / 4000 + (1 - share) / 6000)
        est = cap.capacity(m, [share * 100, (1 - share) * 100, size])
        assert est.bound == cap.EXACT
        assert est.capacity == pytest.approx(truth, rel=0.05)
        assert est.distance > 0 and not est.violated       # 100 req/s: far inside
        far = cap.capacity(m, [share * 2 * truth, (1 - share) * 2 * truth, size])
        assert far.distance < 0 and far.violated
        assert far.excess == pytest.approx(1.0, rel=0.1)


def test_a_coordinate_every_cell_shares_does_not_blow_up_a_query():
    """Cells that all sit at interference 0.05 (the centre of the first 0.1
    cell) have a std of rounding noise: a query at 0.0 must still get the
    capacity of the other three coordinates, not 0.
    """
    x, y, base = _plane_cells()
    shared = np.full(len(x), 0.05)
    shared += np.where(np.arange(len(x)) % 2, 1e-17, 0.0)   # rounding noise
    params = P.replace(features=('read_rate', 'write_rate', 'data_size',
                                 'interference_index'),
                       granularity=dict(P.granularity, interference_index=0.1))
    m = model.fit(np.c_[x, shared], y, params, MASK + [False])
    assert 0 < m.scale[3] and m.scale[3] == 1.0
    for index in (0.0, 0.05):
        est = cap.capacity(m, [20, 80, 2048, index])
        truth = cap.capacity(base, [20, 80, 2048])
        assert est.capacity == pytest.approx(truth.capacity, rel=0.05)


def _confounded(met_writes, violated_reads_from=1900, met_reads_to=1900):
    met = [[r, w, 1024.0] for r in range(1000, met_reads_to, 100)
           for w in met_writes]
    violated = [[r, w, 1024.0] for r in range(violated_reads_from, 2400, 100)
                for w in (0, 100, 200)]
    return (np.array(met + violated, dtype=float),
            np.array([1] * len(met) + [-1] * len(violated)))


def test_more_load_never_meets_the_slo_better():
    """Met cells that all carry many writes and violated ones that carry few
    (a mix that moves with the load) teach an unconstrained SVM that writes
    help: its capacity along every ray is 0. ``drop`` leaves writes out and
    gives a boundary that every ray crosses beyond the met cells; ``total``
    falls back to it where the cells' totals do not separate either.
    """
    x, y = _confounded((800, 900))
    free = model.fit(x, y, P.replace(monotone='off'), MASK)
    assert free.coef[1] > 0
    assert cap.capacity(free, [700, 300, 1024]).capacity == 0.0
    dropped = model.fit(x, y, P.replace(monotone='drop'), MASK)
    assert dropped.coef[1] == 0 and dropped.coef[0] < 0
    assert dropped.train_accuracy == 1.0
    for share in (0.5, 0.7, 0.9):
        est = cap.capacity(dropped, [share * 100, (1 - share) * 100, 1024])
        # the ray leaves the met cells' reads (up to 1,800/s) behind
        assert est.bound == cap.EXACT and est.capacity * share > 1800
    total = model.fit(x, y, P.replace(monotone='total'), MASK)
    assert total.coef == pytest.approx(dropped.coef)


def test_the_total_load_weighs_every_request_alike():
    x, y = _confounded((500, 600), met_reads_to=1700)
    assert model.fit(x, y, P.replace(monotone='off'), MASK).coef[1] > 0
    total = model.fit(x, y, P, MASK)
    assert P.monotone == 'total'          # the default
    per_request = total.coef[:2] / total.scale[:2]
    assert (per_request < 0).all()
    assert per_request[0] == pytest.approx(per_request[1])
    capacities = [cap.capacity(total, [s * 100, (1 - s) * 100, 1024]).capacity
                  for s in (0.5, 0.7, 0.9)]
    assert capacities == pytest.approx([capacities[0]] * 3)
    assert 1700 < capacities[0] < 2500    # between the met and violated totals


# A CI run of tests/functional/trainer/test_real_capacity.py: one node stepped
# 100 -> 175 -> 250 -> 350 offered req/s (75% reads), two monitor samples a
# step, SLO 250 ms on the read p99; 50 req/s cells.
STEPPED = [((75, 25, 52), 51), ((74, 24, 52), 35), ((127, 42, 52), 152),
           ((135, 45, 52), 263), ((177, 59, 52), 263), ((189, 63, 52), 379),
           ((222, 74, 52), 455), ((213, 71, 52), 546)]


@pytest.mark.parametrize('one_met', [True, False])
def test_few_cells_put_the_boundary_between_the_classes(one_met):
    """With a handful of separable cells the boundary lies between the last
    met cell and the first violated one, whichever class has more cells. At
    C=1 one met cell against three violated ones put it at 70 req/s, under
    the 99 req/s the node had just served within the SLO.
    """
    p = P.replace(granularity={'read_rate': 50, 'write_rate': 50, 'data_size': 4096},
                  slo_threshold_ms=250.0)
    g = CellGrid(p.granularity_vector(), buffer_size=10)
    samples = STEPPED if one_met else [(pt, 0.5 * v) for pt, v in STEPPED[:6]] + STEPPED[6:]
    for ts, (point, p99) in enumerate(samples):
        g.add(point, p99, 10.0 * ts)
    x, y, w = g.labelled(250.0, p.confidence, now=10.0 * len(samples), half_life=300.0)
    assert sorted(y.tolist()) == ([-1, -1, -1, 1] if one_met else [-1, 1, 1, 1])
    m = model.fit(x, y, p, MASK, weights=w)
    met_read = x[y > 0, 0].max()
    violated_read = x[y < 0, 0].min()
    est = cap.capacity(m, [74.0, 25.0, 52.0])
    read_at_capacity = est.point[0]
    assert met_read < read_at_capacity < violated_read, (x, y, est)


def test_rbf_root_search_agrees_and_query_is_fast():
    _, _, m = _plane_cells('rbf', svm_c=30.0)
    truth = (1 - 2048 / 16384) / (0.5 / 4000 + 0.5 / 6000)
    est = cap.capacity(m, [100, 100, 2048])
    assert est.bound == cap.EXACT
    assert est.capacity == pytest.approx(truth, rel=0.05)
    lin = _plane_cells()[2]
    for mod in (lin, m):
        t0 = time.perf_counter()
        for _ in range(200):
            cap.capacity(mod, [300, 700, 2048])
        per_query = (time.perf_counter() - t0) / 200
        assert per_query < 0.005      # generous here; see tools/bench_capacity.py


def test_one_class_models_give_bounds():
    met = np.array([[1000, 1000, 256], [3000, 500, 256], [200, 2500, 1280]], float)
    m = model.fit(met, np.ones(3, int), P, MASK)
    assert m.kind == model.ALL_MET
    est = cap.capacity(m, [100, 100, 200])
    assert est.bound == cap.LOWER
    # lower corner of cell (1000,1000) is (950,950): at least 1900 req/s
    assert est.capacity == pytest.approx(1900)
    vio = model.fit(met, -np.ones(3, int), P, MASK)
    est = cap.capacity(vio, [100, 100, 2000])
    assert est.bound == cap.UPPER
    assert est.capacity == pytest.approx(2100)    # upper corner (1050, 1050)
    empty = model.fit(np.zeros((0, 3)), np.zeros(0, int), P, MASK)
    assert cap.capacity(empty, [1, 1, 1]).bound == cap.UNKNOWN


def test_model_document_round_trip_and_version_check():
    for kernel in ('linear', 'rbf'):
        _, _, m = _plane_cells(kernel)
        doc = ser.loads(ser.dumps(ser.model_to_dict(m, flavor='m1')))
        m2, meta = ser.model_from_dict(doc)
        assert meta == {'flavor': 'm1'}
        w = [500, 700, 3000]
        assert cap.capacity(m2, w).capacity == pytest.approx(cap.capacity(m, w).capacity)
    with pytest.raises(ser.FormatError):
        ser.model_from_dict(dict(doc, version=99))


@pytest.mark.parametrize('change,reason', [
    ({'reads_per_s': float('nan')}, 'read_rate is missing'),
    ({'writes_per_s': -5}, 'write_rate is negative'),
    ({'read_p99_ms': None}, 'SLO metric'),
    ({'read_p99_ms': float('inf')}, 'SLO metric'),
    ({'node_id': 'stranger'}, 'unknown node'),
    ({'up': False}, 'down'),
    ({'ts': 'yesterday'}, 'timestamp'),
    ({'cluster_id': 'other'}, 'cluster'),
])
def test_bad_samples_are_rejected_with_reason(change, reason):
    good = {'cluster_id': 'c1', 'node_id': 'vm-1', 'ts': 1.0, 'reads_per_s': 10,
            'writes_per_s': 5, 'read_bytes_mean': 100, 'write_bytes_mean': 100,
            'read_p99_ms': 3.0, 'up': True}
    feats = features.load_features(P.features)
    check_sample(good, feats, 'read_p99_ms', {'vm-1'}, 'c1')
    with pytest.raises(InvalidSample, match=reason):
        check_sample(dict(good, **change), feats, 'read_p99_ms', {'vm-1'}, 'c1')
