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
"""Frontiers and their comparison, on hand-made curves."""
import numpy as np
import pytest

from elastman.evaluation import frontier as fr

# (VM-hours / oracle, violation %)
TARGET = [(0.9, 20.0), (1.1, 6.0), (1.3, 2.0), (1.6, 0.0)]
REACTIVE = [(1.0, 8.0), (1.2, 3.0), (1.4, 2.5)]


def test_pareto_drops_dominated_points_and_sorts():
    pts = [(1.3, 2.0), (1.2, 8.0), (1.1, 6.0), (1.5, 2.0), (0.9, 20.0)]
    # (1.2, 8) is dearer than (1.1, 6) and violates more; (1.5, 2) adds nothing
    assert fr.pareto(pts).tolist() == [[0.9, 20.0], [1.1, 6.0], [1.3, 2.0]]


def test_pareto_refuses_empty_or_nan():
    with pytest.raises(ValueError):
        fr.pareto([])
    with pytest.raises(ValueError):
        fr.pareto([(1.0, float('nan'))])


def test_interpolation_is_linear_between_points_and_flat_outside():
    got = fr.interpolate(TARGET, [0.8, 1.0, 1.2, 1.45, 2.0])
    assert got.tolist() == pytest.approx([20.0, 13.0, 4.0, 1.0, 0.0])


def test_compare_levels_values_and_coverage():
    c = fr.compare({'target': TARGET, 'reactive': REACTIVE}, 1.05, 1.5, 10)
    assert c.levels[0] == pytest.approx(1.05) and c.levels[-1] == pytest.approx(1.5)
    assert c.values['target'][0] == pytest.approx(20 - 14 * 0.15 / 0.2)   # 9.5
    assert c.values['reactive'][-1] == pytest.approx(2.5)                  # flat after 1.4
    assert c.covered['target'].all()
    assert not c.covered['reactive'][-1] and c.covered['reactive'][0]
    rows = c.rows()
    assert len(rows) == 10 and set(rows[0]) == {'vm_hours_vs_oracle', 'target', 'reactive'}


def test_lies_below():
    better = [(1.0, 5.0), (1.2, 1.0), (1.4, 0.2)]
    assert fr.lies_below(better, TARGET)
    assert fr.lies_below(better, REACTIVE)
    # the two cross: reactive is below target at 1.05x, above it at 1.45x
    assert not fr.lies_below(REACTIVE, TARGET)
    assert not fr.lies_below(TARGET, REACTIVE)


def test_lies_below_strict_and_ties():
    zero = [(1.0, 0.0)]
    # both 0 from 1.6x: strictly below fails on the shared range, not strictly holds
    assert not fr.lies_below(zero, TARGET, 1.05, 1.7)
    assert fr.lies_below(zero, TARGET, 1.05, 1.7, strict=False)
    assert not fr.lies_below(TARGET, TARGET, strict=False)


def test_a_curve_only_dearer_than_the_range_is_taken_at_its_cheapest():
    dear = [(1.6, 1.0), (2.0, 0.0)]
    c = fr.compare({'dear': dear})
    assert np.all(c.values['dear'] == 1.0) and not c.covered['dear'].any()


def test_bad_range():
    with pytest.raises(ValueError):
        fr.compare({'t': TARGET}, 1.5, 1.05)
