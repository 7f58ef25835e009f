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
"""Summaries of the OSC commands: ages, health of the control loop, the
decision behind an action.
"""
import datetime

from elastman.osc.v1 import formatters as fmt
from tests.unit.osc.v1 import fakes

NOW = datetime.datetime(2026, 11, 24, 10, 20, 0)


def test_age_and_numbers():
    assert fmt.age('2026-11-24T10:19:18.000Z', NOW) == '42 s ago'
    assert fmt.age('2026-11-24T09:50:00.000Z', NOW) == '30 min ago'
    assert fmt.age(None, NOW) == 'never'
    assert [fmt.num(v) for v in (None, 0.123456, 42.0, 12345.6)] == [
        '?', '0.123', '42', '12,346']


def test_health_flags_a_control_loop_that_stopped_deciding():
    cluster = fakes.cluster_doc({'control_period_s': 60})
    recent = {'ts': '2026-11-24T10:19:00.000Z'}
    stale = {'ts': '2026-11-24T10:10:00.000Z'}
    assert fmt.health(cluster, recent, NOW)[1] == \
        'control loop: last decision 60 s ago (every 60 s)'
    assert fmt.health(cluster, stale, NOW)[1:] == [
        'control loop: last decision 10 min ago',
        'more than 3 control periods (60 s) without a decision: is the '
        'actuator running?']
    assert fmt.health(cluster, None, NOW)[1] == \
        'control loop: no decision yet'


def test_doing_names_the_decision_behind_the_action_or_the_api():
    decision = fakes.decision_doc('2026-11-24T10:15:00.000Z')
    at = datetime.datetime(2026, 11, 24, 10, 15, tzinfo=(
        datetime.timezone.utc)).timestamp()
    action = {'kind': 'scale_in', 'state': 'RUNNING', 'step': 'decommission',
              'params': {'nodes': ['node-c'], 'decided_at': at + 0.4},
              'created_at': '2026-11-24T10:15:01.000Z'}
    text = ' '.join(fmt.doing([action], [decision]).split())
    assert text.startswith('scale_in: remove node-c, RUNNING at step '
                           'decommission since 2026-11-24 10:15:01; decided '
                           'because: scale out by 1')
    by_api = dict(action, params={'count': 5})
    assert fmt.doing([by_api], [decision]).endswith(
        'requested through the API')
    assert fmt.doing([], []) == 'idle: no action in flight'
