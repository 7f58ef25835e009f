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
"""The trainer's ``seen`` reaches the controller's decision: from the cells,
through the stored trainer state and the RPC answer, into ``c_x`` when the
policy says ``extrapolation='lower'`` and the boundary lies beyond the data.
"""
import datetime

import pytest

from elastman.actuator import controller as controller_mod
from elastman.capacity.params import ModelParams
from elastman.capacity import registry as model_registry
from elastman.common import exception
from elastman.store import model_state as persistence
from tests.unit.store import fakes

# a free fit: WRITE_HEAVY's reads weigh positive (its violated cells have
# fewer reads than its met ones), so that model extrapolates far beyond its
# data; monotone fits would not (see tests/unit/capacity/test_model.py)
P = ModelParams(granularity={'read_rate': 100, 'write_rate': 100, 'data_size': 512},
                slo_threshold_ms=35.0, monotone='off')
# One node, a fixed 3:1 read/write mix at 600 B. Met cells centred at loads
# 200, 500, 1000 on the ray; violated at 2100 and 2600: the boundary lies
# between 1000 and 2100, inside the box of the cells, (2000, 700) with half a
# cell, which the ray through (825, 275) leaves at 2000/825 x 1100 = 2666.7.
CELLS = [((150, 50), 10.0), ((350, 150), 12.0), ((750, 250), 20.0),
         ((1550, 550), 60.0), ((1950, 650), 90.0)]
SEEN = 2000 / 825 * 1100
# The same met cells, but the violations seen only at a write-heavy mix: along
# the 3:1 ray the data ends at reads 800 (800/825 x 1100 = 1066.7) and the
# SVM's boundary there is an extrapolation.
WRITE_HEAVY = CELLS[:3] + [((150, 1550), 60.0), ((350, 1950), 90.0)]
SEEN_WRITE_HEAVY = 800 / 825 * 1100
NOW = 10_000.0
CURRENT = {'reads_per_s': 825.0, 'writes_per_s': 275.0, 'read_bytes_mean': 600.0,
           'write_bytes_mean': 600.0, 'up': True}


def _registry(cells=CELLS):
    reg = model_registry.ModelRegistry('c1', P)
    reg.register_node('n1', 'm1')
    for ts, ((r, w), p99) in enumerate(cells * 3):
        assert reg.add_sample({'cluster_id': 'c1', 'node_id': 'n1', 'ts': float(ts),
                               'reads_per_s': r, 'writes_per_s': w,
                               'read_bytes_mean': 600.0, 'write_bytes_mean': 600.0,
                               'read_p99_ms': p99, 'up': True})
    reg.refit(NOW)
    return reg


class FakeSamples:
    def newest(self, cluster_id, node_ids, limit=1):
        taken = datetime.datetime.fromtimestamp(NOW - 10, datetime.timezone.utc)
        return {n: [dict(CURRENT, ts=taken.replace(tzinfo=None))]
                for n in node_ids}

    def cluster_workload(self, cluster_id, since):
        return []                 # the monitor measured no cluster p99


class NoHostReports:
    """``hosts`` of a cloud whose compute hosts run no agent."""

    def interference(self, nodes, now, max_age):
        return {}


class FakeStore(fakes.FakeStateStore):
    def __init__(self):
        super().__init__()
        self.nodes = self
        self.actions = self
        self.samples = FakeSamples()
        self.forecasts = self
        self.hosts = NoHostReports()

    def list(self, cluster_id, limit=None):
        if limit is None:             # nodes.list
            return [{'node_id': 'n1', 'flavor': 'm1', 'state': 'UN', 'seed': True}]
        return []                     # actions.list

    def unfinished(self, cluster_id):
        return []

    def latest(self, cluster_id, metric):
        raise exception.NotFound(kind='forecast', id=metric)


def test_registry_and_its_record_carry_seen(conf):
    reg = _registry()
    est = reg.capacity('n1', CURRENT)
    assert est.seen == pytest.approx(SEEN)
    assert 1100.0 < est.capacity < SEEN       # bracketed by met and violated cells
    answer = est.to_dict()
    assert answer['seen'] == pytest.approx(SEEN)
    assert answer['capacity'] == pytest.approx(est.capacity)


def _decide(conf, cells, extrapolation):
    store = FakeStore()
    reg = _registry(cells)
    boundary = reg.capacity('n1', CURRENT).capacity
    persistence.save_state(store, reg)       # as the trainer leaves it
    cluster = {'id': 'c1', 'created_at': None,
               'policy': {'min_size': 1, 'max_size': 3, 'warmup_s': 0,
                          'extrapolation': extrapolation}}
    decision = controller_mod.Controller(conf, store).decide(cluster, now=NOW,
                                                             record=False)
    (vm,) = decision.vms
    assert vm.load == pytest.approx(1100.0)
    return vm, boundary


@pytest.mark.parametrize('extrapolation', ['trust', 'lower'])
def test_a_bracketed_boundary_is_used_as_is(conf, extrapolation):
    vm, boundary = _decide(conf, CELLS, extrapolation)
    assert (vm.capacity, vm.bound, vm.status) == (pytest.approx(boundary), 'exact', 'ok')


def test_an_extrapolated_boundary_becomes_a_lower_bound_at_seen(conf):
    vm, boundary = _decide(conf, WRITE_HEAVY, 'trust')
    # trusted, the model answers far beyond its data (here it finds no
    # crossing within its search reach and says "at least" that much)
    assert boundary > 5 * SEEN_WRITE_HEAVY
    assert (vm.capacity, vm.status) == (pytest.approx(boundary), 'ok')
    vm, _ = _decide(conf, WRITE_HEAVY, 'lower')
    # c_x is the end of the data, a lower bound: w = 1100 > 1066.7 is uncertain
    assert (vm.capacity, vm.bound, vm.status) == (pytest.approx(SEEN_WRITE_HEAVY), 'lower',
                                                  'uncertain')
