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
"""``plan_on``: the planning loop sizes for the point forecast's peak or for
its upper quantile, and the decision record says which one it used."""
import pytest

from elastman.actuator import controller as controller_mod
from elastman.actuator import policy as policy_mod
from tests.unit.actuator import test_controller_forecast as fc_test
from tests.unit.actuator import test_controller_seen as seen


class QuantileStore(fc_test.ForecastStore):
    def __init__(self, reads, writes, upper, peak=None):
        super().__init__(reads, writes)
        self.upper, self.peak = upper, peak or {}

    def latest(self, cluster_id, metric):
        row = super().latest(cluster_id, metric)
        row.update(upper=self.upper.get(metric), quantile=0.9,
                   peak=self.peak.get(metric))
        return row


def _decide(conf, plan_on, upper, peak=None):
    store = QuantileStore([900.0, 1200.0, 1000.0], [200.0, 300.0], upper,
                          peak)
    fc_test.persistence.save_state(store, seen._registry())
    cluster = {'id': 'c1', 'created_at': None,
               'policy': {'min_size': 1, 'max_size': 3, 'warmup_s': 0,
                          'plan_on': plan_on}}
    return controller_mod.Controller(conf, store).decide(cluster, now=seen.NOW,
                                                         record=False)


UPPER = {'reads_per_s': [1000.0, 1400.0, 1500.0],
         'writes_per_s': [250.0, 350.0]}


def test_quantile_plans_on_the_upper_bound_within_the_horizon(conf):
    decision = _decide(conf, 'quantile', UPPER)
    # the horizon (300 s + join 900 s at 20 s steps) covers every step
    assert decision.inputs['predicted_cluster'] == {'reads_per_s': 1500.0,
                                                    'writes_per_s': 350.0}
    reads = decision.inputs['forecast']['reads_per_s']
    assert reads['used'] == 'quantile'
    assert (reads['point'], reads['upper'], reads['quantile']) == (1200.0,
                                                                   1500.0, 0.9)
    assert decision.to_dict()['inputs']['forecast']['writes_per_s'][
        'used'] == 'quantile'
    (vm,) = decision.vms
    assert vm.load == pytest.approx(1850.0)


def test_point_is_the_default_and_ignores_the_bound(conf):
    decision = _decide(conf, 'point', UPPER)
    assert decision.inputs['predicted_cluster'] == {'reads_per_s': 1200.0,
                                                    'writes_per_s': 300.0}
    assert decision.inputs['forecast']['reads_per_s']['used'] == 'point'
    assert decision.inputs['forecast']['reads_per_s']['upper'] == 1500.0


def test_a_forecast_without_a_bound_is_planned_on_as_a_point(conf):
    decision = _decide(conf, 'quantile', {'reads_per_s': [],
                                          'writes_per_s': None})
    assert decision.inputs['predicted_cluster'] == {'reads_per_s': 1200.0,
                                                    'writes_per_s': 300.0}
    assert {m: f['used'] for m, f in decision.inputs['forecast'].items()} == {
        'reads_per_s': 'point', 'writes_per_s': 'point'}


def test_point_plans_on_the_peak_forecast_when_the_row_has_one(conf):
    # the combination's peak forecast may lie above its point path's highest
    # value (the peak of several noisy steps is above their mean)
    decision = _decide(conf, 'point', UPPER,
                       {'reads_per_s': [950.0, 1250.0, 1300.0],
                        'writes_per_s': [220.0, 320.0]})
    assert decision.inputs['predicted_cluster'] == {'reads_per_s': 1300.0,
                                                    'writes_per_s': 320.0}
    assert decision.inputs['forecast']['reads_per_s']['point'] == 1300.0


def test_plan_on_is_validated():
    assert policy_mod.ScalingPolicy().plan_on == 'point'
    with pytest.raises(policy_mod.InvalidPolicy, match='plan_on'):
        policy_mod.ScalingPolicy(plan_on='upper')
