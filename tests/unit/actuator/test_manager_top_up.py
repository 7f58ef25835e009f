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
"""While a cluster's action runs, the actuator still runs the guard on each
new monitor round and the planning loop when its period is due; only a
top-up or a trim of the running scale-out, or the guard keeping the nodes a
running scale-in has not begun to remove, comes of them.
"""
import pytest

from elastman.actuator import decision as dec
from elastman.actuator import manager as manager_mod
from elastman.common import config
from tests.unit.actuator import test_manager_reconcile


class FakeStore(test_manager_reconcile.FakeStore):
    def __init__(self, unfinished):
        super().__init__(unfinished)
        self.recorded = []

    def list(self, cluster_id, limit=None):
        return []             # no node, no past action (no back-off)

    def record_decision(self, cluster_id, ts, action, record):
        self.recorded.append((action, record['reason']))


IN_FLIGHT = dec.Decision(kind=dec.NONE, at=10.0, blocked_by='in_flight',
                         reason='no action: a scale-out is in flight')


@pytest.fixture
def manager(monkeypatch):
    conf = config.CONF
    conf([], project='elastman', default_config_files=[])
    mgr = manager_mod.ActuatorManager(conf, FakeStore([]))
    calls = {'guard': [], 'action_for': [], 'decide': []}
    rounds = iter(range(1, 100))
    monkeypatch.setattr(mgr, '_busy', lambda cluster_id: True)
    monkeypatch.setattr(mgr.controller, 'newest_sample_at',
                        lambda cluster: next(rounds))
    plans = {'next': IN_FLIGHT}

    def decide(cluster, now, record=True):
        assert record is False        # a period without a trim is not recorded
        calls['decide'].append(now)
        return plans['next']

    monkeypatch.setattr(mgr.controller, 'decide', decide)
    calls['plans'] = plans
    monkeypatch.setattr(mgr.controller, 'action_for',
                        lambda cluster, result:
                        calls['action_for'].append(result))
    return mgr, calls, monkeypatch


def _guard_says(mgr, calls, monkeypatch, decision):
    def guard(cluster, now):
        calls['guard'].append(now)
        return decision
    monkeypatch.setattr(mgr.controller, 'guard', guard)


def test_a_running_scale_out_is_topped_up(manager):
    mgr, calls, monkeypatch = manager
    top_up = dec.Decision(kind=dec.SCALE_OUT, reason='guard: top up', at=10.0,
                          trigger='guard', flavor='m1', count=2,
                          top_up_of='a1')
    _guard_says(mgr, calls, monkeypatch, top_up)
    mgr.handle_cluster({'id': 'c1', 'state': 'SCALING', 'policy': {}}, now=10.0)
    assert calls['guard'] == [10.0] and calls['action_for'] == [top_up]
    assert calls['decide'] == []              # the top-up takes the round


def test_only_a_top_up_or_a_trim_acts_while_busy(manager):
    mgr, calls, monkeypatch = manager
    blocked = dec.Decision(kind=dec.NONE, reason='no action: in flight',
                           at=10.0, trigger='guard', blocked_by='in_flight')
    _guard_says(mgr, calls, monkeypatch, blocked)
    mgr.handle_cluster({'id': 'c1', 'state': 'SCALING', 'policy': {}}, now=10.0)
    assert calls['guard'] == [10.0] and calls['decide'] == [10.0]
    assert calls['action_for'] == [] and mgr.store.recorded == []
    # the planning loop waits for its next period
    mgr.handle_cluster({'id': 'c1', 'state': 'SCALING', 'policy': {}}, now=20.0)
    assert calls['decide'] == [10.0]


def test_the_guard_off_stays_quiet_while_busy(manager):
    mgr, calls, monkeypatch = manager
    _guard_says(mgr, calls, monkeypatch, None)
    mgr.handle_cluster({'id': 'c1', 'state': 'SCALING',
                        'policy': {'guard': False}}, now=10.0)
    assert calls['guard'] == [] and calls['action_for'] == []


def test_a_running_scale_in_keeps_the_nodes_the_guard_keeps(manager):
    mgr, calls, monkeypatch = manager
    keep = dec.Decision(kind=dec.TRIM, reason='guard: keep', at=10.0,
                        trigger='guard', count=2, trim_of='a1',
                        keep_nodes=['n8', 'n9'])
    _guard_says(mgr, calls, monkeypatch, keep)
    # with guard_top_up off too: keeping nodes is not a top-up
    mgr.handle_cluster({'id': 'c1', 'state': 'SCALING',
                        'policy': {'guard_top_up': False}}, now=10.0)
    assert calls['guard'] == [10.0] and calls['action_for'] == [keep]
    assert calls['decide'] == []


@pytest.mark.parametrize('plan', [
    dec.Decision(kind=dec.TRIM, at=10.0, flavor='m1', count=3, trim_of='a1',
                 reason='trim the scale-out in flight by 3'),
    dec.Decision(kind=dec.SCALE_OUT, at=10.0, flavor='m1', count=2,
                 top_up_of='a1', reason='top up the scale-out in flight by 2'),
])
def test_the_planning_loops_trim_or_top_up_is_recorded_and_written(manager, plan):
    mgr, calls, monkeypatch = manager
    _guard_says(mgr, calls, monkeypatch, None)
    calls['plans']['next'] = plan
    mgr.handle_cluster({'id': 'c1', 'state': 'SCALING', 'policy': {}}, now=10.0)
    assert calls['action_for'] == [plan]
    assert mgr.store.recorded == [(plan.kind, plan.reason)]


def test_a_plain_scale_out_of_the_planning_loop_waits_while_busy(manager):
    mgr, calls, monkeypatch = manager
    _guard_says(mgr, calls, monkeypatch, None)
    calls['plans']['next'] = dec.Decision(kind=dec.SCALE_OUT, at=10.0,
                                          flavor='m1', count=2, reason='x')
    mgr.handle_cluster({'id': 'c1', 'state': 'SCALING', 'policy': {}}, now=10.0)
    assert calls['action_for'] == [] and mgr.store.recorded == []


def test_replan_in_flight_off_keeps_the_planning_loop_quiet_while_busy(manager):
    mgr, calls, monkeypatch = manager
    _guard_says(mgr, calls, monkeypatch, None)
    mgr.handle_cluster({'id': 'c1', 'state': 'SCALING',
                        'policy': {'replan_in_flight': False}}, now=10.0)
    assert calls['decide'] == [] and calls['action_for'] == []
