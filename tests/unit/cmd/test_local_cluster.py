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
"""elastman-manage local-cluster: input checks, who carries an action out,
and the listing, against an in-memory store, executor and driver.
"""
import argparse
import subprocess
import sys
import threading
import uuid

import pytest

from elastman.cmd import local_cluster
from elastman.compute import base as compute
from tests.unit import memstore

FLAVORS = ['small:cpu=0.5,heap=384M', 'big:cpu=1,heap=512M']


@pytest.fixture
def lc_conf(conf):
    conf.set_override('flavor', FLAVORS, 'local_cloud')
    yield conf
    conf.clear_override('flavor', 'local_cloud')
    conf.clear_override('compute_driver', 'actuator')


# -- fakes ----------------------------------------------------------------------
class FakeExecutor:
    """Does what the real one does to the store, without servers."""

    def __init__(self, store, fail_with=None):
        self.store = store
        self.fail_with = fail_with
        self.ran = []

    def run(self, action):
        self.ran.append(action['kind'])
        cluster_id = action['cluster_id']
        if self.fail_with:
            self.store.actions.advance(cluster_id, action['id'], 'failed',
                                       'FAILED', reason=self.fail_with)
            return
        if action['kind'] == 'delete':
            for node in self.store.nodes.list(cluster_id):
                del self.store.nodes.rows[(cluster_id, node['node_id'])]
            self.store.clusters.delete(cluster_id)
        else:
            for i in range(action['params']['count']):
                self.store.nodes.upsert(cluster_id, 'n%d' % i, state='UN',
                                        address='127.0.100.%d' % (i + 1),
                                        flavor='small', server_id='s%d' % i)
            self.store.clusters.update(cluster_id, state='ACTIVE')
        self.store.actions.advance(cluster_id, action['id'], 'done',
                                   'SUCCEEDED')


class FakeDriver(compute.ComputeDriver):
    name = 'fake'

    def __init__(self, servers=()):
        self.servers = list(servers)

    def flavors(self):
        return {}

    def create(self, name, flavor, metadata=None, **kwargs):
        raise NotImplementedError

    def get(self, server_id):
        raise compute.ServerNotFound(id=server_id)

    def list(self, cluster_id=None):
        return [s for s in self.servers
                if cluster_id is None or s.cluster_id == cluster_id]

    def delete(self, server_id):
        pass


@pytest.fixture
def store():
    return memstore.MemStore()


def make_tool(conf, store, driver=None, fail_with=None, holder='me'):
    lines = []
    tool = local_cluster.LocalClusters(
        conf, store, driver or FakeDriver(), echo=lines.append,
        holder=holder, executor=FakeExecutor(store, fail_with),
        poll_interval=0.01, lease_ttl=3)
    return tool, lines


def create(tool, conf, name='local', size=3, **kwargs):
    spec, policy = local_cluster.validate_create(conf, name, size, None)
    return tool.create(name, spec, policy, **kwargs)


# -- input ------------------------------------------------------------------------
def test_defaults_first_flavour_and_size_bounds(lc_conf):
    spec, policy = local_cluster.validate_create(lc_conf, 'local', 3, None)
    assert spec['mode'] == 'managed'
    assert (spec['flavor'], spec['size']) == ('small', 3)
    assert (policy['min_size'], policy['max_size']) == (3, 10)
    assert policy['flavors'] == ['small']


@pytest.mark.parametrize('args, message', [
    (('local', 3, 'huge'), "unknown flavour 'huge' (configured: small, big)"),
    (('local', 0, None), '--size must be at least 1'),
    (('a/b', 3, None), "invalid cluster name 'a/b'"),
    (('', 3, None), "invalid cluster name ''"),
    (('local', 3, None, 4), '--size 3 must lie within --min-size 4'),
    (('local', 3, None, None, 2), 'and --max-size 2'),
    (('local', 1, None, 0), '--min-size 0'),
    (('local', 1, None, None, None, -5.0), 'invalid scaling policy'),
])
def test_bad_input_is_refused(lc_conf, args, message):
    with pytest.raises(local_cluster.UsageError) as err:
        local_cluster.validate_create(lc_conf, *args)
    assert message in str(err.value)


def test_nova_driver_is_refused(lc_conf):
    lc_conf.set_override('compute_driver', 'nova', 'actuator')
    with pytest.raises(local_cluster.UsageError, match='local driver'):
        local_cluster.validate_create(lc_conf, 'local', 3, None)


def test_bad_flavour_exits_2_before_the_store_is_used(tmp_path):
    """The real command line, with a store nobody listens on: the input
    error comes first, so nothing can have been written.
    """
    config = tmp_path / 'elastman.conf'
    config.write_text('[DEFAULT]\nstate_path = %s\n[store]\n'
                      'contact_points = 127.0.0.1\nport = 1\n'
                      '[local_cloud]\nflavor = small:cpu=0.5,heap=384M\n'
                      % (tmp_path / 'state'))
    done = subprocess.run(
        [sys.executable, '-m', 'elastman.cmd.manage', '--config-file',
         str(config), 'local-cluster', 'create', 'local', '--flavor', 'huge'],
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "elastman-manage local-cluster: unknown flavour 'huge' "
        "(configured: small)")


# -- create ----------------------------------------------------------------------
def test_create_runs_the_action_here_when_no_actuator_holds_it(lc_conf,
                                                               store):
    tool, lines = make_tool(lc_conf, store)
    assert create(tool, lc_conf) == 0
    [cluster] = store.clusters.all()
    assert (cluster['name'], cluster['state']) == ('local', 'ACTIVE')
    [action] = store.actions.rows.values()
    assert (action['kind'], action['state']) == ('create', 'SUCCEEDED')
    assert action['params']['count'] == 3
    assert tool.executor.ran == ['create']
    assert store.leases.holders == {}
    assert store.leases.released == ['actuator/%s' % cluster['id']]
    assert any('running the create here' in line for line in lines)
    assert lines[-1].endswith('is ready: 127.0.100.1 UN, 127.0.100.2 UN, '
                              '127.0.100.3 UN')


def test_create_waits_for_the_actuator_holding_the_lease(lc_conf, store):
    tool, lines = make_tool(lc_conf, store)
    actuator = FakeExecutor(store)
    original = store.actions.create

    def journal_then_actuator_acts(cluster_id, *args, **kwargs):
        action = original(cluster_id, *args, **kwargs)
        store.leases.holders['actuator/%s' % cluster_id] = 'host-a'
        threading.Timer(0.1, actuator.run, (action,)).start()
        return action
    store.actions.create = journal_then_actuator_acts
    assert create(tool, lc_conf) == 0
    assert tool.executor.ran == []
    assert actuator.ran == ['create']
    assert any('host-a holds the cluster\'s lease' in line for line in lines)
    assert list(store.leases.holders.values()) == ['host-a']


def test_a_lease_left_by_a_dead_actuator_is_taken_over(lc_conf, store):
    tool, lines = make_tool(lc_conf, store)
    original = store.actions.create

    def held_for_a_while(cluster_id, *args, **kwargs):
        action = original(cluster_id, *args, **kwargs)
        name = 'actuator/%s' % cluster_id
        store.leases.holders[name] = 'dead-actuator'
        threading.Timer(0.1, store.leases.holders.pop, (name,)).start()
        return action
    store.actions.create = held_for_a_while
    assert create(tool, lc_conf) == 0
    assert tool.executor.ran == ['create']


def test_failed_create_exits_1_with_the_reason(lc_conf, store, capsys):
    tool, _ = make_tool(lc_conf, store, fail_with='node did not join')
    assert create(tool, lc_conf) == 1
    err = capsys.readouterr().err
    assert 'create of cluster local' in err
    assert 'failed: node did not join' in err


def test_existing_name_is_refused_and_nothing_written(lc_conf, store):
    tool, _ = make_tool(lc_conf, store)
    assert create(tool, lc_conf) == 0
    before = (len(store.clusters.rows), len(store.actions.rows))
    with pytest.raises(local_cluster.UsageError, match='exists already'):
        create(tool, lc_conf)
    assert (len(store.clusters.rows), len(store.actions.rows)) == before


def test_exist_ok_leaves_a_finished_cluster_alone(lc_conf, store):
    tool, lines = make_tool(lc_conf, store)
    assert create(tool, lc_conf) == 0
    assert create(tool, lc_conf, exist_ok=True) == 0
    assert len(store.clusters.rows) == 1
    assert len(store.actions.rows) == 1
    assert 'exists: ACTIVE, 3 node(s)' in lines[-1]


def _journalled(lc_conf, store, size, state, kind=None, step=None,
                action_state=None):
    """A cluster 'local' of ``size`` nodes in ``state``; with ``kind``, an
    action of that kind at ``step`` in ``action_state``.
    """
    spec, policy = local_cluster.validate_create(lc_conf, 'local', size,
                                                 None)
    cluster = store.clusters.create('admin', 'local', spec, policy,
                                    state=state)
    if kind is not None:
        store.actions.create(cluster['id'], kind,
                             {'count': 0 if kind == 'delete' else size},
                             step=step, state=action_state)
    return cluster


def test_exist_ok_finishes_an_interrupted_create(lc_conf, store):
    tool, _ = make_tool(lc_conf, store)
    cluster = _journalled(lc_conf, store, 2, 'CREATING', 'create', 'joining',
                          'RUNNING')
    assert create(tool, lc_conf, exist_ok=True) == 0
    assert tool.executor.ran == ['create']
    assert len(store.nodes.list(cluster['id'])) == 2


# -- delete -----------------------------------------------------------------------
def test_delete_by_name_removes_nodes_and_cluster(lc_conf, store):
    tool, lines = make_tool(lc_conf, store)
    assert create(tool, lc_conf) == 0
    cluster_id = store.clusters.all()[0]['id']
    assert tool.delete('local') == 0
    assert store.clusters.rows == {}
    assert store.nodes.list(cluster_id) == []
    assert tool.executor.ran == ['create', 'delete']
    assert lines[-1].endswith('deleted')


def test_delete_by_id_runs_earlier_unfinished_actions_first(lc_conf, store):
    tool, _ = make_tool(lc_conf, store)
    cluster = _journalled(lc_conf, store, 1, 'ACTIVE', 'scale', 'requested',
                          'PENDING')
    assert tool.delete(str(cluster['id'])) == 0
    assert tool.executor.ran == ['scale', 'delete']


def test_delete_takes_over_a_journalled_delete(lc_conf, store):
    tool, _ = make_tool(lc_conf, store)
    _journalled(lc_conf, store, 1, 'DELETING', 'delete', 'deleting',
                'RUNNING')
    assert tool.delete('local') == 0
    assert len(store.actions.rows) == 1
    assert tool.executor.ran == ['delete']


@pytest.mark.parametrize('ref, message', [
    ('nope', "no cluster 'nope'"),
    (str(uuid.uuid4()), 'no cluster'),
    ('twin', "2 clusters are named 'twin'"),
    ('outside', 'registered, not managed'),
])
def test_delete_refuses_what_it_cannot_resolve(lc_conf, store, ref, message):
    tool, _ = make_tool(lc_conf, store)
    managed = {'mode': 'managed', 'flavor': 'small'}
    store.clusters.create('admin', 'twin', managed)
    store.clusters.create('admin', 'twin', managed)
    store.clusters.create('admin', 'outside', {'mode': 'registered'})
    with pytest.raises(local_cluster.UsageError, match=message):
        tool.delete(ref)
    assert store.actions.rows == {}
    assert {c['state'] for c in store.clusters.all()} == {'ACTIVE'}


def test_unknown_cluster_exits_2(lc_conf, store, monkeypatch, capsys):
    class Closing(memstore.MemStore):
        def close(self):
            pass
    monkeypatch.setattr(local_cluster, '_open',
                        lambda conf: (Closing(), FakeDriver()))
    code = local_cluster._command(argparse.Namespace(action='delete',
                                                     cluster='nope'))
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "elastman-manage local-cluster: no cluster 'nope'")


# -- list ------------------------------------------------------------------------
def _server(server_id, cluster_id, address, status=compute.ACTIVE):
    return compute.Server(id=server_id, name=server_id, address=address,
                          flavor='small', status=status,
                          metadata={compute.CLUSTER_TAG: str(cluster_id)})


def test_list_shows_nodes_servers_and_orphans(lc_conf, store):
    tool, _ = make_tool(lc_conf, store)
    assert create(tool, lc_conf, size=2) == 0
    cluster = store.clusters.all()[0]
    empty = store.clusters.create('admin', 'empty',
                                  {'mode': 'managed', 'flavor': 'small'})
    store.clusters.create('admin', 'outside', {'mode': 'registered'})
    tool.driver = FakeDriver([
        _server('s0', cluster['id'], '127.0.100.1'),
        _server('s1', cluster['id'], '127.0.100.2', compute.ERROR),
        _server('s9', cluster['id'], '127.0.100.9', compute.BUILD),
        _server('lost', uuid.uuid4(), '127.0.100.7')])
    rows = tool.rows()
    by_address = {r['address']: r for r in rows}
    assert [r['cluster'] for r in rows] == ['empty', 'local', 'local',
                                            'local', '(none)']
    assert by_address['-']['id'] == str(empty['id'])
    assert by_address['127.0.100.1']['node_state'] == 'UN'
    assert by_address['127.0.100.1']['server'] == 'ACTIVE'
    assert by_address['127.0.100.2']['server'] == 'ERROR'
    assert by_address['127.0.100.9']['node_state'] == '-'
    assert by_address['127.0.100.7']['cluster_state'] == 'ORPHAN'
    # the fake driver is not the local one: no process to look up
    assert by_address['127.0.100.1']['pid'] == 'stopped'

    table = local_cluster.format_table(rows).splitlines()
    assert table[0].split() == ['CLUSTER', 'ID', 'STATE', 'ADDRESS',
                                'FLAVOR', 'NODE', 'SERVER', 'PID']
    assert len(table) == 1 + len(rows)
    assert table[2].split()[:7] == ['local', str(cluster['id']), 'ACTIVE',
                                    '127.0.100.1', 'small', 'UN', 'ACTIVE']
    start = table[0].index('ADDRESS')
    assert all(line[start:].startswith(row['address'])
               for line, row in zip(table[1:], rows))
