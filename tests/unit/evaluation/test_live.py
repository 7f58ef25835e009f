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
