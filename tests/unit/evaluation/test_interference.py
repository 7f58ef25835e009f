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
"""The capacity error during interference episodes, with and without the
interference index (``elastman-manage interference-error``).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from elastman.evaluation import interference as itf
from elastman.evaluation import policies as pol
from elastman.evaluation import simulator as sim_mod
from elastman.evaluation import traces as tr


def test_true_capacity_is_where_the_utilisation_reaches_one():
    hw = tr.Hardware()
    reads, writes = np.array([300.0, 50.0]), np.array([100.0, 400.0])
    size, factor = np.array([4096.0, 1024.0]), np.array([1.0, 0.7])
    cap = itf.true_capacity(reads, writes, size, factor, hw)
    scale = cap / (reads + writes)
    u = (scale * reads / hw.read_cap + scale * writes / hw.write_cap
         + size / hw.size_cap) / factor
    assert u == pytest.approx([1.0, 1.0])
    # interference takes capacity away; a request size alone can use it all
    assert itf.true_capacity(reads[:1], writes[:1], size[:1], np.array([0.7]),
                             hw)[0] < cap[0]
    assert itf.true_capacity(reads[:1], writes[:1], np.array([hw.size_cap]),
                             np.array([1.0]), hw)[0] == 0.0


def test_tally_splits_episodes_from_the_rest():
    t = itf.ErrorTally()
    t.add(np.array([0.3, -0.1, 0.1]), np.array([True, False, True]))
    s = t.summary()
    assert s['episode']['n'] == 2 and s['outside']['n'] == 1
    assert s['episode']['mae'] == pytest.approx(0.2)
    assert s['episode']['bias'] == pytest.approx(0.2)
    assert s['outside']['bias'] == pytest.approx(-0.1)
    assert np.isnan(itf.ErrorTally().summary()['episode']['mae'])


def test_the_index_is_a_model_feature_only_when_asked():
    with_index = pol.Elastman(interference=True)
    assert with_index.params.features[-1] == pol.INTERFERENCE
    assert pol.INTERFERENCE not in pol.Elastman().params.features
    names = [p.name for p in pol.make(['elastman', 'elastman-interference'])]
    assert names == ['elastman', 'elastman-interference']


def test_measure_scores_both_models_on_the_same_episodes():
    cfg = dataclasses.replace(sim_mod.SimConfig(), interference_per_day=6.0)
    trace = tr.load('weekly', nodes=8, days=0.15, seed=3)
    out = itf.measure(trace, 3, cfg, prior=False)
    assert set(out) == set(itf.POLICIES)
    for r in out.values():
        assert r['episode']['n'] > 0 and r['outside']['n'] > 0
        assert np.isfinite(r['episode']['mae'])
        assert r['vm_hours'] > 0
    lines = itf.format_table(out)
    assert 'at most 0.5x' in lines[-1]
