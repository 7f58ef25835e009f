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
"""The load a decision is made for: the forecast's peak over the horizon,
but never less than what the cluster serves now.
"""
import datetime
import math

import pytest

from elastman.actuator import controller as controller_mod
from elastman.store import model_state as persistence
from tests.unit.actuator import test_controller_seen as seen

MADE_AT = datetime.datetime.fromtimestamp(seen.NOW - 5, datetime.timezone.utc)


class ForecastStore(seen.FakeStore):
    def __init__(self, reads, writes):
        super().__init__()
        self.paths = {'reads_per_s': reads, 'writes_per_s': writes}

    def latest(self, cluster_id, metric):
        return {'ts': MADE_AT.replace(tzinfo=None), 'step_s': 20.0,
                'predicted': self.paths[metric], 'forecaster': 'f',
                'weights': {'f': 1.0}}


def _decide(conf, reads, writes):
    store = ForecastStore(reads, writes)
    persistence.save_state(store, seen._registry())
    cluster = {'id': 'c1', 'created_at': None,
               'policy': {'min_size': 1, 'max_size': 3, 'warmup_s': 0}}
    return controller_mod.Controller(conf, store).decide(cluster, now=seen.NOW,
                                                         record=False)


def test_a_forecast_below_the_served_load_does_not_lower_it(conf):
    # served now: 825 reads/s, 275 writes/s (one node)
    decision = _decide(conf, [400.0, 500.0, 300.0], [100.0, 90.0])
    assert decision.inputs['predicted_cluster'] == {'reads_per_s': 825.0,
                                                    'writes_per_s': 275.0}
    assert decision.inputs['observed_cluster'] == {'reads_per_s': 825.0,
                                                   'writes_per_s': 275.0}
    (vm,) = decision.vms
    assert vm.load == pytest.approx(1100.0)


def test_the_forecast_peak_over_the_horizon_is_used_when_higher(conf):
    decision = _decide(conf, [900.0, 1200.0, 1000.0], [200.0, 300.0])
    assert decision.inputs['predicted_cluster'] == {'reads_per_s': 1200.0,
                                                    'writes_per_s': 300.0}
    (vm,) = decision.vms
    assert vm.load == pytest.approx(1500.0)


class StartedEarlier(ForecastStore):
    """Five-minute means whose first began ``elapsed`` seconds ago."""

    elapsed = 290.0

    def latest(self, cluster_id, metric):
        row = dict(super().latest(cluster_id, metric), step_s=300)
        row['starts_at'] = datetime.datetime.fromtimestamp(
            seen.NOW - self.elapsed, datetime.timezone.utc).replace(
                tzinfo=None)
        return row


def test_the_horizon_counts_from_now_not_from_the_first_step(conf):
    rising = [1000.0 + 100 * i for i in range(20)]
    store = StartedEarlier(rising, [10.0] * 20)
    persistence.save_state(store, seen._registry())
    cluster = {'id': 'c1', 'created_at': None,
               'policy': {'min_size': 1, 'max_size': 3, 'warmup_s': 0}}
    decision = controller_mod.Controller(conf, store).decide(
        cluster, now=seen.NOW, record=False)
    used = decision.inputs['forecast']['reads_per_s']
    horizon_s = used['horizon_s']
    steps = math.ceil((StartedEarlier.elapsed + horizon_s) / 300)
    # the step the horizon's end falls in is planned on, not one before
    assert steps > horizon_s / 300
    assert used['steps'] == steps
    assert decision.inputs['predicted_cluster']['reads_per_s'] == \
        rising[steps - 1]
