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

import argparse
import dataclasses

import numpy as np
import pytest

from elastman.capacity.params import INTERFERENCE
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


def test_each_policy_takes_the_index_its_own_way():
    scaled = pol.Elastman()
    assert INTERFERENCE not in scaled.params.features
    assert scaled.params.scales_by_interference
    dimension = pol.Elastman(interference='dimension')
    assert dimension.params.features[-1] == INTERFERENCE
    assert not dimension.params.scales_by_interference
    never = pol.Elastman(interference='never')
    assert INTERFERENCE not in never.params.features
    assert not never.params.scales_by_interference
    with pytest.raises(ValueError, match='interference must be one of'):
        pol.Elastman(interference='sometimes')
    names = [p.name for p in pol.make(list(itf.POLICIES))]
    assert names == list(itf.POLICIES)


def test_the_simulated_index_is_the_drop_the_agent_reports():
    trace = tr.load('weekly', nodes=4, days=0.01, seed=1)
    sim = sim_mod.SimCluster(trace, sim_mod.SimConfig(), [sim_mod.Flavor('m1.medium')],
                             {'m1.medium': 4}, seed=1, noise_key='test')
    slots = sim.serving_slots()
    sim.interference[slots] = [1.0, 0.8, 0.6, 0.4]
    # a capacity factor f is a service time 1/f times longer: a drop of
    # 1/f - 1, which the agent reports up to 1
    assert sim.interference_index(slots) == pytest.approx([0.0, 0.25, 2 / 3, 1.0])


def test_measure_scores_every_model_on_the_same_episodes():
    cfg = dataclasses.replace(sim_mod.SimConfig(), interference_per_day=6.0)
    trace = tr.load('weekly', nodes=8, days=0.15, seed=3)
    out = itf.measure(trace, 3, cfg, prior=False)
    assert set(out) == set(itf.POLICIES)
    for r in out.values():
        assert r['episode']['n'] > 0 and r['outside']['n'] > 0
        assert np.isfinite(r['episode']['mae'])
        assert r['vm_hours'] > 0
    lines = itf.format_table(out)
    assert len(lines) == 1 + len(itf.POLICIES) + len(itf.POLICIES) - 1
    assert all('at most 0.5x' in line for line in lines[-2:])


def test_settings_reach_every_policy(monkeypatch):
    seen = []

    def fake_run(trace, policy, cfg, flavors, seed):
        seen.append((policy.name, policy.params.recency_half_life,
                     policy.options.get('headroom')))
        return {'series': {'violation': np.zeros(3), 'vms': np.ones(3)}}

    monkeypatch.setattr(sim_mod, 'run', fake_run)
    trace = tr.load('weekly', nodes=8, days=0.01, seed=1)
    settings = pol.parse_settings(['headroom=0.3', 'model={"recency_half_life": 0}'])
    itf.measure(trace, 1, prior=False, settings=settings)
    assert seen == [(name, 0.0, 0.3) for name in itf.POLICIES]
    # the caller's settings are not consumed by the first policy
    assert settings == {'headroom': 0.3, 'model': {'recency_half_life': 0}}


def test_a_bad_setting_is_refused_by_name(capsys):
    ap = argparse.ArgumentParser()
    itf.add_arguments(ap)
    args = ap.parse_args(['--set', 'colour=1'])
    assert itf.run_args(args) == 2
    assert 'colour' in capsys.readouterr().err


@pytest.mark.parametrize('argv, message', [
    (['--trace', 'nosuch'], "unknown trace 'nosuch'"),
    (['--nodes', '-4'], "--nodes '-4': at least 3 VMs"),
    (['--seed', '-1'], "--seed '-1': 0 or more"),
    (['--probes', '0'], '--probes 0: at least 1'),
    (['--days', '0'], '--days 0: more than 0'),
    (['--interference-per-day', '-1'], '--interference-per-day -1: 0 or more'),
])
def test_bad_arguments_are_refused_by_name_before_any_run(capsys, monkeypatch,
                                                          argv, message):
    monkeypatch.setattr(itf, 'measure', lambda *a, **k: pytest.fail('it ran'))
    ap = argparse.ArgumentParser()
    itf.add_arguments(ap)
    assert itf.run_args(ap.parse_args(argv)) == 2
    assert 'interference-error: ' + message in capsys.readouterr().err
