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
"""Scenario files of the live evaluation and the per-minute records."""
import datetime
import json
import os

import pytest

from elastman.evaluation import live_records
from elastman.evaluation import live_scenario

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def _doc(**over):
    doc = {'name': 't', 'slo_ms': 50,
           'phases': [{'name': 'a', 'minutes': 1, 'target': 100},
                      {'name': 'ramp', 'minutes': 3, 'target': [100, 300],
                       'read': 0.5, 'fieldlength': 400}]}
    doc.update(over)
    return doc


def test_parse_and_expand_ramp():
    s = live_scenario.parse_scenario(_doc(defaults={'threads': 8}))
    assert [p.name for p in s.phases] == ['a', 'ramp.1', 'ramp.2', 'ramp.3']
    assert [p.target for p in s.phases] == [100, 100, 200, 300]
    assert s.phases[1].read_proportion == 0.5
    assert s.phases[1].update_proportion == 0.5
    assert s.phases[1].record_bytes == 4000
    assert all(p.threads == 8 for p in s.phases)
    assert s.duration_s == 240
    assert [(a, b) for a, b, _ in live_scenario.schedule(s)] == [
        (0, 60), (60, 120), (120, 180), (180, 240)]


def test_held_static_keeps_the_phases_and_pins_the_size():
    s = live_scenario.parse_scenario(_doc(policy={'max_size': 8,
                                                  'alpha': 2.0}))
    static = s.held_static()
    policy = static.scaling_policy()
    assert static.name == 't-static'
    assert (policy['min_size'], policy['max_size']) == (3, 3)
    assert policy['dry_run'] is True and policy['alpha'] == 2.0
    assert static.phases == s.phases
    assert s.scaling_policy()['max_size'] == 8     # the original unchanged


def test_new_clusters_get_the_recommended_decision_options():
    policy = live_scenario.parse_scenario(_doc()).scaling_policy()
    assert policy['headroom'] == 0.325
    assert policy['headroom_per_violation'] == 0.01
    assert policy['scale_out_count'] == 'violators'
    assert policy['violation_at'] == 'capacity'
    assert policy['extrapolation'] == 'lower'


def test_policy_and_config_defaults():
    s = live_scenario.parse_scenario(_doc(
        policy={'max_size': 8},
        elastman={'actuator': {'control_period': 30}}))
    policy = s.scaling_policy()
    assert policy['slo_threshold_ms'] == 50
    assert policy['max_size'] == 8 and policy['min_size'] == 3
    assert policy['flavors'] == [s.flavor]
    conf = s.elastman_conf()
    assert conf['actuator']['control_period'] == 30
    assert conf['trainer']['slo_threshold_ms'] == 50
    assert s.network.startswith('127.0.80.')


@pytest.mark.parametrize('doc, match', [
    ({'phases': []}, 'phases'),
    ({'phases': [{'minutes': 1}]}, 'target'),
    ({'phases': [{'target': 5}]}, 'minutes'),
    ({'phases': [{'minutes': 1, 'target': 5, 'speed': 1}]}, 'unknown'),
    ({'phases': [{'minutes': 1, 'target': 5, 'read': 0.9, 'update': 0.9}]},
     'proportions'),
    ({'phases': [{'name': 'x', 'minutes': 1, 'target': 5},
                 {'name': 'x', 'minutes': 1, 'target': 5}]}, 'unique'),
    ({'colour': 1, 'phases': [{'minutes': 1, 'target': 5}]}, 'unknown'),
    ({'cluster': {'size': 9}, 'phases': [{'minutes': 1, 'target': 5}]},
     'bounds'),
    ({'phases': [{'minutes': 1, 'target': 5, 'until': 'rain'}]}, 'until'),
    ({'phases': [{'minutes': 2, 'target': [5, 9], 'until': 'scale_in'}]},
     'ramp'),
])
def test_invalid(doc, match):
    with pytest.raises(live_scenario.ScenarioError, match=match):
        live_scenario.parse_scenario(doc)


def test_see_it_scale_waits_for_the_scalings():
    s = live_scenario.load_scenario(os.path.join(REPO, 'scenarios',
                                                 'see-it-scale.yaml'))
    assert s.until == {'high': 'scale_out', 'low': 'scale_in'}
    policy = s.scaling_policy()
    assert (s.size, policy['min_size'], policy['max_size']) == (2, 2, 3)
    assert policy['replication_factor'] == 2      # the floor is 2 nodes
    assert s.network == '127.0.90.0/25' and s.replication_factor == 2
    # at most 15 minutes of phases
    assert s.duration_s <= 15 * 60


@pytest.mark.parametrize('name', ['smoke.yaml', 'paper.yaml', 'ramp.yaml'])
def test_shipped_scenarios_load(name):
    s = live_scenario.load_scenario(os.path.join(REPO, 'scenarios', name))
    assert s.phases and s.size == 3
    assert s.network.startswith('127.0.80.')
    assert s.jmx_port_base == 17600
    policy = s.scaling_policy()
    assert policy['min_size'] == 3 and policy['max_size'] > 3


def test_minute_rows_and_decisions(tmp_path):
    s = live_scenario.parse_scenario(_doc())
    t0 = 1000.0
    status = {'ops_per_s': 100.0, 'ops': {
        'READ': {'count': 900, 'p99_us': 20000.0},
        'UPDATE': {'count': 100, 'p99_us': 30000.0}}}
    intervals = [(t0 + 10, status), (t0 + 20, dict(
        status, ops={'READ': {'count': 100, 'p99_us': 120000.0}}))]
    polls = [(t0 + 5, 3, 3), (t0 + 70, 3, 4), (t0 + 130, 4, 4)]

    def ts(x):
        return datetime.datetime.fromtimestamp(x, datetime.timezone.utc)
    samples = [{'node_id': 'n1', 'ts': ts(t0 + 30), 'reads_per_s': 30.0,
                'writes_per_s': 3.0, 'read_p99_ms': 10.0},
               {'node_id': 'n2', 'ts': ts(t0 + 31), 'reads_per_s': 10.0,
                'writes_per_s': 1.0, 'read_p99_ms': 90.0},
               {'node_id': 'n1', 'ts': ts(t0 + 90), 'reads_per_s': 50.0,
                'writes_per_s': 5.0, 'read_p99_ms': 80.0}]
    actions = [{'kind': 'scale_out', 'created_at': ts(t0 + 65),
                'updated_at': ts(t0 + 125), 'state': 'SUCCEEDED',
                'step': 'done', 'params': {'count': 1, 'flavor': 'eval'}}]
    rows = live_records.minute_rows(t0, s, [], intervals, polls, samples,
                                    actions)
    assert len(rows) == 4
    first = rows[0]
    assert first['phase'] == 'a' and first['target_ops'] == 100
    assert first['client_ops'] == pytest.approx(1100 / 60)
    assert first['client_read_p99_ms'] == pytest.approx(
        (900 * 20 + 100 * 120) / 1000)
    assert first['client_read_p99_max_ms'] == 120
    assert first['server_read_p99_ms'] == pytest.approx(
        (30 * 10 + 10 * 90) / 40)
    assert first['server_reads_per_s'] == 40
    assert first['violation'] == 0
    assert rows[1]['violation'] == 1          # 80 ms > 50 ms
    assert rows[1]['servers'] == 4 and rows[1]['actions'] == 'scale_out +1'
    assert rows[2]['nodes'] == 4
    assert rows[3]['server_read_p99_ms'] is None and rows[3]['nodes'] == 4

    decisions = [{'ts': ts(t0 + 64), 'action': 'scale_out', 'record': {
        'kind': 'scale_out', 'count': 1, 'flavor': 'eval',
        'reason': 'scale out by 1 of eval',
        'vms': [{'bound': 'exact', 'node_id': 'node-1-abcdef', 'load': 812.4,
                 'target': 640.0, 'capacity': 800.0},
                {'bound': 'exact'}, {'bound': 'lower'}],
        'inputs': {'forecast_used': True,
                   'forecast': {'reads_per_s': {
                       'value': 812.0, 'forecaster': 'arima_110',
                       'made_at': ts(t0 + 50).replace(tzinfo=None)
                       .isoformat()}},
                   'model_versions': {'vm': {'node-1': 3},
                                      'flavor': {'eval': 2}}}}}]
    d = live_records.decision_rows(t0, decisions)[0]
    assert d['kind'] == 'scale_out' and d['forecast_used']
    assert d['reads_forecast'] == 812 and d['reads_forecaster'] == 'arima_110'
    assert d['forecast_age_s'] == pytest.approx(14)
    assert d['vm_models'] == 'node-1=v3' and d['flavor_models'] == 'eval=v2'
    assert d['bounds'] == 'exact:2 lower:1'
    assert d['vms'] == 'node-1-a:812/640/800 ?:?/?/? ?:?/?/?'
    out = tmp_path / 'decisions.json'
    live_records.write_json(str(out), [{'ts': ts(t0), 'record': {
        'load': float('nan')}}])
    assert json.loads(out.read_text()) == [
        {'ts': ts(t0).isoformat(), 'record': {'load': None}}]
    arows = live_records.action_rows(t0, actions)
    summary = live_records.summarise(s, rows, arows, [d])
    assert summary['violation_minutes'] == 1
    assert summary['max_nodes'] == 4
    assert summary['acting_decisions'][0]['reads_forecaster'] == 'arima_110'
    assert 'arima_110' in live_records.format_summary(summary)
