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
"""The store against a real Cassandra node."""
import datetime
import socket
import uuid

import pytest

from elastman.common import exception
from elastman.store import connection
from elastman.store import schema


def test_db_sync_creates_schema_and_is_idempotent(keyspace_conf):
    session = connection.connect(keyspace_conf)
    try:
        assert schema.current_version(session, keyspace_conf.store.keyspace) \
            == 0
        assert schema.sync(session, keyspace_conf) == [
            m.version for m in schema.MIGRATIONS]
        assert schema.current_version(
            session, keyspace_conf.store.keyspace) == schema.LATEST
        assert schema.sync(session, keyspace_conf) == []
        tables = session.cluster.metadata.keyspaces[
            keyspace_conf.store.keyspace].tables
        for table in ('clusters', 'nodes', 'samples', 'models', 'forecasts',
                      'actions', 'decisions', 'leases', 'schema_migrations'):
            assert table in tables
    finally:
        connection.close(session)


def test_open_refuses_unsynced_keyspace(keyspace_conf):
    from elastman import store as em_store
    with pytest.raises(exception.SchemaOutOfDate, match='db sync'):
        em_store.Store.open(keyspace_conf)


def test_clusters_round_trip_and_paging(store):
    created = [store.clusters.create('project-a', 'c%d' % i,
                                     spec={'size': 3, 'flavor': 'small'})
               for i in range(5)]
    store.clusters.create('project-b', 'other', spec={})
    got = store.clusters.get(created[0]['id'])
    assert got['spec'] == {'size': 3, 'flavor': 'small'}
    assert got['project_id'] == 'project-a'

    seen, marker = [], None
    while True:
        page = store.clusters.list('project-a', limit=2, marker=marker)
        assert len(page) <= 2
        seen.extend(row['id'] for row in page)
        marker = page.next_marker
        if marker is None:
            break
    assert sorted(seen) == sorted(c['id'] for c in created)

    updated = store.clusters.update(created[1]['id'], state='SCALING',
                                    policy={'min': 3})
    assert updated['state'] == 'SCALING' and updated['policy'] == {'min': 3}
    store.clusters.delete(created[1]['id'])
    with pytest.raises(exception.NotFound):
        store.clusters.get(created[1]['id'])
    with pytest.raises(ValueError):
        store.clusters.update(created[0]['id'], project_id='x')


def test_nodes(store):
    cid = uuid.uuid4()
    store.nodes.upsert(cid, 'n1', address='127.0.0.2', flavor='small',
                       state='UN', seed=True, details={'pid': 1})
    store.nodes.upsert(cid, 'n1', state='DN')
    store.nodes.upsert(cid, 'n2', address='127.0.0.3', flavor='large')
    n1 = store.nodes.get(cid, 'n1')
    assert n1['state'] == 'DN' and n1['address'] == '127.0.0.2'
    assert n1['details'] == {'pid': 1} and n1['created_at'] is not None
    assert [n['node_id'] for n in store.nodes.list(cid)] == ['n1', 'n2']
    store.nodes.delete(cid, 'n2')
    assert len(store.nodes.list(cid)) == 1


def test_samples_have_ttl_and_come_back_newest_first(store, keyspace_conf):
    cid = uuid.uuid4()
    t0 = datetime.datetime(2026, 1, 1, 12, 0, 0)
    for i in range(3):
        store.samples.add({'cluster_id': cid, 'node_id': 'n1',
                           'ts': t0 + datetime.timedelta(minutes=i),
                           'up': True, 'reads_per_s': 100.0 + i,
                           'writes_per_s': 50.0, 'read_p99_ms': 3.5})
    rows = store.samples.for_node(cid, 'n1')
    assert [r['reads_per_s'] for r in rows] == [102.0, 101.0, 100.0]
    assert store.samples.for_node(cid, 'n1', limit=1)[0]['reads_per_s'] \
        == 102.0
    ttl = store.session.execute(
        'SELECT TTL(reads_per_s) AS t FROM ' + keyspace_conf.store.keyspace
        + '.samples WHERE cluster_id = %s '
        'AND node_id = %s LIMIT 1', (cid, 'n1')).one()['t']
    assert 0 < ttl <= keyspace_conf.store.sample_ttl
    store.samples.add_cluster_workload(cid, t0, 10.0, 5.0, 3, 3)
    store.samples.add_cluster_workload(
        cid, t0 + datetime.timedelta(minutes=1), 20.0, 5.0, 3, 3,
        read_p99_ms=12.5, read_with_queue_p99_ms=14.0)
    history = store.samples.cluster_workload(cid, t0)
    assert [h['reads_per_s'] for h in history] == [10.0, 20.0]
    # the cluster's own p99, where the monitor measured it
    assert [(h['read_p99_ms'], h['read_with_queue_p99_ms']) for h in history] \
        == [(None, None), (12.5, 14.0)]


def test_model_versions(store):
    assert store.models.save('flavor', 'small', b'one', {'C': 1}) == 1
    assert store.models.save('flavor', 'small', b'two', {'C': 1}) == 2
    assert store.models.get('flavor', 'small')['payload'] == b'two'
    assert store.models.get('flavor', 'small', version=1)['payload'] == b'one'
    store.models.prune('flavor', 'small', keep=1)
    with pytest.raises(exception.NotFound):
        store.models.get('flavor', 'small', version=1)
    # a document one worker owns: plain writes of the versions it counts
    assert store.models.put('predictor-state', 'c/r', 1, b'a', {'last_bucket': 60}) == 1
    assert store.models.put('predictor-state', 'c/r', 2, b'b', {'last_bucket': 120}) == 2
    assert store.models.put('predictor-state', 'c/r', 3, b'c', {'last_bucket': 180}) == 3
    store.models.prune('predictor-state', 'c/r', 2, latest=3)
    assert store.models.latest_version('predictor-state', 'c/r') == 3
    assert store.models.get('predictor-state', 'c/r')['params'] == {'last_bucket': 180}
    assert store.models.get('predictor-state', 'c/r', version=2)['payload'] == b'b'
    with pytest.raises(exception.NotFound):
        store.models.get('predictor-state', 'c/r', version=1)
    store.models.save_cells('vm', 'n1', {'1:2:3': b'a', '1:2:4': b'b'})
    assert store.models.cells('vm', 'n1') == {'1:2:3': b'a', '1:2:4': b'b'}


def test_forecasts(store):
    cid = uuid.uuid4()
    store.forecasts.add(cid, 'reads', datetime.datetime(2026, 1, 1), 60,
                        [1.0, 2.0], 'arima_100', {'arima_100': 1.0,
                                                  'regression_tree': 0.5})
    latest = store.forecasts.latest(cid, 'reads')
    assert latest['predicted'] == [1.0, 2.0] and latest['horizon_s'] == 120
    assert latest['weights']['regression_tree'] == 0.5
    assert not latest['upper'] and latest['quantile'] is None
    assert not latest['peak']
    # without a start, the first step begins when the forecast was made
    assert latest['starts_at'] == datetime.datetime(2026, 1, 1)
    store.forecasts.add(cid, 'reads', datetime.datetime(2026, 1, 1, 0, 1), 60,
                        [1.0, 2.0], 'arima_100', {'arima_100': 1.0},
                        upper=[1.5, 2.5], quantile=0.9, peak=[1.2, 2.2],
                        starts_at=datetime.datetime(2026, 1, 1, 0, 0, 30))
    latest = store.forecasts.latest(cid, 'reads')
    assert latest['upper'] == [1.5, 2.5] and latest['quantile'] == 0.9
    assert latest['peak'] == [1.2, 2.2]
    assert latest['starts_at'] == datetime.datetime(2026, 1, 1, 0, 0, 30)


def test_action_journal(store):
    cid = uuid.uuid4()
    action = store.actions.create(cid, 'scale_out', {'count': 1})
    assert action['state'] == 'RUNNING' and action['step'] == 'created'
    store.actions.advance(cid, action['id'], 'server_created',
                          expected_step='created', result={'server': 's1'})
    with pytest.raises(exception.Conflict):
        store.actions.advance(cid, action['id'], 'server_active',
                              expected_step='created')
    assert [a['id'] for a in store.actions.unfinished(cid)] == [action['id']]
    store.actions.advance(cid, action['id'], 'done', state='SUCCEEDED')
    assert store.actions.unfinished(cid) == []
    store.actions.record_decision(cid, datetime.datetime(2026, 1, 1), 'none',
                                  {'reason': 'cooling down'})
    assert store.actions.decisions(cid)[0]['record'] == {
        'reason': 'cooling down'}


def test_a_top_up_and_the_step_out_of_creating_exclude_each_other(store):
    """Both are lightweight transactions on the action's row: the executor
    leaves ``creating`` only with the parameters it last read, so a top-up
    written after that read fails its step, and a top-up after the step is
    refused.
    """
    cid = uuid.uuid4()
    action = store.actions.create(cid, 'scale_out',
                                  {'count': 2, 'flavor': 'm1', 'decided_at': 1.5},
                                  step='creating')
    read = store.actions.get(cid, action['id'])['params']
    grown = store.actions.top_up(cid, action['id'], 3, {'count': 3, 'at': 2.5})
    assert grown['params'] == dict(read, count=5,
                                   top_ups=[{'count': 3, 'at': 2.5}])
    with pytest.raises(exception.Conflict):
        store.actions.advance(cid, action['id'], 'joining',
                              expected_step='creating', expected_params=read)
    again = store.actions.get(cid, action['id'])
    assert (again['step'], again['params']['count']) == ('creating', 5)
    store.actions.advance(cid, action['id'], 'joining',
                          expected_step='creating',
                          expected_params=again['params'])
    assert store.actions.top_up(cid, action['id'], 1, {'count': 1}) is None
    assert store.actions.get(cid, action['id'])['params']['count'] == 5
    other = store.actions.create(cid, 'scale_in', {'nodes': ['n1']},
                                 step='requested')
    assert store.actions.top_up(cid, other['id'], 1, {'count': 1}) is None


def test_a_trim_takes_only_servers_not_created_yet(store):
    """A trim is the same lightweight transaction as a top-up; it never
    takes a server the executor created, nor the last one.
    """
    cid = uuid.uuid4()
    action = store.actions.create(cid, 'scale_out',
                                  {'count': 5, 'flavor': 'm1', 'decided_at': 1.5},
                                  step='creating')
    read = store.actions.get(cid, action['id'])['params']
    store.actions.advance(cid, action['id'], 'creating',
                          result={'servers': ['s1', 's2']})
    trimmed = store.actions.trim(cid, action['id'], 9, {'count': 9, 'at': 2.5})
    assert trimmed['params'] == dict(read, count=2,
                                     trims=[{'count': 3, 'at': 2.5}])
    with pytest.raises(exception.Conflict):
        store.actions.advance(cid, action['id'], 'joining',
                              expected_step='creating', expected_params=read)
    assert store.actions.trim(cid, action['id'], 1, {'count': 1}) is None
    assert store.actions.get(cid, action['id'])['params']['count'] == 2
    fresh = store.actions.create(cid, 'scale_out', {'count': 3, 'flavor': 'm1'},
                                 step='requested')
    assert store.actions.trim(cid, fresh['id'], 5, {})['params']['count'] == 1


def test_a_keep_takes_only_nodes_a_scale_in_has_not_begun_to_remove(store):
    """The guard's keep conditions on the result too: a node the executor
    claimed (``leaving``, written on the condition that the nodes are those
    it read) is never kept, and a claim after a keep fails.
    """
    cid = uuid.uuid4()
    action = store.actions.create(cid, 'scale_in', {'nodes': ['a', 'b', 'c']},
                                  step='requested')
    # no result yet (a null column): every node may be kept
    read = store.actions.get(cid, action['id'])['params']
    store.actions.advance(cid, action['id'], 'decommissioning',
                          result={'leaving': 'a', 'decommissioned': []},
                          expected_step='requested', expected_params=read)
    kept = store.actions.keep(cid, action['id'], ['a', 'b'], {'at': 2.5})
    assert kept['params'] == dict(read, nodes=['a', 'c'],
                                  keeps=[{'at': 2.5, 'nodes': ['b']}])
    # the executor's claim of c with the nodes it read before the keep fails
    with pytest.raises(exception.Conflict):
        store.actions.advance(cid, action['id'], 'decommissioning',
                              result={'leaving': 'c', 'decommissioned': ['a']},
                              expected_step='decommissioning', expected_params=read)
    assert store.actions.keep(cid, action['id'], ['a', 'b'], {}) is None
    fresh = store.actions.create(cid, 'scale_in', {'nodes': ['x']}, step='requested')
    assert store.actions.keep(cid, fresh['id'], ['x'], {})['params']['nodes'] == []


def test_leases_are_exclusive(store):
    assert store.leases.acquire('cluster-x', 'host-a', ttl=30)
    assert not store.leases.acquire('cluster-x', 'host-b', ttl=30)
    assert store.leases.acquire('cluster-x', 'host-a', ttl=30)
    assert store.leases.holder('cluster-x') == 'host-a'
    assert not store.leases.release('cluster-x', 'host-b')
    assert store.leases.release('cluster-x', 'host-a')
    assert store.leases.acquire('cluster-x', 'host-b', ttl=30)


def test_host_reports_give_each_node_its_interference_index(store):
    import time
    store.hosts.report('cmp-1', {'vm-a': {'interference_index': 0.3},
                                 'vm-b': {'latency_ms': 4.0}})
    old = datetime.datetime.now(datetime.timezone.utc) - \
        datetime.timedelta(seconds=600)
    store.hosts.report('cmp-2', {'vm-c': {'interference_index': 0.8}},
                       ts=old)
    nodes = [{'node_id': 'a', 'host': 'cmp-1', 'server_id': 'vm-a'},
             {'node_id': 'b', 'host': 'cmp-1', 'server_id': 'vm-b'},
             {'node_id': 'c', 'host': 'cmp-2', 'server_id': 'vm-c'},
             {'node_id': 'd', 'host': None, 'server_id': 'vm-d'}]
    now = time.time()
    assert store.hosts.interference(nodes, now, 120) == {'a': 0.3}
    assert store.hosts.interference(nodes, now, 3600) == {
        'a': 0.3, 'c': 0.8}
    assert store.hosts.latest_vms('cmp-9', now, 120) == {}


def test_an_escalation_and_a_report_leave_each_other_alone(store):
    """An escalation does not hide the host's newest interference index,
    and the next report does not wipe the escalation.
    """
    import time
    store.hosts.report('cmp-e', {'vm-a': {'interference_index': 0.4}})
    node = [{'node_id': 'a', 'host': 'cmp-e', 'server_id': 'vm-a'}]
    store.hosts.escalate('cmp-e', {'escalation': {'reason': 'red'}})
    assert store.hosts.interference(node, time.time(), 120) == {'a': 0.4}
    assert len(store.hosts.reports('cmp-e')) == 1
    store.hosts.report('cmp-e', {'vm-a': {'interference_index': 0.1}})
    row = store.hosts.get('cmp-e')
    assert row['details'] == {'escalation': {'reason': 'red'}}
    assert row['last_report_at'] is not None
    assert store.hosts.interference(node, time.time(), 120) == {'a': 0.1}


def test_store_connections_send_without_delay(keyspace_conf):
    """Every store connection has TCP_NODELAY: without it, a request of a
    few kilobytes waits for the store's delayed ACK (about 45 ms on
    loopback), which bounded the predictor's rounds.
    """
    session = connection.connect(keyspace_conf)
    try:
        sockets = [conn._socket for pool in session.get_pools()
                   for conn in pool.get_connections()]
        sockets.append(session.cluster.control_connection._connection._socket)
        assert sockets
        for sock in sockets:
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    finally:
        connection.close(session)
