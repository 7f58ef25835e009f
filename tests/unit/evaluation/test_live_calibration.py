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
"""A scenario's targets scaled by a probe of the static cluster."""
import json
import os

import pytest

from elastman.evaluation import live
from elastman.evaluation import live_calibration as calib
from elastman.evaluation import live_records as rec
from elastman.evaluation import live_scenario as scen

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def _doc(**over):
    doc = {'name': 't', 'slo_ms': 100,
           'phases': [{'name': 'train', 'minutes': 1, 'target': 300},
                      {'name': 'rise', 'minutes': 2, 'target': [1000, 4000]}],
           'calibration': {'reference_ops': 2000, 'phases': [
               {'name': 'warm', 'minutes': 1, 'target': 200},
               {'name': 'steps', 'minutes': 3, 'target': [500, 1500]}]}}
    doc.update(over)
    return doc


def _row(minute, phase, reads, p99, writes=0.0):
    return {'minute': minute, 'phase': phase, 'server_reads_per_s': reads,
            'server_writes_per_s': writes, 'server_read_p99_ms': p99}


def test_the_probe_is_the_static_cluster_under_the_calibration_phases():
    s = scen.parse_scenario(_doc())
    probe = s.probe()
    assert probe.name == 't-probe' and s.probe_measure == 'steps'
    assert [p.name for p in probe.phases] == ['warm', 'steps.1', 'steps.2', 'steps.3']
    assert [p.target for p in probe.phases] == [200, 500, 1000, 1500]
    policy = probe.scaling_policy()
    assert policy['min_size'] == policy['max_size'] == 3 and policy['dry_run']
    assert [p.name for p in s.phases] == ['train', 'rise.1', 'rise.2']


def test_scaled_multiplies_every_target_and_leaves_the_original():
    s = scen.parse_scenario(_doc())
    half = s.scaled(0.5)
    assert [p.target for p in half.phases] == [150, 500, 2000]
    assert [p.target for p in s.phases] == [300, 1000, 4000]
    assert half.load == s.load
    with pytest.raises(scen.ScenarioError, match='> 0'):
        s.scaled(0)


@pytest.mark.parametrize('section, match', [
    ({'phases': [{'minutes': 1, 'target': 5}]}, 'reference_ops'),
    ({'reference_ops': -1, 'phases': [{'minutes': 1, 'target': 5}]}, '> 0'),
    ({'reference_ops': 10}, 'phases'),
    ({'reference_ops': 10, 'phases': [{'minutes': 1, 'target': 5}],
      'colour': 1}, 'unknown'),
    ({'reference_ops': 10, 'phases': [{'minutes': 1, 'target': 5}],
      'measure': 'nope'}, 'measure'),
    ({'reference_ops': 10, 'phases': [
        {'minutes': 1, 'target': 5, 'until': 'scale_out'}]}, 'until'),
    ('fast', 'mapping'),
])
def test_invalid_calibration(section, match):
    with pytest.raises(scen.ScenarioError, match=match):
        scen.parse_scenario(_doc(calibration=section))


def test_a_scenario_without_calibration_has_no_probe():
    s = scen.parse_scenario(_doc(calibration=None))
    with pytest.raises(scen.ScenarioError, match='no calibration'):
        s.probe()


def test_the_knee_is_the_most_served_before_the_first_step_over_the_slo():
    rows = [_row(0, 'warm', 900.0, 400.0),          # cold, another phase
            _row(1, 'steps.1', 480.0, 40.0, 20.0),
            _row(2, 'steps.2', 950.0, 70.0, 50.0),
            _row(3, 'steps.2', None, None),          # no sample that minute
            _row(4, 'steps.3', 1200.0, 130.0),
            _row(5, 'steps.3', 1400.0, 90.0)]        # after the crossing
    k = calib.knee(rows, 100.0, 'steps')
    assert (k.ops, k.minute, k.crossed, k.steps) == (1000.0, 2, True, 3)
    s = scen.parse_scenario(_doc())
    assert calib.factor(k, s) == pytest.approx(0.5)


def test_a_probe_that_never_crosses_gives_a_lower_bound():
    rows = [_row(1, 'steps.1', 500.0, 40.0), _row(2, 'steps.2', 900.0, 60.0)]
    k = calib.knee(rows, 100.0, 'steps')
    assert (k.ops, k.crossed) == (900.0, False)
    doc = calib.describe(k, scen.parse_scenario(_doc()), 0.45)
    assert 'lower bound' in doc['note']


def test_minutes_over_the_slo_before_the_first_within_it_are_a_backlog():
    # the probe of a warm-up the nodes could not serve: its backlog carried
    # into the first step, the nodes' knee lay after it
    rows = [_row(1, 'warm', 1000.0, 450.0),
            _row(2, 'steps.1', 545.0, 112.0),
            _row(3, 'steps.2', 732.0, 78.0),
            _row(4, 'steps.3', 1118.0, 86.0, 40.0),
            _row(5, 'steps.4', 1543.0, 124.0),
            _row(6, 'steps.5', 1200.0, 95.0)]          # after the crossing
    k = calib.knee(rows, 100.0, 'steps')
    assert (k.ops, k.minute, k.crossed, k.steps, k.backlog) == \
        (1158.0, 4, True, 4, 1)
    doc = calib.describe(k, scen.parse_scenario(_doc()), 0.58)
    assert doc['backlog_minutes'] == 1 and doc['knee_minute'] == 4


def test_a_probe_over_the_slo_from_its_first_step_is_an_error():
    with pytest.raises(scen.ScenarioError, match='start its ramp lower'):
        calib.knee([_row(1, 'steps.1', 500.0, 140.0)], 100.0, 'steps')


def _summary(violations, vm_hours):
    """What summarise makes of per-minute violations [[minute, 0|1], ...]."""
    rows = [{'minute': m, 'violation': v, 'server_read_p99_ms': 1.0,
             'servers': 0, 'nodes': 3, 'client_read_p99_ms': None}
            for m, v in violations]
    out = rec.summarise(scen.parse_scenario(_doc()), rows, [], [])
    out['vm_hours'] = vm_hours
    return out


def test_run_pair_scales_both_runs_by_the_probe(tmp_path):
    s = scen.parse_scenario(_doc())
    runs = []

    def runner(scenario, out_dir, keep=False, echo=print):
        runs.append((scenario, out_dir))
        os.makedirs(out_dir, exist_ok=True)
        if scenario.name.endswith('-probe'):
            rows = [_row(1, 'steps.1', 500.0, 50.0), _row(2, 'steps.2', 800.0, 80.0),
                    _row(3, 'steps.3', 900.0, 120.0)]
            rec.write_csv(os.path.join(out_dir, 'minutes.csv'), rec.MINUTE_FIELDS, rows)
            return {}
        if scenario.scaling_policy()['dry_run']:
            return _summary([[0, 1], [1, 0], [2, 1]], 1.0)
        return _summary([[0, 1], [1, 1], [2, 0]], 1.25)

    doc = live.run_pair(s, str(tmp_path), echo=lambda m: None, runner=runner)
    assert [os.path.basename(d) for _, d in runs] == ['probe', 'elastic', 'static']
    assert doc['scale'] == pytest.approx(0.4)         # 800 / 2000
    for scenario, _ in runs[1:]:
        assert [p.target for p in scenario.phases] == [120, 400, 1600]
    assert not runs[1][0].scaling_policy()['dry_run']
    assert runs[2][0].scaling_policy()['dry_run']
    c = doc['comparison']
    assert c['elastic']['loaded_violation_minutes'] == 0
    assert c['static']['loaded_violation_minutes'] == 1
    assert c['vm_hours_ratio'] == pytest.approx(1.25) and c['met'] is True
    with open(tmp_path / 'pair.json') as f:
        assert json.load(f)['scale'] == pytest.approx(0.4)
    with open(tmp_path / 'probe' / 'calibration.json') as f:
        assert json.load(f)['knee_ops'] == 800.0


@pytest.mark.parametrize('elastic, static, ratio, met', [
    ([[3, 1]], [[3, 1]], 1.2, False),      # elastic violates under load
    ([[0, 1]], [[0, 1]], 1.2, False),      # static has no loaded violation
    ([], [[5, 1]], 1.4, False),            # too many VM-hours
    ([], [[5, 1]], 1.3, True),
])
def test_the_live_line(elastic, static, ratio, met):
    c = rec.compare(_summary(elastic, ratio), _summary(static, 1.0))
    assert c['met'] is met
    assert ('met' if met else 'not met') in rec.format_comparison(c)


def test_the_ramp_scenario_calibrates():
    s = scen.load_scenario(os.path.join(REPO, 'scenarios', 'ramp.yaml'))
    probe = s.probe()
    assert s.reference_ops == 4880 and s.probe_measure == 'steps'
    assert probe.phases[-1].target == 6000 and probe.size == s.size
