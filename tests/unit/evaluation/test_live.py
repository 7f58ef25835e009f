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
"""A live run's phase that waits for a scaling action (``until``)."""
import datetime
import os
from unittest import mock

import pytest

from elastman.evaluation import live
from elastman.evaluation import live_scenario

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
T0 = 1_800_000_000.0           # when the high phase started


def _at(offset_s):
    return datetime.datetime.fromtimestamp(T0 + offset_s, datetime.timezone.utc)


def _harness(tmp_path, actions):
    scenario = live_scenario.load_scenario(
        os.path.join(REPO, 'scenarios', 'see-it-scale.yaml'))
    h = live.Harness(scenario, str(tmp_path), echo=lambda *a: None)
    h.store, h.runner, h.t0 = mock.Mock(), mock.Mock(), T0 - 120
    h.store.actions.list.return_value = actions
    high = next(p for p in scenario.phases if p.name == 'high')
    h.current = (high, T0)
    return h


def _action(kind, state, created_s, updated_s):
    return {'kind': kind, 'state': state, 'created_at': _at(created_s),
            'updated_at': _at(updated_s)}


@pytest.mark.parametrize('actions, ends', [
    # set off in training, completed during the phase: it counts
    ([_action('scale_out', 'SUCCEEDED', -90, 40)], True),
    ([_action('scale_out', 'SUCCEEDED', 10, 70)], True),
    # completed before the phase began, still running, failed, other kind
    ([_action('scale_out', 'SUCCEEDED', -300, -30)], False),
    ([_action('scale_out', 'RUNNING', -90, 40)], False),
    ([_action('scale_out', 'FAILED', -90, 40)], False),
    ([_action('scale_in', 'SUCCEEDED', 10, 70)], False),
])
def test_the_phase_ends_once_its_action_completed_during_it(tmp_path, actions, ends):
    h = _harness(tmp_path, actions)
    h.check_until()
    assert h.runner.end_phase.called == ends
    assert ('high' in h.ended_early) == ends
    h.check_until()                # a phase ends once
    assert h.runner.end_phase.call_count == int(ends)


def test_the_cluster_is_held_at_its_size_until_its_data_is_loaded(tmp_path):
    """The bulk load is the run's set-up: the cluster is created with its
    size held (deciding, not acting) and gets the scenario's policy, with
    the set-up time added to its warm-up, only once the data is in.
    """
    scenario = live_scenario.load_scenario(os.path.join(REPO, 'scenarios', 'ramp.yaml'))
    h = live.Harness(scenario, str(tmp_path), echo=lambda *a: None)
    h.store = mock.Mock()
    h.store.clusters.create.return_value = {'id': 'c1'}
    h.create_cluster()
    held = h.store.clusters.create.call_args[0][3]
    assert held['min_size'] == held['max_size'] == scenario.size == 3
    assert held['dry_run'] is True
    h.store.clusters.get.return_value = {'created_at': _at(0), 'policy': held}
    with mock.patch.object(live.time, 'time', return_value=T0 + 100.0):
        h.release()
    policy = h.store.clusters.update.call_args[1]['policy']
    assert policy['max_size'] == 4 and policy['min_size'] == 3
    assert not policy.get('dry_run')
    assert policy['warmup_s'] == pytest.approx(scenario.scaling_policy()['warmup_s'] + 100.0)


def test_the_cluster_is_released_only_after_the_cold_minutes(tmp_path):
    """Neither run acts on the minutes the comparison leaves out: the
    scenario's policy is set once, COLD_MINUTES after the schedule began.
    """
    scenario = live_scenario.load_scenario(os.path.join(REPO, 'scenarios', 'ramp.yaml'))
    h = live.Harness(scenario, str(tmp_path), echo=lambda *a: None)
    h.store = mock.Mock()
    h.cluster_id = 'c1'
    h.store.clusters.get.return_value = {'created_at': _at(0), 'policy': {}}
    assert not h.release_when_warm(T0)          # the schedule has not begun
    h.t0 = T0 + 200.0
    cold = live.rec.COLD_MINUTES * 60.0
    assert cold > 0
    with mock.patch.object(live.time, 'time', return_value=T0 + 200.0 + cold):
        assert not h.release_when_warm(h.t0 + cold - 1.0)
        h.store.clusters.update.assert_not_called()
        assert h.release_when_warm(h.t0 + cold)
        assert h.release_when_warm(h.t0 + cold + 60.0)
    assert h.store.clusters.update.call_count == 1
    policy = h.store.clusters.update.call_args[1]['policy']
    assert policy['max_size'] == 4
    assert policy['warmup_s'] == pytest.approx(
        scenario.scaling_policy()['warmup_s'] + 200.0 + cold)
