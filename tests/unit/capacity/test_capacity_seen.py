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
"""``seen``: how far along a ray a model has data (the box of its training
cells, met and violated), hand-computed.
"""
import math
from types import SimpleNamespace

import numpy as np
import pytest

from elastman.capacity import capacity as cap
from elastman.capacity import model
from elastman.capacity.params import ModelParams
from elastman.capacity import serialization as ser

P = ModelParams(granularity={'read_rate': 100, 'write_rate': 100, 'data_size': 512})
MASK = np.array([True, True, False])
GRAIN = np.array([100.0, 100.0, 512.0])


def _box(upper):
    return SimpleNamespace(upper=np.array(upper, dtype=float), granularity=GRAIN,
                           load_mask=MASK)


def test_where_the_ray_leaves_the_box_of_cells():
    # reads: (1000 + 50) / 300 = 3.5, writes: (500 + 50) / 100 = 5.5:
    # the ray leaves through the reads side at 3.5 x (300 + 100) = 1400
    assert cap.seen_load(_box([1000, 500, 2048]), [300, 100, 1024]) == pytest.approx(1400)
    # a pure-read ray only meets the reads side: 1050
    assert cap.seen_load(_box([1000, 500, 2048]), [300, 0, 1024]) == pytest.approx(1050)
    # an idle VM is answered for an even mix: min(1050, 550) x 2 = 1100
    assert cap.seen_load(_box([1000, 500, 2048]), [0, 0, 1024]) == pytest.approx(1100)
    no_extent = SimpleNamespace(upper=None, granularity=GRAIN, load_mask=MASK)
    assert math.isnan(cap.seen_load(no_extent, [1, 1, 1]))


def test_violated_cells_count_as_data():
    """A boundary bracketed by met cells below and violated cells above it is
    not an extrapolation: ``seen`` reaches past it.
    """
    x = np.array([[150., 50., 768.], [350., 150., 768.], [750., 250., 768.],
                  [1550., 550., 768.], [1950., 650., 768.]])
    y = np.array([1, 1, 1, -1, -1])
    fitted = model.fit(x, y, P, MASK.tolist())
    assert fitted.kind == model.SVM
    est = cap.capacity(fitted, [825.0, 275.0, 600.0])
    # box (2000, 700): reads 2000/825 = 2.424 < writes 700/275 = 2.545
    assert est.seen == pytest.approx(2000 / 825 * 1100)
    assert est.bound == cap.EXACT and 1000 < est.capacity < est.seen
    # the same through a stored model
    doc = ser.loads(ser.dumps(ser.model_to_dict(fitted)))
    restored, _ = ser.model_from_dict(doc)
    assert cap.capacity(restored, [825.0, 275.0, 600.0]).seen == pytest.approx(est.seen)
    assert est.to_dict()['seen'] == pytest.approx(est.seen)


def test_one_class_and_empty_models():
    met = model.fit(np.array([[750., 250., 768.]]), np.array([1]), P, MASK.tolist())
    assert met.kind == model.ALL_MET
    # box (800, 300) on the 3:1 ray through (300, 100): min(800/300, 300/100) x 400
    assert cap.capacity(met, [300, 100, 700]).seen == pytest.approx(800 / 300 * 400)
    empty = model.fit(np.zeros((0, 3)), np.zeros(0), P, MASK.tolist())
    assert math.isnan(cap.capacity(empty, [300, 100, 700]).seen)
