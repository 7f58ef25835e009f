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
"""model_state: a registry saved in pieces, read back by the actuator (no
cells) and by a trainer (cells on refit); the layout before summaries is
read and rewritten."""
import pytest

from elastman.capacity import serialization as ser
from elastman.store import model_state
from tests.unit.capacity import test_registry_incremental as inc
from tests.unit.store import fakes


def test_the_actuator_reads_summaries_and_never_a_cell():
    store = fakes.FakeStateStore()
    reg = inc._fed()
    reg.refit(600)
    assert model_state.save_state(store, reg) == 1
    view = model_state.load_capacity(store, 'c1')
    assert view.versions() == reg.versions()
    for node in reg.nodes:
        assert view.capacity(node, inc.W).capacity == pytest.approx(
            reg.capacity(node, inc.W).capacity)
    assert store.capacity.cells_read == []
    assert model_state.load_capacity(store, 'other') is None


def test_a_round_writes_the_cells_it_changed_and_no_document():
    store = fakes.FakeStateStore()
    reg = inc._fed(nodes=tuple('a%d' % i for i in range(20)), seconds=200)
    reg.refit(200)
    model_state.save_state(store, reg)
    total = store.capacity.cells_written
    before = store.capacity.bytes_written
    inc._walk(reg, 'a3', 1, start=200)
    assert model_state.save_state(store, reg) is None    # no new document
    assert store.capacity.cells_written == total + 1
    one = store.capacity.bytes_written - before
    assert 0 < one < 0.02 * before
    assert store.models.latest_version(model_state.STATE_SCOPE, 'c1') == 1


def test_a_trainer_resumes_and_reads_cells_only_to_refit():
    store = fakes.FakeStateStore()
    reg = inc._fed()
    reg.refit(600)
    model_state.save_state(store, reg)
    resumed = model_state.load_state(store, 'c1')
    assert store.capacity.cells_read == []
    inc._walk(resumed, 'b1', 100, start=600, seed=9)
    resumed.refit(1200)
    assert store.capacity.cells_read == ['b1']
    assert model_state.save_state(store, resumed) == 2


def test_the_layout_before_summaries_is_read_and_rewritten():
    store = fakes.FakeStateStore()
    reg = inc._fed()
    reg.refit(600)
    state = reg.state_dict()                   # the old layout, by hand
    grids = state.pop('grids')
    store.models.save_cells(model_state.LEGACY_CELLS_SCOPE, 'c1', {
        n: ser.dumps(g) for n, g in grids.items()})
    store.models.save(model_state.STATE_SCOPE, 'c1', ser.dumps(state))
    # the actuator can decide from it before any trainer rewrote it
    view = model_state.load_capacity(store, 'c1')
    assert view.versions() == reg.versions()
    loaded = model_state.load_state(store, 'c1')
    assert loaded.capacity('a1', inc.W).capacity == pytest.approx(
        reg.capacity('a1', inc.W).capacity)
    assert store.models.cells(model_state.LEGACY_CELLS_SCOPE, 'c1') == {}
    again = model_state.load_capacity(store, 'c1')
    assert again.versions() == reg.versions()
    assert store.capacity.cells_read == []
    resumed = model_state.load_state(store, 'c1')
    resumed.load_cells(list(resumed.nodes))
    assert resumed.grids['a1'].to_dict() == reg.grids['a1'].to_dict()


def test_an_unusable_document_starts_afresh():
    store = fakes.FakeStateStore()
    store.models.save(model_state.STATE_SCOPE, 'c1',
                      ser.dumps({'format': 'elastman.capacity.registry',
                                 'version': 99}))
    assert model_state.load_state(store, 'c1') is None
    assert model_state.load_capacity(store, 'c1') is None
