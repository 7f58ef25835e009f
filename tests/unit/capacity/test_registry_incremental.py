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
"""State in pieces: a grid's changed cells, a registry's changes, and a
registry rebuilt from its summaries that reads cells only to refit."""
import numpy as np
import pytest

from elastman.capacity import grid as grid_mod
from elastman.capacity.params import ModelParams
from elastman.capacity.registry import memory_key
from elastman.capacity.registry import ModelRegistry
from tests.unit.capacity import synthetic as syn

P = ModelParams(granularity={'read_rate': 250, 'write_rate': 250, 'data_size': 512},
                min_cells=20)
W = [700, 300, 2048]


def test_a_grid_reports_only_the_cells_a_sample_touched():
    grid = grid_mod.CellGrid([100, 100], 3)
    for i in range(5):
        grid.add([150, 150], 10.0 + i, float(i))      # one cell, 5 values
    grid.add([350, 50], 50.0, 5.0)
    assert set(grid.changed_cells()) == {'1,1', '3,0'}
    grid.mark_saved()
    assert grid.changed_cells() == {}
    grid.add([350, 80], 60.0, 6.0)
    assert set(grid.changed_cells()) == {'3,0'}


def test_cells_stored_one_by_one_rebuild_the_same_grid():
    grid = grid_mod.CellGrid([100, 100], 3)
    rng = np.random.default_rng(0)
    for i in range(200):
        grid.add(rng.uniform(0, 1000, 2), float(rng.uniform(1, 80)), float(i))
    again = grid_mod.CellGrid.from_cells([100, 100], 3, grid.all_cells(),
                                         revision=grid.revision)
    assert again.revision == grid.revision == 200
    assert again.to_dict() == grid.to_dict()
    for a, b in zip(grid.labelled(35.0, 0.5, now=200.0, half_life=50.0),
                    again.labelled(35.0, 0.5, now=200.0, half_life=50.0)):
        np.testing.assert_allclose(a, b)
    # new samples go on from where the ring stopped
    grid.add([50, 50], 99.0, 300.0)
    again.add([50, 50], 99.0, 300.0)
    assert again.cell_values((0, 0)) == grid.cell_values((0, 0))


def test_a_cell_that_does_not_decode_is_refused():
    with pytest.raises(ValueError, match='truncated'):
        grid_mod.decode_cell(b'\x01')
    good = grid_mod.encode_cell(np.ones(3, np.float32), np.zeros(3), 1.0)
    with pytest.raises(ValueError, match='does not decode'):
        grid_mod.decode_cell(good[:-4])
    with pytest.raises(ValueError, match='coordinates'):
        grid_mod.CellGrid.from_cells([100, 100], 3, {'1,2,3': good})
    with pytest.raises(ValueError, match='integer'):
        grid_mod.CellGrid.from_cells([100, 100], 3, {'a,b': good})


def _walk(reg, node, seconds, start=0, seed=0):
    vm = syn.SyntheticVM(seed=seed)
    walk = syn.RandomWalk(syn.SyntheticVM(), seed=seed + 1)
    for ts in range(start, start + seconds):
        assert reg.add_sample(syn.sample(vm, *walk.step(), ts, node=node))


def _fed(nodes=('a1', 'a2', 'b1'), seconds=600):
    reg = ModelRegistry('c1', P)
    for i, node in enumerate(nodes):
        reg.register_node(node, 'fa' if node.startswith('a') else 'fb')
        _walk(reg, node, seconds, seed=i)
    return reg


class Saved:
    """What a store holds after each save of a registry's changes."""

    def __init__(self):
        self.document, self.vms, self.flavors, self.cells = None, {}, {}, {}
        self.read = []

    def save(self, reg):
        ch = reg.changes()
        for node in ch.reset | ch.removed:
            self.cells.pop(node, None)
        for node, cells in ch.cells.items():
            self.cells.setdefault(node, {}).update(cells)
        for node, row in ch.vms.items():
            self.vms.setdefault(node, {}).update(row)
        for node in ch.removed:
            self.vms.pop(node, None)
        for flavor, row in ch.flavors.items():
            self.flavors.setdefault(flavor, {}).update(row)
        if ch.document is not None:
            self.document = ch.document
        reg.mark_saved()
        return ch

    def loader(self, nodes):
        self.read.extend(nodes)
        return {n: self.cells.get(n, {}) for n in nodes}

    def registry(self, cells=True):
        return ModelRegistry.from_summaries(
            self.document, self.vms, self.flavors,
            self.loader if cells else None)


def test_changes_after_a_save_are_the_new_samples_cells_only():
    reg = _fed()
    reg.refit(600)
    saved = Saved()
    first = saved.save(reg)
    assert first.document is not None and set(first.vms) == {'a1', 'a2', 'b1'}
    assert set(first.flavors) == {'fa', 'fb'}
    assert not reg.changes()
    reg.add_sample(syn.sample(syn.SyntheticVM(), 1000, 500, 2048, 601, node='a2'))
    ch = reg.changes()
    assert ch.n_cells == 1 and set(ch.cells) == {'a2'}
    assert set(ch.vms) == {'a2'} and 'model' not in ch.vms['a2']
    assert ch.vms['a2']['revision'] == 601
    assert not ch.flavors and ch.document is None


def _fitted_and_saved() -> tuple[ModelRegistry, Saved]:
    """The fed registry refitted at 600 s, and the store it was saved to."""
    reg = _fed()
    reg.refit(600)
    saved = Saved()
    saved.save(reg)
    return reg, saved


def test_summaries_answer_capacities_without_any_cell():
    reg, saved = _fitted_and_saved()
    view = saved.registry(cells=False)
    for node in ('a1', 'a2', 'b1'):
        assert view.capacity(node, W).capacity == pytest.approx(
            reg.capacity(node, W).capacity)
        assert view.model_for(node)[1] == reg.model_for(node)[1]
    assert view.versions() == reg.versions()
    assert view.refit(900) == []        # nothing changed: no cell needed
    view.add_sample(syn.sample(syn.SyntheticVM(), 100, 100, 1000, 901, node='a1'))
    with pytest.raises(RuntimeError, match='cannot read them'):
        view.refit(1200)


def test_a_resumed_registry_reads_only_the_cells_of_the_models_it_refits():
    reg, saved = _fitted_and_saved()
    resumed = saved.registry()
    assert resumed.refit(900) == [] and saved.read == []
    # new samples of a2: its model and flavour fa's (a1's cells pooled) are
    # refitted; b1 and flavour fb are left alone and their cells unread
    _walk(reg, 'a2', 300, start=600, seed=7)
    _walk(resumed, 'a2', 300, start=600, seed=7)
    assert resumed.changes().cells == {}        # waiting for the cells
    assert resumed.revision('a2') == reg.revision('a2')
    updates = resumed.refit(1200)
    assert sorted(saved.read) == ['a1', 'a2']
    expected = {(u.scope, u.key): u.version for u in reg.refit(1200)}
    assert {(u.scope, u.key): u.version for u in updates} == expected
    assert resumed.capacity('a2', W).capacity == pytest.approx(
        reg.capacity('a2', W).capacity)
    # the samples that waited are saved with the loaded cells now
    ch = saved.save(resumed)
    assert set(ch.cells) == {'a2'}
    assert ch.vms['a2']['revision'] == reg.revision('a2')


def test_a_vm_that_leaves_or_changes_flavour_is_dropped_from_the_store():
    reg, saved = _fitted_and_saved()
    reg.unregister_node('b1')
    reg.register_node('a2', 'fb')
    ch = saved.save(reg)
    assert ch.removed == {'b1'} and ch.reset == {'a2'}
    assert 'b1' not in saved.vms and 'b1' not in saved.cells
    assert saved.vms['a2']['flavor'] == 'fb' and 'a2' not in saved.cells
    again = saved.registry()
    assert again.nodes == {'a1': 'fa', 'a2': 'fb'}
    assert again.revision('a2') > 0 and again.vm_model('a2') is None


def test_new_grid_parameters_restart_every_vm_s_cells():
    reg, saved = _fitted_and_saved()
    resumed = saved.registry()
    resumed.update_params(ModelParams(granularity={'read_rate': 500, 'write_rate': 500,
                                                   'data_size': 512}))
    ch = saved.save(resumed)
    assert ch.reset == {'a1', 'a2', 'b1'} and ch.document is not None
    assert saved.read == []
    assert all(saved.vms[n]['revision'] > reg.revision(n) for n in reg.nodes)


def test_a_grid_absorbs_another_s_samples_in_time_order():
    mine, theirs = grid_mod.CellGrid([100, 100], 3), grid_mod.CellGrid([100, 100], 3)
    mine.add([150, 150], 10.0, 1.0)
    mine.add([150, 150], 12.0, 5.0)
    theirs.add([150, 150], 50.0, 3.0)
    theirs.add([150, 150], 60.0, 7.0)
    theirs.add([350, 50], 40.0, 2.0)
    mine.mark_saved()
    assert mine.absorb(theirs) == 2
    # the cell keeps its newest three samples of both, oldest first
    assert mine.cell_values((1, 1)) == [50.0, 12.0, 60.0]
    assert mine.cell_values((3, 0)) == [40.0]
    assert set(mine.changed_cells()) == {'1,1', '3,0'}
    assert list(mine.last_seen()) == [7.0, 2.0]
    # a new sample goes on from where the merged ring stopped
    mine.add([150, 150], 70.0, 9.0)
    assert mine.cell_values((1, 1)) == [12.0, 60.0, 70.0]
    with pytest.raises(ValueError, match='granularity'):
        mine.absorb(grid_mod.CellGrid([100, 50], 3))


def _crossing_and_low(params: ModelParams) -> ModelRegistry:
    """Flavour fa: a1 walked across the SLO, a2 served low loads only."""
    reg = ModelRegistry('c1', params)
    reg.register_node('a1', 'fa')
    reg.register_node('a2', 'fa')
    _walk(reg, 'a1', 600, seed=3)
    vm = syn.SyntheticVM(seed=4)
    for ts in range(600):
        assert reg.add_sample(syn.sample(vm, 300 + ts % 200, 200, 2048, ts, node='a2'))
    reg.refit(600)
    return reg


def _flavor_labels(reg: ModelRegistry, flavor: str, now: float) -> np.ndarray:
    """The labels of the cells the flavour's next fit is trained on."""
    return reg.flavor_training_set(flavor, now)[1]


def test_a_flavour_remembers_the_cells_of_a_vm_that_left():
    reg = _crossing_and_low(P)
    assert reg.flavor_model('fa').two_class
    violated = int((_flavor_labels(reg, 'fa', 600) < 0).sum())
    assert violated > 0
    reg.unregister_node('a1')
    assert reg.has_memory('fa') and reg.nodes == {'a2': 'fa'}
    # a2 has crossed nothing: the pool refits with a1's cells, its
    # violated ones too
    assert [(u.scope, u.key) for u in reg.refit(900)] == [('flavor', 'fa')]
    assert int((_flavor_labels(reg, 'fa', 900) < 0).sum()) == violated
    assert reg.flavor_model('fa').two_class
    # once a serving VM crosses the SLO itself, its cells are the flavour's
    vm = syn.SyntheticVM(seed=6)
    for ts in range(901, 931):
        assert reg.add_sample(syn.sample(vm, 9000, 3000, 2048, ts, node='a2'))
    labels = _flavor_labels(reg, 'fa', 931)
    assert 0 < int((labels < 0).sum()) < violated
    # without the memory the flavour has a2's met cells only
    forgetful = _crossing_and_low(P.replace(keep_departed=False))
    forgetful.unregister_node('a1')
    forgetful.refit(900)
    assert not forgetful.has_memory('fa')
    assert (_flavor_labels(forgetful, 'fa', 900) > 0).all()


def test_a_flavour_s_memory_is_stored_and_read_back_to_refit():
    reg = _crossing_and_low(P)
    saved = Saved()
    saved.save(reg)
    reg.unregister_node('a1')
    ch = saved.save(reg)
    assert ch.removed == {'a1'} and 'a1' not in saved.cells
    assert memory_key('fa') in ch.cells
    assert saved.flavors['fa']['revision'] == reg.revision(memory_key('fa'))
    resumed = saved.registry()
    assert resumed.has_memory('fa') and not resumed.loaded(memory_key('fa'))
    vm = syn.SyntheticVM(seed=5)
    for r in (reg, resumed):
        r.add_sample(syn.sample(vm, 350, 200, 2048, 901, node='a2'))
    resumed.refit(1200)
    assert sorted(saved.read) == sorted(['a2', memory_key('fa')])
    reg.refit(1200)
    assert resumed.flavor_model('fa').to_dict()['coef'] == pytest.approx(
        reg.flavor_model('fa').to_dict()['coef'])
    # new grid parameters restart the memory with the VMs' cells
    resumed.update_params(P.replace(granularity={'read_rate': 500, 'write_rate': 500,
                                                 'data_size': 512}))
    ch = saved.save(resumed)
    assert memory_key('fa') in ch.reset and not resumed.has_memory('fa')
    assert saved.flavors['fa']['revision'] is None
