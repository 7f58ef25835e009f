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
"""The planning loop reads the load's trend from the cluster's monitor rounds
(``cluster_workload``) and projects it over the join time it learnt.
"""
import datetime

import pytest

from elastman.actuator import controller as controller_mod
from tests.unit.actuator import test_controller_guard as guarded
from tests.unit.actuator import test_controller_seen as seen

NOW = seen.NOW


class RisingSamples(guarded.Samples):
    """Ten monitor rounds a minute apart, the load up 200 ops/s a round; the
    round at ``missed`` lacks a node.
    """

    def __init__(self, missed=None):
        super().__init__([10.0] * 3)
        self.missed = missed

    def cluster_workload(self, cluster_id, since):
        rows = []
        for k in range(10):
            ts = datetime.datetime.fromtimestamp(NOW - 60 * (9 - k),
                                                 datetime.timezone.utc)
            if ts < since:
                continue
            up = 2 if k == self.missed else 3
            rows.append({'ts': ts.replace(tzinfo=None), 'nodes_up': up,
                         'nodes_total': 3, 'reads_per_s': 1500.0 + 150.0 * k,
                         'writes_per_s': 500.0 + 50.0 * k})
        return rows


def _decide(conf, samples, monkeypatch, held=None, **policy):
    seen_growth = []
    plan = controller_mod.planning.plan

    def spy(*args, **kwargs):
        seen_growth.append(kwargs.get('growth', args[10] if len(args) > 10 else 1.0))
        if held is not None:
            held.append(kwargs.get('held', args[11] if len(args) > 11 else 0.0))
        return plan(*args, **kwargs)

    monkeypatch.setattr(controller_mod.planning, 'plan', spy)
    store = guarded.Store([10.0] * 3)
    store.samples = samples
    cluster = {'id': 'c1', 'created_at': None,
               'policy': dict({'min_size': 3, 'max_size': 9, 'warmup_s': 0,
                               'slo_metric': 'read_with_queue_p99_ms',
                               'slo_threshold_ms': 35.0}, **policy)}
    d = controller_mod.Controller(conf, store).decide(cluster, now=NOW, record=False)
    return seen_growth[0], d


def test_the_plan_grows_the_load_by_its_trend_over_the_join(conf, monkeypatch):
    conf.set_override('join_timeout', 900, group='actuator')
    growth, d = _decide(conf, RisingSamples(), monkeypatch, trend_max_growth=2)
    # 3,800 ops/s now, 200 more a minute: 6,800 after the 15-minute join
    assert growth == pytest.approx(6800.0 / 3800.0)
    assert d.inputs['trend_growth'] == pytest.approx(6800.0 / 3800.0, abs=1e-4)


def test_a_round_that_missed_a_node_is_no_drop(conf, monkeypatch):
    conf.set_override('join_timeout', 900, group='actuator')
    # the newest round read two nodes of three: left out, the line through
    # the others ends at 3,600 a minute earlier
    growth, _ = _decide(conf, RisingSamples(missed=9), monkeypatch,
                        trend_max_growth=2)
    assert growth == pytest.approx((3600.0 + 3000.0) / 3600.0)


def test_the_policy_bounds_the_growth(conf, monkeypatch):
    conf.set_override('join_timeout', 900, group='actuator')
    growth, d = _decide(conf, RisingSamples(), monkeypatch)
    assert growth == 1.5 == d.inputs['trend_growth']     # the default bound


def test_trend_window_zero_plans_on_the_forecast_alone(conf, monkeypatch):
    growth, d = _decide(conf, RisingSamples(), monkeypatch, trend_window_s=0)
    assert growth == 1.0
    assert d.inputs['trend_growth'] == 1.0


def test_a_scale_in_holds_for_the_peak_of_its_window(conf, monkeypatch):
    held = []
    # the rounds of the last hour, the one that missed a node left out
    _decide(conf, RisingSamples(missed=9), monkeypatch, held=held,
            scale_in_hold_s=3600)
    assert held == [pytest.approx(1500.0 + 150.0 * 8 + 500.0 + 50.0 * 8)]


def test_no_hold_by_default(conf, monkeypatch):
    held = []
    _decide(conf, RisingSamples(), monkeypatch, held=held)
    assert held == [0.0]
