"""Scaling actions against real Cassandra nodes run by the local driver.

One cluster grows from nothing to three nodes (one bootstrap at a time), an
actuator is killed right after journalling a step of a scale-in and a new one
finishes the action, and at the end no process, directory or node row is left
behind.
"""
import os
import subprocess
import sys

from cassandra.cluster import Cluster
import pytest

from elastman.actuator import executor as executor_mod
from elastman.compute import local as local_driver

NETWORK = '127.0.70.0/24'


@pytest.fixture
def cloud(conf, tmp_path):
    conf.set_override('state_path', str(tmp_path / 'state'))
    conf.set_override('network', NETWORK, 'local_cloud')
    conf.set_override('jmx_port_base', 17400, 'local_cloud')
    conf.set_override('flavor', ['small:cpu=0,heap=384M'], 'local_cloud')
    conf.set_override('join_timeout', 300, 'actuator')
    driver = local_driver.LocalDriver(conf)
    yield driver
    for server in driver.list():
        driver.delete(server.id)
    conf.clear_override('state_path')
    for name in ('network', 'jmx_port_base', 'flavor'):
        conf.clear_override(name, 'local_cloud')
    conf.clear_override('join_timeout', 'actuator')


def _action(store, cluster, kind, **params):
    return store.actions.create(cluster['id'], kind, params, step='requested',
                                state='PENDING')


def _lower_system_rf(address):
    with Cluster([address]) as cql:
        session = cql.connect()
        for ks in ('system_distributed', 'system_auth', 'system_traces'):
            session.execute("ALTER KEYSPACE %s WITH replication = {'class': "
                            "'SimpleStrategy', 'replication_factor': 1}" % ks)


def test_grow_crash_and_shrink(conf, store, cloud, config_file, tmp_path):
    cluster = store.clusters.create(
        'p', 'grow', spec={'mode': 'managed', 'flavor': 'small'},
        policy={'min_size': 1, 'max_size': 3, 'flavors': ['small']})
    executor = executor_mod.ActionExecutor(conf, store, cloud)

    done = executor.run(_action(store, cluster, 'create', count=1,
                                flavor='small'))
    assert done['state'] == 'SUCCEEDED', done['reason']
    # two more: Cassandra bootstraps one node at a time, so must we
    done = executor.run(_action(store, cluster, 'scale', count=3))
    assert done['state'] == 'SUCCEEDED', done['reason']
    nodes = store.nodes.list(cluster['id'])
    assert sorted(n['state'] for n in nodes) == ['UN', 'UN', 'UN']
    assert len(cloud.list(str(cluster['id']))) == 3
    assert store.clusters.get(cluster['id'])['state'] == 'ACTIVE'

    # rows written to the cluster survive the scaling that follows
    address = nodes[0]['address']
    _lower_system_rf(address)
    with Cluster([address]) as cql:
        session = cql.connect()
        session.execute("CREATE KEYSPACE data WITH replication = {'class': "
                        "'SimpleStrategy', 'replication_factor': 1}")
        session.execute('CREATE TABLE data.kv (k int PRIMARY KEY, v text)')
        for i in range(200):
            session.execute('INSERT INTO data.kv (k, v) VALUES (%s, %s)',
                            (i, 'v%d' % i))

    # an actuator dies right after journalling the decommission step ...
    action = _action(store, cluster, 'scale', count=2)
    config = config_file(
        DEFAULT={'state_path': conf.state_path},
        local_cloud={'network': NETWORK, 'jmx_port_base': 17400,
                     'flavor': 'small:cpu=0,heap=384M'},
        actuator={'crash_after_step': 'decommissioning'})
    script = ('import sys, uuid; from elastman.common import config;'
              'from elastman import store as s;'
              'from elastman.compute import local;'
              'from elastman.actuator import executor as e;'
              'c = config.parse_args(sys.argv);'
              'st = s.Store.open(c);'
              'a = st.actions.get(uuid.UUID("%s"), uuid.UUID("%s"));'
              'e.ActionExecutor(c, st, local.LocalDriver(c)).run(a)'
              % (cluster['id'], action['id']))
    crashed = subprocess.run([sys.executable, '-c', script, '--config-file',
                              config], capture_output=True, text=True,
                             timeout=300)
    journal = store.actions.get(cluster['id'], action['id'])
    assert crashed.returncode == 137, (journal['reason'],
                                       crashed.stdout[-2000:])
    assert journal['step'] == 'decommissioning'
    assert journal['state'] == 'RUNNING'

    # ... and a new one finishes it from the journal
    done = executor.run(journal)
    assert done['state'] == 'SUCCEEDED', done['reason']
    nodes = store.nodes.list(cluster['id'])
    assert [n['state'] for n in nodes] == ['UN', 'UN']
    servers = cloud.list(str(cluster['id']))
    assert sorted(s.id for s in servers) == sorted(n['node_id']
                                                   for n in nodes)
    with Cluster([nodes[0]['address']]) as cql:
        rows = cql.connect().execute('SELECT count(*) FROM data.kv').one()
    assert rows[0] == 200

    # deleting the cluster removes every server, row and directory
    done = executor.run(_action(store, cluster, 'delete', count=0))
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert cloud.list(str(cluster['id'])) == []
    assert store.nodes.list(cluster['id']) == []
    leftovers = [d for d in os.listdir(os.path.join(conf.state_path,
                                                    'local-cloud'))
                 if not d.startswith('.')] \
        if os.path.isdir(os.path.join(conf.state_path, 'local-cloud')) else []
    assert leftovers == []


def test_failed_join_rolls_back(conf, store, cloud):
    """A node that never joins is deleted and the action fails with why."""
    conf.set_override('join_timeout', 1, 'actuator')
    try:
        cluster = store.clusters.create(
            'p', 'nojoin', spec={'mode': 'managed', 'flavor': 'small'},
            policy={'min_size': 1, 'max_size': 3})
        # a JVM that has just started cannot be UN within one second
        done = executor_mod.ActionExecutor(conf, store, cloud).run(
            _action(store, cluster, 'create', count=1, flavor='small'))
        assert done['state'] == 'FAILED'
        assert 'did not join within 1s' in done['reason']
        assert cloud.list(str(cluster['id'])) == []
        assert store.nodes.list(cluster['id']) == []
        assert store.clusters.get(cluster['id'])['state'] == 'ACTIVE'
    finally:
        conf.set_override('join_timeout', 300, 'actuator')
