"""``seen``: the largest load along a ray the VM was seen to serve within the
SLO, from the met cells a model was fitted on (hand-computed cases)."""
import math

import numpy as np
import pytest

from elastman.capacity import capacity as cap
from elastman.capacity import model
from elastman.capacity import serialization as ser
from elastman.capacity.params import ModelParams

P = ModelParams(granularity={'read_rate': 100, 'write_rate': 100, 'data_size': 512})
MASK = [True, True, False]


def _svm(met):
    """A two-class model whose met cells are ``met`` (the boundary is
    irrelevant to ``seen``)."""
    return model.FittedModel(
        kind=model.SVM, features=list(P.features), granularity=np.array([100., 100., 512.]),
        load_mask=np.array(MASK), mean=np.zeros(3), scale=np.ones(3),
        coef=np.array([-1.0, -1.0, 0.0]), intercept=5000.0,
        upper=np.array([3000., 3000., 4096.]), met_points=np.array(met, dtype=float))


# Ray w = (300, 100) reads/writes/s at 700 B: direction 18.43 degrees.
#   (750, 250, 768)   on the ray; projection (750*300 + 250*100)/1e5 * 400 = 1000
#   (1150, 250, 768)  12.26 deg, 6.2 off the ray: (345000 + 25000)/1e5 * 400 = 1480
#   (1950, 250, 768)  7.31 deg, 11.1 off, ray misses its cell: 2440 if counted
#   (2050, 750, 256)  20.1 deg, 1.7 off, but its cell ends at 512 B < 700 B: 2760
MET = [(750, 250, 768), (1150, 250, 768), (1950, 250, 768), (2050, 750, 256)]
W = [300.0, 100.0, 700.0]


@pytest.mark.parametrize('angle, expected', [(10.0, 1480.0), (5.0, 1000.0), (15.0, 2440.0)])
def test_largest_projection_of_the_met_cells_within_the_angle(angle, expected):
    assert cap.seen_load(_svm(MET), W, angle) == pytest.approx(expected)


def test_a_cell_the_ray_crosses_counts_whatever_its_angle():
    # w = (900, 100): 6.34 deg. Cell [100, 200] x [0, 100] (centre 18.43 deg,
    # 12.1 off) is crossed for t in [0.111, 0.222]:
    # (150*900 + 50*100) / (900^2 + 100^2) * 1000 = 140000 / 820 = 170.73
    m = _svm([(150, 50, 768)])
    assert cap.seen_load(m, [900, 100, 700]) == pytest.approx(140000 / 820)
    # a 59 degree ray (300, 500) passes above the cell (it is in the read
    # range for t in [0.33, 0.67], in the write range for t <= 0.2): nothing
    assert cap.seen_load(m, [300, 500, 700]) == 0.0
    # a 45 degree ray touches the cell's corner (100, 100): it counts,
    # (150*500 + 50*500) / (2 * 500^2) * 1000 = 200
    assert cap.seen_load(m, [500, 500, 700]) == pytest.approx(200.0)


def test_pure_read_ray():
    # w = (500, 0): (350, 50) is 8.1 deg off and its cell holds write rate 0;
    # (350, 150) is 23.2 deg off and its cell starts at 100 writes/s.
    m = _svm([(350, 50, 768), (650, 150, 768)])
    assert cap.seen_load(m, [500, 0, 700]) == pytest.approx(350.0)
    assert cap.seen_load(m, [500, 0, 700], angle_deg=30) == pytest.approx(650.0)


def test_one_class_empty_and_old_models():
    met = model.FittedModel(kind=model.ALL_MET, features=list(P.features),
                            granularity=np.array([100., 100., 512.]), load_mask=np.array(MASK),
                            points=np.array([[750., 250., 768.]]))
    assert cap.capacity(met, W).seen == pytest.approx(1000.0)
    violated = model.FittedModel(**{**vars(met), 'kind': model.ALL_VIOLATED})
    assert cap.capacity(violated, W).seen == 0.0
    empty = model.fit(np.zeros((0, 3)), np.zeros(0), P, MASK)
    assert math.isnan(cap.capacity(empty, W).seen)
    old = _svm(MET).to_dict()
    del old['met_points']                 # stored before models kept their met cells
    assert math.isnan(cap.capacity(model.FittedModel.from_dict(old), W).seen)


def test_fit_keeps_the_met_cells_through_serialisation():
    x = np.array([[150., 50., 768.], [350., 150., 768.], [750., 250., 768.],
                  [1150., 350., 768.], [1550., 550., 768.]])
    y = np.array([1, 1, 1, -1, -1])
    fitted = model.fit(x, y, P, MASK)
    assert fitted.kind == model.SVM
    np.testing.assert_array_equal(fitted.met_points, x[:3])
    doc = ser.loads(ser.dumps(ser.model_to_dict(fitted)))
    restored, _ = ser.model_from_dict(doc)
    est = cap.capacity(restored, W)
    # (750, 250) is the furthest met cell on the ray: seen = its load, 1000
    assert est.seen == pytest.approx(1000.0)
    assert est.to_dict()['seen'] == pytest.approx(1000.0)
    assert 1000.0 < est.capacity < 1500.0 and est.bound == cap.EXACT
