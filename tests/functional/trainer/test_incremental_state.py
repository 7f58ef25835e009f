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
"""Trainer state in pieces on the real store: a round writes the cells its
samples changed, the actuator decides from the capacity summaries without
reading a cell, and a trainer that takes over reads a VM's cells only when
it refits that VM's models."""
import datetime

from cassandra import query
import numpy as np

from elastman.actuator import controller as controller_mod
from elastman.trainer import manager as trainer_manager
from tests.functional.trainer import test_trainer_store as base
from tests.unit.capacity import synthetic

T0 = datetime.datetime(2026, 11, 1, 12, 0, 0)
NODES = ['n%02d' % i for i in range(20)]


class Spy:
    """Counts what a store session sends: statements by table, and the
    bytes of the values bound to writes of each table.
    """

    def __init__(self, session):
        self.session = session
        self.calls, self.bytes = [], {}
        self._orig = session.execute_async, session.execute
        session.execute_async = self._wrap(self._orig[0])
        session.execute = self._wrap(self._orig[1])

    def _wrap(self, fn):
        def call(statement, *args, **kwargs):
            if isinstance(statement, query.PreparedStatement):
                statement = statement.bind(args[0] if args else
                                           kwargs.pop('parameters'))
                args = args[1:]
            text = getattr(getattr(statement, 'prepared_statement', None),
                           'query_string', None) or str(statement)
            self.calls.append(text)
            values = getattr(statement, 'values', None) or []
            if text.split()[0] in ('INSERT', 'UPDATE'):
                table = _table(text)
                self.bytes[table] = self.bytes.get(table, 0) + sum(
                    len(v) for v in values if v is not None)
            return fn(statement, *args, **kwargs)
        return call

    def reset(self):
        self.calls, self.bytes = [], {}

    def touched(self, table, verb=None):
        return [c for c in self.calls if '.%s ' % table in c + ' '
                and (verb is None or c.startswith(verb))]

    def close(self):
        self.session.execute_async, self.session.execute = self._orig


def _table(cql):
    words = cql.replace('(', ' ').split()
    name = words[words.index('INTO') + 1] if 'INTO' in words else words[1]
    return name.split('.')[-1]


def test_writes_follow_the_changed_cells_and_the_actuator_reads_none(conf, store):
    conf.set_override('update_period', 60, 'trainer')
    spy = Spy(store.session)
    try:
        cluster = store.clusters.create('p', 'c', spec={}, policy={
            'slo_threshold_ms': synthetic.SLO_MS, 'min_size': 1,
            'max_size': 40, 'warmup_s': 0})
        cid = cluster['id']
        rng = np.random.default_rng(4)
        vm = synthetic.SyntheticVM(seed=4)
        for node in NODES:
            store.nodes.upsert(cid, node, flavor='small', address='x',
                               state='UN')
            base._feed(store, cid, vm, node, 60, T0, rng)
        trainer = trainer_manager.TrainerManager(conf, store=store)
        spy.reset()
        trainer.train_cluster(cluster, now=T0.timestamp() + 600)
        cells = store.session.execute(
            'SELECT count(*) FROM %s.capacity_cells' % store_keyspace(conf)
        ).one()['count']
        assert len(spy.touched('capacity_cells', 'INSERT')) == cells > 100
        full = spy.bytes['capacity_cells'] + spy.bytes['capacity_summaries']

        # one VM in 20 takes one sample: one cell and one summary row
        base._feed(store, cid, vm, 'n07', 1, T0 + datetime.timedelta(
            seconds=700), rng)
        spy.reset()
        assert trainer.train_cluster(cluster, now=T0.timestamp() + 610) == []
        assert len(spy.touched('capacity_cells')) == 1
        assert len(spy.touched('capacity_summaries', 'UPDATE')) == 1
        assert not spy.touched('models', 'INSERT')
        one = spy.bytes['capacity_cells'] + spy.bytes['capacity_summaries']
        assert one < 0.01 * full

        # the actuator: summaries, never a cell
        spy.reset()
        decision = controller_mod.Controller(conf, store).decide(
            cluster, now=T0.timestamp() + 620, record=False)
        assert len(decision.vms) == len(NODES)
        assert spy.touched('capacity_summaries')
        assert not spy.touched('capacity_cells')
        assert decision.inputs['model_versions']['vm'] == \
            trainer._clusters[str(cid)].registry.versions()['vm']

        # another trainer takes over: new samples of n03 alone; it reads
        # the cells of the models it refits (n03's and the flavour's), and
        # none before the refit is due
        base._feed(store, cid, vm, 'n03', 5, T0 + datetime.timedelta(
            seconds=800), rng)
        other = trainer_manager.TrainerManager(conf, store=store)
        spy.reset()
        other.train_cluster(cluster, now=T0.timestamp() + 625)   # not due
        assert not spy.touched('capacity_cells')
        samples_read = spy.touched('samples', 'SELECT')
        assert len(samples_read) == len(NODES)
        assert all('ts >=' in c for c in samples_read)   # resumed, not all
        spy.reset()
        updates = other.train_cluster(cluster, now=T0.timestamp() + 700)
        reads = spy.touched('capacity_cells', 'SELECT')
        assert len(reads) == len(NODES)       # the flavour pools every VM
        # n07's sample came after the last fit: its model is due as well
        assert {(u.scope, u.key) for u in updates} <= {
            ('vm', 'n03'), ('vm', 'n07'), ('flavor', 'small')}
        registry = other._clusters[str(cid)].registry
        assert registry.accepted == 5
    finally:
        spy.close()
        conf.clear_override('update_period', 'trainer')


def store_keyspace(conf):
    return conf.store.keyspace
