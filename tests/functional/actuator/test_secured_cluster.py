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
"""A secured cluster: PasswordAuthenticator, client TLS, JMX logins over TLS.

The local driver starts each server the way an image would from the
cluster's security metadata (its certificate comes from [local_cloud]
tls_keystore). elastman reaches the nodes only with the credentials and CA
stored, encrypted, for the cluster:
- a cluster created with a wrong password fails with the node's own words
  on the action and on the cluster, and leaves no server and no node row;
- a cluster with the right ones is created; the tenant makes a role for
  elastman and sets it (as PUT .../credentials would); a scale-out with a
  wrong password is refused before anything is created;
- the monitor samples the nodes (latencies from JMX over TLS) while a client
  loads them, and the cluster scales out and back in through nodetool with
  those credentials; every row written (through TLS, logged in) before each
  of the two is read back after it at consistency ALL (replication factor
  1: a row whose range moved is read from its new owner).
"""
import threading
import time
import uuid

from cassandra import cluster as cql_cluster
from cassandra import policies
import pytest

from elastman.actuator import executor as executor_mod
from elastman.cassandra import access
from elastman.cassandra import nodetool
from elastman.compute import local as local_driver
from elastman.monitor import manager as monitor_manager
from elastman.store import credentials as credentials_store
from tests.functional.compute import cluster as shared
from tests.functional import datacheck
from tests.functional import services
from tests.functional import tls

FLAVOR = 'small:cpu=0,heap=384M'
SECURITY = {'authentication': True, 'cql_tls': True, 'jmx_tls': True}
ROLE, ROLE_PASSWORD = 'elastman_ops', 'Ops-%s' % uuid.uuid4().hex[:12]
ROWS = 300
_CLOUD = ('state_path', None), ('network', 'local_cloud'), \
    ('jmx_port_base', 'local_cloud'), ('flavor', 'local_cloud'), \
    ('tls_keystore', 'local_cloud'), ('tls_keystore_password', 'local_cloud')


@pytest.fixture
def cloud(conf, tmp_path):
    """The local driver with a node certificate for the whole network."""
    material = tls.make(str(tmp_path / 'tls'), shared.NETWORK)
    other_ca = tls.make(str(tmp_path / 'other'), '127.0.0.0/30',
                        ca_name='another CA').ca_pem
    saved = {(n, g): (conf[g][n] if g else conf[n]) for n, g in _CLOUD}
    conf.set_override('state_path', str(tmp_path / 'state'))
    conf.set_override('network', shared.NETWORK, 'local_cloud')
    conf.set_override('jmx_port_base', shared.JMX_BASE, 'local_cloud')
    conf.set_override('flavor', [FLAVOR], 'local_cloud')
    conf.set_override('tls_keystore', material.keystore, 'local_cloud')
    conf.set_override('tls_keystore_password', material.keystore_password,
                      'local_cloud')
    conf.set_override('join_timeout', 300, 'actuator')
    conf.set_override('credentials_grace', 10, 'actuator')
    conf.set_override('encryption_keys', [credentials_store.generate_key()],
                      'credentials')
    conf.set_override('sampling_interval', 5, 'monitor')
    conf.set_override('jmx_timeout', 10.0, 'monitor')
    driver = local_driver.LocalDriver(conf)
    yield driver, material.ca_pem, other_ca
    services.delete_all(driver)
    for (name, group), value in saved.items():
        conf.set_override(name, value, group)
    for name, group in (('join_timeout', 'actuator'),
                        ('credentials_grace', 'actuator'),
                        ('encryption_keys', 'credentials'),
                        ('sampling_interval', 'monitor'),
                        ('jmx_timeout', 'monitor')):
        conf.clear_override(name, group)


def _cluster(store, name, ca, username, password):
    row = store.clusters.create('p', name, spec={
        'mode': 'managed', 'flavor': 'small', 'security': SECURITY},
        policy={'min_size': 1, 'max_size': 3, 'flavors': ['small']})
    store.credentials.set(row['id'], {
        'credentials': {'username': username, 'password': password},
        'tls': {'cql': True, 'jmx': True, 'ca_certificate': ca}})
    return row


def _run(conf, store, driver, cluster, kind, **params):
    action = store.actions.create(cluster['id'], kind, params,
                                  step='requested', state='PENDING')
    started = time.monotonic()
    done = executor_mod.ActionExecutor(conf, store, driver).run(action)
    print('%s %s in %.0f s: %s' % (kind, done['state'],
                                   time.monotonic() - started,
                                   done.get('reason')))
    return done


def _options(address, access_):
    """Cluster options for a TLS session, logged in, on ``address`` only."""
    return dict(
        protocol_version=5,
        load_balancing_policy=policies.WhiteListRoundRobinPolicy([address]),
        **access_.cql_options(address))


def _session(address, access_):
    cluster = cql_cluster.Cluster([address], **_options(address, access_))
    return cluster, cluster.connect()


class Load:
    """Reads and writes through an authenticated TLS session, paced."""

    def __init__(self, address, access_, per_s=60):
        self.cluster, self.session = _session(address, access_)
        self.session.execute(
            "CREATE KEYSPACE IF NOT EXISTS secload WITH replication = "
            "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        self.session.execute('CREATE TABLE IF NOT EXISTS secload.kv '
                             '(k int PRIMARY KEY, v text)')
        self.write = self.session.prepare(
            'INSERT INTO secload.kv (k, v) VALUES (?, ?)')
        self.read = self.session.prepare('SELECT v FROM secload.kv '
                                         'WHERE k = ?')
        self.period = 1.0 / per_s
        self.done = 0
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        i = 0
        while not self.stop_event.is_set():
            key = i % 200
            stmt = self.write if i % 2 == 0 else self.read
            args = (key, 'v%d' % i) if i % 2 == 0 else (key,)
            try:
                self.session.execute(stmt, args, timeout=10)
                self.done += 1
            except Exception:
                pass
            i += 1
            time.sleep(self.period)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop_event.set()
        self.thread.join(15)
        self.cluster.shutdown()


def _measured(mgr, nodes, interval=5, rounds=8):
    """Rounds until every node has a sample with rates (two readings in a
    row: a busy host may keep a new node's first JMX login past a round).
    """
    for _ in range(rounds):
        started = time.monotonic()
        samples = mgr.sample_all()
        if len(samples) == nodes and all(
                s['up'] and s['reads_per_s'] is not None for s in samples):
            return samples
        time.sleep(max(0.0, interval - (time.monotonic() - started)))
    raise AssertionError('no rates from every node: %s' % samples)


def test_secured_cluster_is_monitored_and_scales(conf, store, cloud):
    driver, ca, other_ca = cloud

    # wrong password: the first node refuses it; nothing stays behind
    wrong = _cluster(store, 'wrong', ca, 'cassandra', 'not-the-password')
    done = _run(conf, store, driver, wrong, 'create', count=1,
                flavor='small')
    assert done['state'] == 'FAILED'
    assert "refused user 'cassandra'" in done['reason'], done['reason']
    assert 'password are incorrect' in done['reason'], done['reason']
    row = store.clusters.get(wrong['id'])
    assert row['state'] == 'ERROR'
    assert row['status_reason'] == done['reason'][:500]
    assert driver.list(str(wrong['id'])) == []
    assert store.nodes.list(wrong['id']) == []

    # the right ones (the image's default superuser, at first)
    cluster = _cluster(store, 'secured', ca, 'cassandra', 'cassandra')
    done = _run(conf, store, driver, cluster, 'create', count=1,
                flavor='small')
    assert done['state'] == 'SUCCEEDED', done['reason']
    first = store.nodes.list(cluster['id'])[0]
    superuser = access.Access.from_document(
        store.credentials.get(cluster['id']))
    with pytest.raises(access.AccessDenied) as err:  # not our CA
        access.check_cql(access.Access(username='cassandra',
                                       password='cassandra', cql_tls=True,
                                       ca_certificate=other_ca),
                         first['address'], first['cql_port'])
    assert 'certificate verify failed' in str(err.value)
    # the tenant's own role for elastman; system keyspaces at RF 1 so that
    # a second node may leave again
    cql, session = _session(first['address'], superuser)
    session.execute("CREATE ROLE %s WITH PASSWORD = '%s' AND LOGIN = true"
                    % (ROLE, ROLE_PASSWORD))
    session.execute('GRANT SELECT ON ALL KEYSPACES TO %s' % ROLE)
    for keyspace in ('system_distributed', 'system_traces'):
        session.execute("ALTER KEYSPACE %s WITH replication = {'class': "
                        "'SimpleStrategy', 'replication_factor': 1}"
                        % keyspace)
    cql.shutdown()
    document = store.credentials.get(cluster['id'])
    document['credentials'] = {'username': ROLE, 'password': ROLE_PASSWORD}
    store.credentials.set(cluster['id'], document)
    ops = access.Access.from_document(document)

    # a scale-out with a wrong password is refused before any server
    store.credentials.set(cluster['id'], dict(
        document, credentials={'username': ROLE, 'password': 'wrong'}))
    done = _run(conf, store, driver, cluster, 'scale', count=2)
    assert done['state'] == 'FAILED' and done['step'] == 'failed'
    assert 'at step requested' in done['reason']
    assert "refused user '%s'" % ROLE in done['reason'], done['reason']
    assert len(driver.list(str(cluster['id']))) == 1
    assert store.clusters.get(cluster['id'])['state'] == 'ACTIVE'
    store.credentials.set(cluster['id'], document)

    # the tenant's rows, read back after the scale-out and the scale-in
    datacheck.create(first['address'], 1, **_options(first['address'],
                                                     superuser))
    rows = datacheck.write(first['address'], range(ROWS),
                           **_options(first['address'], superuser))

    mgr = monitor_manager.MonitorManager(conf, store=store)
    mgr.start()
    try:
        with Load(first['address'], superuser) as load:   # the tenant's app
            samples = _measured(mgr, 1)
            sample = samples[0]
            assert sample['extra']['jmx'] == 1.0, sample
            assert sample['reads_per_s'] > 0 and sample['writes_per_s'] > 0
            assert sample['read_p99_ms'] > 0 and sample['write_p99_ms'] > 0
            print('one node: %s' % {k: sample[k] for k in (
                'reads_per_s', 'writes_per_s', 'read_p99_ms',
                'write_p99_ms')})

            done = _run(conf, store, driver, cluster, 'scale', count=2)
            assert done['state'] == 'SUCCEEDED', done['reason']
            nodes = store.nodes.list(cluster['id'])
            assert sorted(n['state'] for n in nodes) == ['UN', 'UN']
            assert datacheck.verify(first['address'], rows, **_options(
                first['address'], superuser)) == ROWS
            samples = _measured(mgr, 2)
            assert all(s['extra']['jmx'] == 1.0 for s in samples), samples
            assert sum(s['reads_per_s'] for s in samples) > 0
            assert any(s['read_p99_ms'] for s in samples)
            assert load.done > 0
        ring = nodetool.Nodetool(conf, first['jmx_host'], first['jmx_port'],
                                 access=ops).status()
        assert sorted(m.code for m in ring) == ['UN', 'UN']
        with pytest.raises(nodetool.NodetoolAccessDenied):
            nodetool.Nodetool(conf, first['jmx_host'], first['jmx_port'],
                              access=access.Access(
                                  username=ROLE, password='x', jmx_tls=True,
                                  ca_certificate=ca)).status()

        done = _run(conf, store, driver, cluster, 'scale', count=1)
        assert done['state'] == 'SUCCEEDED', done['reason']
        left = store.nodes.list(cluster['id'])
        assert len(left) == 1 and len(driver.list(str(cluster['id']))) == 1
        ring = nodetool.Nodetool(conf, left[0]['jmx_host'],
                                 left[0]['jmx_port'], access=ops).status()
        assert [m.address for m in ring] == [left[0]['address']]
        assert datacheck.verify(first['address'], rows, **_options(
            first['address'], superuser)) == ROWS
        assert [s['up'] for s in mgr.sample_all()] == [True]
    finally:
        mgr.stop()
    done = _run(conf, store, driver, cluster, 'delete', count=0)
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert driver.list() == []
    assert store.credentials.get(cluster['id']) is None
