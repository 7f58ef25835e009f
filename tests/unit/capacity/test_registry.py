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
"""ModelRegistry: rejection, flavour fallback, versions, state and export."""
import datetime

import pytest

from elastman.capacity import capacity as cap_mod
from elastman.capacity.params import ModelParams
from elastman.capacity.registry import ModelRegistry
from elastman.capacity import serialization as ser
from elastman.trainer import manager as trainer_manager
from tests.unit.capacity import synthetic as syn

P = ModelParams(granularity={'read_rate': 250, 'write_rate': 250, 'data_size': 512},
                min_cells=50)


def _fed(seconds=900, nodes=('vm-1',)):
    reg = ModelRegistry('c1', P)
    for i, node in enumerate(nodes):
        reg.register_node(node, 'm1')
        vm, walk = syn.SyntheticVM(seed=i), syn.RandomWalk(syn.SyntheticVM(), seed=i + 1)
        for ts in range(seconds):
            assert reg.add_sample(syn.sample(vm, *walk.step(), ts, node=node))
    return reg


def test_bad_input_is_rejected_and_never_changes_a_model():
    reg = _fed()
    reg.refit(900)
    before = reg.state_dict()
    good = syn.sample(syn.SyntheticVM(), 100, 100, 1000, 901)
    bad = [dict(good, reads_per_s=float('nan')), dict(good, writes_per_s=-1),
           dict(good, node_id='ghost'), dict(good, read_p99_ms=float('nan')),
           dict(good, cluster_id='c2'), 'not a dict']
    assert reg.add_samples(bad) == (0, len(bad))
    assert sum(reg.rejected.values()) == len(bad)
    assert reg.refit(1200) == []                    # nothing changed
    after = reg.state_dict()
    assert after.pop('last_fit') == 1200 and before.pop('last_fit') == 900
    assert after == before


def test_new_vm_uses_flavour_model_until_it_has_enough_cells():
    reg = _fed(nodes=('vm-1', 'vm-2'))
    reg.register_node('vm-3', 'm1')
    updates = reg.refit(900)
    assert {(u.scope, u.key) for u in updates} >= {('vm', 'vm-1'), ('flavor', 'm1')}
    model, source = reg.model_for('vm-3')
    assert source == 'flavor' and model.two_class
    est = reg.capacity('vm-3', [500, 500, 2048])
    assert est.source == 'flavor'
    assert est.capacity == pytest.approx(syn.SyntheticVM().capacity(0.5, 2048), rel=0.1)
    assert reg.model_for('vm-1')[1] == 'vm'


def test_vm_that_only_met_at_a_low_load_is_answered_by_its_flavour():
    """A VM that joined at a low load and its sibling that served more, both
    within the SLO: the flavour's one-class model reaches further, so it
    answers for the newcomer.
    """
    vm = syn.SyntheticVM()
    reg = ModelRegistry('c1', P)
    for node, rate in (('old', 3000.0), ('new', 500.0)):
        reg.register_node(node, 'm1')
        for ts in range(300):
            assert reg.add_sample(syn.sample(vm, rate, rate / 4, 1024, ts, node=node))
    reg.refit(900)
    assert reg.vm_model('new').kind == 'all_met'
    model, source = reg.model_for('new')
    assert source == 'flavor' and model.kind == 'all_met'
    own = cap_mod.capacity(reg.vm_model('new'), [2000, 500, 1024])
    pooled = reg.capacity('new', [2000, 500, 1024])
    assert pooled.bound == own.bound == cap_mod.LOWER
    assert pooled.seen > 2 * own.seen


def test_versions_bump_only_on_change():
    reg = _fed()
    first = reg.refit(900)
    assert all(u.version == 1 for u in first)
    assert reg.refit(1200) == []
    reg.add_sample(syn.sample(syn.SyntheticVM(), 9000, 9000, 4000, 1201))
    changed = reg.refit(1500)
    assert changed and all(u.version == 2 for u in changed)
    assert ser.model_from_dict(changed[0].document)[1]['version'] == 2


def test_state_survives_restart_and_export_import():
    reg = _fed()
    reg.refit(900)
    w = [700, 300, 2048]
    doc = ser.loads(ser.dumps(reg.state_dict()))
    again = ModelRegistry.from_state(doc)
    assert again.capacity('vm-1', w).capacity == pytest.approx(reg.capacity('vm-1', w).capacity)
    assert again.versions() == reg.versions()
    again.add_sample(syn.sample(syn.SyntheticVM(), 100, 100, 1000, 901))
    assert again.refit(1200)                        # cells kept growing after reload

    exported = ser.loads(ser.dumps(reg.export_flavor_model('m1')))
    other = ModelRegistry('elsewhere', P)
    other.register_node('new-vm', 'm1.big')
    upd = other.import_flavor_model(exported, flavor='m1.big')
    assert upd.version == 1 and upd.scope == 'flavor'
    est = other.capacity('new-vm', w)
    assert est.source == 'flavor'
    from elastman.capacity.capacity import capacity
    assert est.capacity == pytest.approx(capacity(reg.flavor_model('m1'), w).capacity)


def _prior(factor: float) -> dict:
    """An exported flavour model learnt from a VM ``factor`` times as
    capable as the synthetic one.
    """
    reg = ModelRegistry('teacher', P)
    reg.register_node('t', 'm1')
    vm = syn.SyntheticVM(factor=factor)
    walk = syn.RandomWalk(syn.SyntheticVM(factor=factor), seed=1)
    for ts in range(900):
        assert reg.add_sample(syn.sample(vm, *walk.step(), ts, node='t',
                                         cluster='teacher'))
    reg.refit(900)
    assert reg.flavor_model('m1').two_class
    return ser.loads(ser.dumps(reg.export_flavor_model('m1')))


@pytest.mark.parametrize('factor, kept', [(1.0, True), (0.2, False)])
def test_flavour_boundary_kept_unless_its_own_cells_contradict_it(factor, kept):
    """A flavour whose cells turn one-class keeps its boundary while the load
    stays below it; a boundary its VMs serve far beyond within the SLO (one
    that puts the capacity at a fifth of the truth) gives way to what the
    cells show.
    """
    reg = ModelRegistry('c1', P)
    reg.register_node('vm-1', 'm1')
    reg.import_flavor_model(_prior(factor), flavor='m1')
    vm = syn.SyntheticVM(seed=3)
    for ts in range(300):               # a third of the capacity, all met
        rate = 1500.0 + (ts % 10) * 100.0
        assert reg.add_sample(syn.sample(vm, rate, rate / 2, 1024, ts))
    reg.refit(900)
    model = reg.flavor_model('m1')
    assert model.two_class is kept
    if not kept:
        assert model.kind == 'all_met'
        est = reg.capacity('vm-1', [2000, 1000, 1024])
        assert est.capacity >= 2000 + 1000 - 250     # what the VM was seen to serve


def test_slo_metric_from_the_samples_extra():
    """read_with_queue_p99_ms travels in a stored sample's ``extra``."""
    params = ModelParams(slo_metric='read_with_queue_p99_ms')
    reg = ModelRegistry('c1', params)
    reg.register_node('vm-1', 'm1')
    row = dict(syn.sample(syn.SyntheticVM(), 100, 100, 1000, 0),
               ts=datetime.datetime(2026, 11, 22, 6, 0, 0))
    with_queue = dict(row, extra={'jmx': 1.0, 'read_with_queue_p99_ms': 12.5})
    without = dict(row, extra={'jmx': 0.0})
    assert reg.add_sample(trainer_manager.sample_from_row(with_queue))
    assert not reg.add_sample(trainer_manager.sample_from_row(without))
    assert sum(reg.rejected.values()) == 1


def test_the_interference_index_scales_the_load():
    """A VM whose every sample came under a 30% capacity drop (an index of
    1/0.7 - 1, the drop the host agents report) teaches the model what it
    would serve alone; asked with the index, the model answers what is left.
    """
    index = 1 / 0.7 - 1
    alone, slowed = syn.SyntheticVM(seed=1), syn.SyntheticVM(factor=0.7, seed=2)
    work = {'reads_per_s': 500.0, 'writes_per_s': 500.0, 'read_bytes_mean': 2048,
            'write_bytes_mean': 2048}

    def trained(params):
        reg = ModelRegistry('c1', params)
        reg.register_node('vm-1', 'm1')
        walk = syn.RandomWalk(slowed, seed=3)
        for ts in range(900):
            assert reg.add_sample(dict(syn.sample(slowed, *walk.step(), ts),
                                       interference_index=index))
        reg.refit(900)
        return reg

    scaled = trained(P)
    assert scaled.capacity('vm-1', work).capacity == pytest.approx(
        alone.capacity(0.5, 2048), rel=0.15)
    est = scaled.capacity('vm-1', dict(work, interference_index=index))
    assert est.capacity == pytest.approx(slowed.capacity(0.5, 2048), rel=0.15)
    assert est.load == pytest.approx(1000.0)
    # without the scale, the slowed VM's boundary is learnt as its own
    plain = trained(P.replace(interference_scale=False))
    assert plain.capacity('vm-1', work).capacity == pytest.approx(
        slowed.capacity(0.5, 2048), rel=0.15)


def test_a_bad_interference_index_is_rejected():
    reg = _fed(seconds=10)
    good = syn.sample(syn.SyntheticVM(), 100, 100, 1000, 11)
    for bad in (-0.1, float('nan'), 'high'):
        assert not reg.add_sample(dict(good, interference_index=bad))
    assert reg.rejected['interference_index'] == 3
    assert reg.add_sample(dict(good, interference_index=0.2))


def test_a_phase_moves_the_refits_onto_its_grid():
    reg = ModelRegistry('c1', P.replace(update_period=300.0))
    assert reg.is_due(0.0, phase=120.0)             # before the first fit
    reg.last_fit = 1000.0
    assert not reg.is_due(1299.0) and reg.is_due(1300.0)
    # the grid 120 + k 300 has an instant at 1020: the next slot starts
    # there, but the refit waits for half a period after the last one
    assert not reg.is_due(1149.0, phase=120.0)
    assert reg.is_due(1150.0, phase=120.0)
