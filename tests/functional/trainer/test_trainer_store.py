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
"""The trainer worker against the real store: samples in, models out, and a
restarted trainer resumes where the first one stopped.
"""
import datetime
import math
import time

import numpy as np
import pytest

from elastman.capacity import registry as model_registry
from elastman.store import model_state as persistence
from elastman.trainer import manager as trainer_manager
from tests.unit.capacity import synthetic

T0 = datetime.datetime(2026, 11, 1, 12, 0, 0)


def stored_capacity(store, cluster_id, node, workload):
    """The estimate the actuator gets from the store for ``node``."""
    registry = persistence.load_capacity(store, str(cluster_id))
    return registry.capacity(node, workload).to_dict()


def _feed(store, cluster_id, vm, node, n, start, rng, step=10.0):
    """Store ``n`` samples of a random walk over the synthetic VM's space,
    ``step`` s apart.
    """
    for i in range(n):
        share = rng.uniform(0.2, 0.9)
        size = rng.uniform(1024, 4096)
        load = rng.uniform(0.2, 1.8) * vm.capacity(share, size)
        _sample(store, cluster_id, vm, node,
                start + datetime.timedelta(seconds=step * i),
                share * load, (1 - share) * load, size)


@pytest.fixture
def minute_refits(conf):
    """The trainer refits every minute."""
    conf.set_override('update_period', 60, 'trainer')
    yield
    conf.clear_override('update_period', 'trainer')


def _two_nodes(store, name):
    """A cluster of nodes n1 and n2, both of flavour ``small``."""
    cluster = store.clusters.create('p', name, spec={}, policy={
        'slo_threshold_ms': synthetic.SLO_MS})
    for node in ('n1', 'n2'):
        store.nodes.upsert(cluster['id'], node, flavor='small', address='x')
    return cluster


def _sample(store, cluster_id, vm, node, ts, reads, writes, size=2048.0):
    """Store one sample of the synthetic VM at the given loads."""
    store.samples.add({
        'cluster_id': cluster_id, 'node_id': node, 'ts': ts, 'up': True,
        'reads_per_s': reads, 'writes_per_s': writes,
        'read_bytes_mean': size, 'write_bytes_mean': size,
        'read_p99_ms': vm.p99(reads, writes, size)})


def test_train_store_publish_and_resume(conf, store, minute_refits):
    cluster = _two_nodes(store, 'c')
    cid = cluster['id']
    rng = np.random.default_rng(3)
    vm = synthetic.SyntheticVM(seed=3)
    for node in ('n1', 'n2'):
        _feed(store, cid, vm, node, 300, T0, rng)
    # a sample of an unknown node must be rejected, not crash the round
    store.samples.add({'cluster_id': cid, 'node_id': 'ghost', 'ts': T0,
                       'up': True, 'reads_per_s': float('nan')})

    first = trainer_manager.TrainerManager(conf, store=store)
    updates = first.train_cluster(cluster, now=T0.timestamp() + 3600)
    scopes = {(u.scope, u.key) for u in updates}
    assert ('flavor', 'small') in scopes and ('vm', 'n1') in scopes
    stored = store.models.get('flavor', persistence.model_key(str(cid),
                                                              'small'))
    assert stored['summary']['kind'] == 'svm'

    workload = {'reads_per_s': 0.5, 'writes_per_s': 0.5,
                'read_bytes_mean': 2048.0, 'write_bytes_mean': 2048.0}
    estimate = stored_capacity(store, cid, 'n1', workload)
    truth = vm.capacity(0.5, 2048)
    assert math.isclose(estimate['capacity'], truth, rel_tol=0.15)

    # A new trainer (a restart, or another host) resumes the same models
    # and takes only the samples it has not seen.
    second = trainer_manager.TrainerManager(conf, store=store)
    assert second.train_cluster(cluster,
                                now=T0.timestamp() + 3700) == []
    resumed = second._clusters[str(cid)].registry.capacity(
        'n1', workload).to_dict()
    assert math.isclose(resumed['capacity'], estimate['capacity'],
                        rel_tol=1e-6)
    assert second._clusters[str(cid)].registry.versions() == \
        first._clusters[str(cid)].registry.versions()


def test_model_export_import_between_clusters(conf, store, config_file,
                                              tmp_path):
    import subprocess
    import sys

    conf.set_override('update_period', 60, 'trainer')
    try:
        policy = {'slo_threshold_ms': synthetic.SLO_MS}
        old = store.clusters.create('p', 'old', spec={}, policy=policy)
        store.nodes.upsert(old['id'], 'n1', flavor='small')
        vm = synthetic.SyntheticVM(seed=5)
        _feed(store, old['id'], vm, 'n1', 400, T0, np.random.default_rng(5))
        trainer_manager.TrainerManager(conf, store=store).train_cluster(
            old, now=T0.timestamp() + 3600)

        new = store.clusters.create('p', 'new', spec={}, policy=policy)
        store.nodes.upsert(new['id'], 'm1', flavor='small')
        config = config_file()
        model_file = str(tmp_path / 'small.json')

        def manage(*args):
            out = subprocess.run([sys.executable, '-m', 'elastman.cmd.manage',
                                  '--config-file', config, 'model', *args],
                                 capture_output=True, text=True, timeout=120)
            assert out.returncode == 0, out.stderr
            return out.stdout
        manage('export', str(old['id']), 'small', '-o', model_file)
        assert 'imported flavour model small' in manage(
            'import', str(new['id']), model_file)

        # the new cluster's trainer answers for its fresh VM from the
        # imported flavour model, before it has any sample of its own
        trainer = trainer_manager.TrainerManager(conf, store=store)
        trainer.train_cluster(new, now=T0.timestamp() + 7200)
        workload = {'reads_per_s': 0.6, 'writes_per_s': 0.4,
                    'read_bytes_mean': 2048.0, 'write_bytes_mean': 2048.0}
        estimate = stored_capacity(store, new['id'], 'm1', workload)
        assert estimate['source'] == 'flavor'
        assert math.isclose(estimate['capacity'], vm.capacity(0.6, 2048),
                            rel_tol=0.15)

        # a corrupt document is refused with a clear message
        bad = tmp_path / 'bad.json'
        bad.write_text('{"format": "something-else"}')
        out = subprocess.run([sys.executable, '-m', 'elastman.cmd.manage',
                              '--config-file', config, 'model', 'import',
                              str(new['id']), str(bad)],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 1 and 'rejected' in out.stderr
    finally:
        conf.clear_override('update_period', 'trainer')


def _one_node_cluster(store, name='c'):
    """A cluster ``name`` with one node ``n1`` of flavour ``small``."""
    cluster = store.clusters.create('p', name, spec={}, policy={
        'slo_threshold_ms': synthetic.SLO_MS})
    store.nodes.upsert(cluster['id'], 'n1', flavor='small', address='x')
    return cluster, cluster['id']


def test_a_new_nodes_first_samples_are_not_learnt(conf, store):
    """[trainer] node_warmup: samples from a node's first seconds after its
    row was created are skipped; earlier and later ones are learnt.
    """
    conf.set_override('node_warmup', 100, 'trainer')
    try:
        cluster, cid = _one_node_cluster(store)
        created = store.nodes.get(cid, 'n1')['created_at']
        rng = np.random.default_rng(5)
        vm = synthetic.SyntheticVM(seed=5)
        # 10 s apart from 50 s before the row to 190 s after it: 10 in the
        # first 100 s of the node's life
        _feed(store, cid, vm, 'n1', 25,
              created - datetime.timedelta(seconds=50), rng)
        trainer = trainer_manager.TrainerManager(conf, store=store)
        trainer.train_cluster(cluster, now=time.time())
        registry = trainer._clusters[str(cid)].registry
        assert registry.accepted == 15
        assert sum(registry.rejected.values()) == 0
    finally:
        conf.clear_override('node_warmup', 'trainer')


def test_samples_during_and_right_after_a_scaling_action_are_not_learnt(
        conf, store):
    """[trainer] action_settle: from an action's creation to ``settle`` s
    after it ended (open-ended while it runs), samples are skipped.
    """
    conf.set_override('action_settle', 30, 'trainer')
    try:
        cluster, cid = _one_node_cluster(store)
        action = store.actions.create(cid, 'scale_out', {'count': 1})
        started = action['created_at']
        rng = np.random.default_rng(6)
        vm = synthetic.SyntheticVM(seed=6)
        # 15 samples before the action, 10 in its first half second
        _feed(store, cid, vm, 'n1', 15,
              started - datetime.timedelta(seconds=150), rng)
        _feed(store, cid, vm, 'n1', 10, started, rng, step=0.05)
        trainer = trainer_manager.TrainerManager(conf, store=store)
        trainer.train_cluster(cluster, now=time.time())
        assert trainer._clusters[str(cid)].registry.accepted == 15

        time.sleep(1.0)
        store.actions.advance(cid, action['id'], 'done', state='SUCCEEDED')
        ended = store.actions.get(cid, action['id'])['updated_at']
        # +5, +15, +25 s after it ended are still settling; +35 ... +95 not
        _feed(store, cid, vm, 'n1', 10,
              ended + datetime.timedelta(seconds=5), rng)
        trainer.train_cluster(cluster, now=time.time())
        assert trainer._clusters[str(cid)].registry.accepted == 15 + 7
    finally:
        conf.clear_override('action_settle', 'trainer')


def test_a_new_cluster_starts_from_another_clusters_flavour_model(conf, store):
    """The prior: cluster B's first round imports the flavour model that
    cluster A learnt, so B's decisions have a boundary before B has seen
    any violation.
    """
    conf.set_override('update_period', 60, 'trainer')
    try:
        policy = {'slo_threshold_ms': synthetic.SLO_MS, 'slo_metric': 'read_p99_ms'}
        a = store.clusters.create('p', 'a', spec={}, policy=policy)
        store.nodes.upsert(a['id'], 'a1', flavor='small', address='x')
        rng = np.random.default_rng(5)
        _feed(store, a['id'], synthetic.SyntheticVM(seed=5), 'a1', 300, T0, rng)
        trainer = trainer_manager.TrainerManager(conf, store=store)
        trainer.train_cluster(a, now=T0.timestamp() + 3600)
        learnt = trainer._clusters[str(a['id'])].registry.flavor_model('small')
        assert learnt.two_class

        b = store.clusters.create('p', 'b', spec={}, policy=policy)
        store.nodes.upsert(b['id'], 'b1', flavor='small', address='y')
        store.nodes.upsert(b['id'], 'b2', flavor='other', address='z')
        trainer.train_cluster(b, now=T0.timestamp() + 3700)
        registry = trainer._clusters[str(b['id'])].registry
        prior = registry.flavor_model('small')
        assert prior is not None and prior.two_class
        np.testing.assert_allclose(prior.coef, learnt.coef)
        assert not registry.flavor_model('other').two_class     # nobody learnt it
        assert registry.model_for('b1')[1] == 'flavor'
        stored = store.models.get('flavor', persistence.model_key(str(b['id']), 'small'))
        assert stored['summary']['kind'] == 'svm'
        # the state that the actuator reads carries the prior too
        reloaded = persistence.load_state(store, str(b['id']))
        assert reloaded.flavor_model('small').two_class
    finally:
        conf.clear_override('update_period', 'trainer')


def _interfered_samples(store, cid, rng, first, index_of, samples=range(800)):
    """Samples of node n1 every 10 s from ``first`` (800 by default); from
    the 200th on, the host agents report the index ``index_of(factor)`` of
    a capacity factor drawn from 1, 0.8 and 0.6.
    """
    for i in samples:
        factor = 1.0 if i < 200 else float(rng.choice([1.0, 0.8, 0.6]))
        vm = synthetic.SyntheticVM(factor=factor, seed=i)
        share, size = rng.uniform(0.3, 0.7), rng.uniform(1024, 3072)
        load = rng.uniform(0.3, 1.7) * vm.capacity(share, size)
        r, w = share * load, (1 - share) * load
        store.samples.add({
            'cluster_id': cid, 'node_id': 'n1',
            'ts': first + datetime.timedelta(seconds=10 * i), 'up': True,
            'reads_per_s': r, 'writes_per_s': w,
            'read_bytes_mean': size, 'write_bytes_mean': size,
            'read_p99_ms': vm.p99(r, w, size),
            **({'extra': {'interference_index': index_of(factor)}}
               if i >= 200 else {})})


def _capacity_at(store, cid, index):
    workload = {'reads_per_s': 0.5, 'writes_per_s': 0.5,
                'read_bytes_mean': 2048.0, 'write_bytes_mean': 2048.0,
                'interference_index': index}
    return stored_capacity(store, cid, 'n1', workload)['capacity']


def test_interference_index_scales_the_load_by_default(conf, store):
    """[trainer] interference_feature = scale (the default): a sample under
    the host agents' index ``i`` is learnt as ``1 + i`` times its load, and
    the capacity the actuator reads for a VM under ``i`` is ``1 / (1 + i)``
    of the VM's alone; the index never becomes a feature.
    """
    conf.set_override('update_period', 60, 'trainer')
    try:
        cluster, cid = _one_node_cluster(store, 'ci-scale')
        trainer = trainer_manager.TrainerManager(conf, store=store)
        # the agents report the drop of a service time 1/f times longer
        _interfered_samples(store, cid, np.random.default_rng(5), T0,
                            lambda f: 1.0 / f - 1.0)
        trainer.train_cluster(cluster, now=T0.timestamp() + 9000)
        params = trainer._clusters[str(cid)].registry.params
        assert 'interference_index' not in params.features
        assert params.scales_by_interference
        for factor in (1.0, 0.6):
            truth = synthetic.SyntheticVM(factor).capacity(0.5, 2048)
            got = _capacity_at(store, cid, 1.0 / factor - 1.0)
            assert math.isclose(got, truth, rel_tol=0.2), (factor, got, truth)
    finally:
        conf.clear_override('update_period', 'trainer')


def test_interference_index_becomes_a_model_dimension(conf, store):
    """[trainer] interference_feature = dimension: samples that carry the
    host agents' index add it to the model's features, and the capacity
    then depends on it (Hubbub-Scale's third dimension).
    """
    conf.set_override('interference_feature', 'dimension', 'trainer')
    conf.set_override('update_period', 60, 'trainer')
    try:
        cluster, cid = _one_node_cluster(store, 'ci')
        rng = np.random.default_rng(5)
        trainer = trainer_manager.TrainerManager(conf, store=store)
        # the host agents were not reporting yet: a 3-D model
        _interfered_samples(store, cid, rng, T0, lambda f: 1.0 - f, range(200))
        trainer.train_cluster(cluster, now=T0.timestamp() + 2100)
        state = trainer._clusters[str(cid)]
        assert 'interference_index' not in state.registry.params.features
        assert state.registry.flavor_model('small').two_class
        _interfered_samples(store, cid, rng, T0, lambda f: 1.0 - f, range(200, 800))
        trainer.train_cluster(cluster, now=T0.timestamp() + 9000)
        state = trainer._clusters[str(cid)]
        assert state.registry.params.features[-1] == 'interference_index'

        for index in (0.0, 0.4):
            truth = synthetic.SyntheticVM(1.0 - index).capacity(0.5, 2048)
            assert math.isclose(_capacity_at(store, cid, index), truth,
                                rel_tol=0.2), index
        assert _capacity_at(store, cid, 0.4) < 0.75 * _capacity_at(store, cid, 0.0)
        # a restarted trainer keeps the dimension
        again = trainer_manager.TrainerManager(conf, store=store)
        again.train_cluster(cluster, now=T0.timestamp() + 7300)
        assert 'interference_index' in \
            again._clusters[str(cid)].registry.params.features
    finally:
        conf.clear_override('update_period', 'trainer')
        conf.clear_override('interference_feature', 'trainer')


def test_a_flavour_keeps_the_cells_of_a_node_that_left(conf, store, minute_refits):
    """A scale-in removes the node that crossed the SLO: its cells become
    the flavour's memory in the store, and a restarted trainer refits the
    flavour with them.
    """
    cluster = _two_nodes(store, 'mem')
    cid = cluster['id']
    rng = np.random.default_rng(5)
    vm = synthetic.SyntheticVM(seed=5)
    _feed(store, cid, vm, 'n1', 300, T0, rng)       # both sides
    low = 0.1 * vm.capacity(0.5, 2048)
    for i in range(60):                               # low loads only
        _sample(store, cid, vm, 'n2', T0 + datetime.timedelta(seconds=10 * i),
                low * (1 + 0.01 * (i % 7)), low)
    first = trainer_manager.TrainerManager(conf, store=store)
    first.train_cluster(cluster, now=T0.timestamp() + 3600)
    registry = first._clusters[str(cid)].registry
    pooled = registry.flavor_model('small').n_cells
    assert registry.flavor_model('small').two_class

    store.nodes.delete(cid, 'n1')
    first.train_cluster(cluster, now=T0.timestamp() + 3700)
    memory = model_registry.memory_key('small')
    assert set(store.capacity.cells(str(cid), ['n1'])['n1'] or {}) == set()
    assert len(store.capacity.cells(str(cid), [memory])[memory]) > 0
    vms, flavors = store.capacity.summaries(str(cid))
    assert set(vms) == {'n2'}
    assert flavors['small']['revision'] == registry.revision(memory)

    # a restarted trainer reads the memory when n2's new samples make
    # the flavour due: n2 has crossed nothing, so the memory is pooled
    _sample(store, cid, vm, 'n2', T0 + datetime.timedelta(seconds=3650),
            300.0, 300.0)
    second = trainer_manager.TrainerManager(conf, store=store)
    second.train_cluster(cluster, now=T0.timestamp() + 3800)
    resumed = second._clusters[str(cid)].registry
    assert resumed.loaded(memory)
    flavor = resumed.flavor_model('small')
    assert flavor.two_class
    assert flavor.n_cells > resumed.vm_model('n2').n_cells
    assert flavor.n_cells >= pooled - 1
