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
"""A node's interference index (in its latest sample, from the host agents)
reaches the capacity model the controller asks: the same load gets a lower
capacity on a node whose host interferes."""
import numpy as np
import pytest

from elastman.actuator import controller as controller_mod
from elastman.capacity.params import ModelParams
from elastman.capacity import registry as model_registry
from elastman.store import model_state as persistence
from tests.unit.actuator import test_controller_seen as seen
from tests.unit.capacity import synthetic

P = ModelParams(features=('read_rate', 'write_rate', 'data_size',
                          'interference_index'),
                slo_threshold_ms=synthetic.SLO_MS)
NOW = seen.NOW


def _registry():
    reg = model_registry.ModelRegistry('c1', P)
    reg.register_node('n1', 'm1')
    rng = np.random.default_rng(2)
    for i in range(1500):
        index = float(rng.choice([0.0, 0.2, 0.4, 0.6]))
        vm = synthetic.SyntheticVM(1.0 - index, seed=i)
        share, size = rng.uniform(0.6, 0.9), rng.uniform(400, 800)
        load = rng.uniform(0.3, 1.7) * vm.capacity(share, size)
        sample = synthetic.sample(vm, share * load, (1 - share) * load,
                                  size, float(i), node='n1')
        sample['interference_index'] = index
        reg.add_sample(sample)
    reg.refit(NOW)
    return reg


class Samples(seen.FakeSamples):
    def __init__(self, index):
        self.index = index

    def newest(self, cluster_id, node_ids, limit=1):
        found = super().newest(cluster_id, node_ids, limit)
        if self.index is not None:
            for rows in found.values():
                rows[0]['extra'] = {'interference_index': self.index}
        return found


class Store(seen.FakeStore):
    def __init__(self, index):
        super().__init__()
        self.samples = Samples(index)


def _capacity(conf, index):
    # a registry saves only what changed since its last save: a fresh store
    # needs a fresh registry
    store = Store(index)
    persistence.save_state(store, _registry())
    cluster = {'id': 'c1', 'created_at': None,
               'policy': {'min_size': 1, 'max_size': 3, 'warmup_s': 0}}
    decision = controller_mod.Controller(conf, store).decide(
        cluster, now=NOW, record=False)
    (vm,) = decision.vms
    return vm.capacity


def test_capacity_follows_the_interference_index(conf):
    clean = _capacity(conf, 0.0)
    hurt = _capacity(conf, 0.5)
    truth = synthetic.SyntheticVM(1.0).capacity(0.75, 600)
    assert clean == pytest.approx(truth, rel=0.2)
    assert hurt == pytest.approx(0.5 * clean, rel=0.25)
    # a node whose host reported nothing counts as free of interference
    assert _capacity(conf, None) == pytest.approx(clean)
