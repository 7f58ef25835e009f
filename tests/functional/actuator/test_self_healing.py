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
"""A dead node is found and replaced, on real local Cassandra nodes.

One 3-node cluster at replication factor 3 goes through three deaths (one
test, as every part needs a settled cluster and a new one costs three
bootstraps):

1. Under a steady write load, one node is killed with SIGKILL while a monitor
   and an actuator run. The monitor marks it DEAD (missed samples, DN at two
   live peers) within 3 of its rounds; the actuator's healer journals a
   ``replace`` action, a new server of the dead node's flavour takes over its
   tokens (``replace_address_first_boot``) and the dead server is deleted.
2. Another node is killed, and the same replacement is run by actuator
   processes killed at each of its checkpoints, each resuming from the
   journal: it converges with one replacement server, no orphan.
Before each replacement every row written so far is read back at QUORUM
(one node is dead on purpose), and after it at ALL. The times to detect and
to replace are printed (``-s``) for doc/source/self-healing.rst.

3. The other way to heal: a third node is killed and its flavour retired
   from the cloud, so no replacement can take over the dead node's tokens;
   the actuator's healer records why, the executor runs ``nodetool
   removenode`` through a live peer and a scale-out by one node of the
   policy's other flavour, and every row is read back (QUORUM before, ALL
   after).
"""
import os
import threading
import time

from cassandra.cluster import Cluster
from cassandra import ConsistencyLevel
import pytest

from elastman.actuator import executor as executor_mod
from elastman.actuator import joining
from elastman.actuator import manager as actuator_manager
from elastman.cassandra import nodetool
from elastman.common import timestamps
from elastman.compute import base as compute
from elastman.compute import local as local_driver
from elastman.monitor import manager as monitor_manager
from tests.functional.actuator import test_executor_local as kills
from tests.functional import datacheck
from tests.functional import services

NETWORK = os.environ.get('ELASTMAN_TEST_LOCAL_NETWORK', '127.0.71.0/24')
JMX_BASE = int(os.environ.get('ELASTMAN_TEST_HEAL_JMX_BASE', '17600'))
FLAVOR = 'small:cpu=0,heap=384M'
#: what the cloud offers once ``small`` is retired
OTHER_FLAVOR = 'medium:cpu=0,heap=384M'
INTERVAL = 12          # monitor sampling interval, s
ROWS = 500

#: (kill point, journalled step the resumed replacement starts from); the
#: replace plan passes cleaning and decommissioning with nothing to do there
#: (test_executor_local.py kills a scale-out at those)
REPLACE_KILLS = [('planned', 'planned'), ('creating', 'creating'),
                 ('creating:server', 'creating'), ('joining', 'joining'),
                 ('deleting', 'deleting'), ('deleting:server', 'deleting')]


class Writer(threading.Thread):
    """Writes new rows at QUORUM, as fast as 50 a second, until stopped;
    ``rows`` holds every row whose write was acknowledged.
    """

    def __init__(self, address, first_key):
        super().__init__(daemon=True)
        self.address, self.key = address, first_key
        self.rows, self.failed = {}, 0
        self.stopped = threading.Event()

    def run(self):
        with Cluster([self.address]) as cql:
            session = cql.connect()
            insert = session.prepare('INSERT INTO data.kv (k, v) VALUES '
                                     '(?, ?)')
            insert.consistency_level = ConsistencyLevel.QUORUM
            while not self.stopped.wait(0.02):
                try:
                    session.execute(insert, (self.key, 'v%d' % self.key),
                                    timeout=5)
                    self.rows[self.key] = 'v%d' % self.key
                except Exception:
                    self.failed += 1
                self.key += 1

    def stop(self):
        self.stopped.set()
        self.join(30)
        return self.rows


@pytest.fixture
def cloud(keyspace_conf, tmp_path):
    with services.local_cloud(
            keyspace_conf, str(tmp_path / 'state'), NETWORK, JMX_BASE, FLAVOR,
            {('join_timeout', 'actuator'): 300,
             ('sampling_interval', 'monitor'): INTERVAL,
             ('jmx_timeout', 'monitor'): 5.0,
             ('push_latency_to_hosts', 'monitor'): False,
             ('host', None): 'heal-test'}) as driver:
        yield driver


def _ring(conf, node):
    return {s.address: s.code for s in nodetool.Nodetool(
        conf, node['jmx_host'], node['jmx_port']).status()}


def _settled(conf, store, cloud, cluster):
    """Three UN node rows, their servers, and a ring of exactly them (as
    the first server, never killed, sees it).
    """
    nodes = sorted(store.nodes.list(cluster['id']),
                   key=lambda n: cloud.get(n['server_id']).created_at)
    assert sorted(n['state'] for n in nodes) == ['UN'] * 3, nodes
    assert sorted(s.id for s in cloud.list(str(cluster['id']))) == sorted(
        n['server_id'] for n in nodes)
    wanted = {n['address']: 'UN' for n in nodes}
    # a peer may see a node that is UN by its own account as UJ a while
    services.wait_for(lambda: _ring(conf, nodes[0]) == wanted, timeout=90,
                      interval=3)
    return nodes


def _kill(cloud, nodes, contact):
    """SIGKILL the Cassandra process of one node (not the contact node, the
    first server, which is every other node's seed).
    """
    victim = [n for n in nodes if n['address'] != contact][0]
    cloud.node(victim['server_id']).kill()
    return victim, time.time()


def _wait_dead(store, cluster, victim, monitor, rounds):
    """Run monitor rounds, the first half an interval from now, until the
    victim is DEAD; how many it took.
    """
    time.sleep(INTERVAL / 2)
    for taken in range(1, rounds + 1):
        started = time.monotonic()
        monitor.sample_all()
        if store.nodes.get(cluster['id'], victim['node_id'])['state'] \
                == 'DEAD':
            return taken
        time.sleep(max(0.0, INTERVAL - (time.monotonic() - started)))
    return None


@pytest.mark.timeout(2400)
def test_dead_nodes_are_replaced_or_removed(keyspace_conf, store, cloud,
                                            config_file):
    conf = keyspace_conf
    cluster = store.clusters.create(
        'p', 'healing', spec={'mode': 'managed', 'flavor': 'small'},
        policy={'min_size': 3, 'max_size': 4, 'flavors': ['small'],
                'heal_grace_s': 0, 'control_period_s': 3600,
                'warmup_s': 3600})
    executor = executor_mod.ActionExecutor(conf, store, cloud)
    done = executor.run(store.actions.create(
        cluster['id'], 'create', {'count': 3, 'flavor': 'small'},
        step='requested', state='PENDING'))
    assert done['state'] == 'SUCCEEDED', done['reason']
    nodes = _settled(conf, store, cloud, cluster)
    contact = cloud.list(str(cluster['id']))[0].address
    datacheck.create(contact)
    rows = datacheck.write(contact, range(ROWS))

    nodes = _replaced_under_load(conf, store, cloud, cluster, nodes, contact,
                                 rows)
    nodes = _replaced_by_killed_actuators(conf, store, cloud, cluster, nodes,
                                          contact, rows, executor,
                                          config_file)
    _removed_where_no_replacement_can_boot(conf, store, cloud, cluster, nodes,
                                           contact, rows)


def _replaced_under_load(conf, store, cloud, cluster, nodes, contact, rows):
    """1: kill -9 under load; elastman finds and replaces the node. ``rows``
    gets the rows written under load; the settled nodes are returned.
    """
    monitor = monitor_manager.MonitorManager(conf, store=store)
    monitor.start()
    actuator = actuator_manager.ActuatorManager(conf, store, driver=cloud)
    actuator.start()
    try:
        monitor.sample_all()              # connections up, a good sample
        writer = Writer(contact, 10 ** 6)
        writer.start()
        time.sleep(5)
        victim, killed_at = _kill(cloud, nodes, contact)
        rounds = _wait_dead(store, cluster, victim, monitor, 3)
        assert rounds is not None, 'not DEAD after 3 monitor rounds'
        dead = store.nodes.get(cluster['id'], victim['node_id'])
        detect_s = timestamps.epoch(dead['state_changed_at']) - killed_at
        assert 'missed its last 2 samples; DN at' in dead['state_reason']
        rows.update(writer.stop())
        assert datacheck.verify(contact, rows, ConsistencyLevel.QUORUM) \
            == len(rows)

        actuator.control_round()         # the healer journals the replace
        [action] = [a for a in store.actions.list(cluster['id'])
                    if a['kind'] == 'replace']
        actuator.wait_idle(timeout=300)
        action = store.actions.get(cluster['id'], action['id'])
        replaced_s = timestamps.epoch(action['updated_at']) - killed_at
        assert action['state'] == 'SUCCEEDED', action['reason']
        assert action['result']['plan']['mode'] == 'replace'
        with pytest.raises(compute.ServerNotFound):
            cloud.get(victim['server_id'])
        nodes = _settled(conf, store, cloud, cluster)
        assert victim['address'] not in _ring(conf, nodes[0])
        [new] = action['result']['servers']
        assert cloud.get(new).metadata[compute.REPLACE_ADDRESS] == \
            victim['address']
        [record] = [d['record'] for d in store.actions.decisions(
            cluster['id']) if d['action'] == 'replace']
        assert record['inputs']['dead_node'] == victim['node_id']
        assert 'DEAD for' in record['reason'] and 'DN at' in record['reason']
        verified = datacheck.verify(contact, rows)
        print('\nkill -9 -> DEAD: %.1f s (%d monitor rounds of %d s); '
              'kill -9 -> replacement UN and dead server deleted: %.1f s; '
              '%d rows verified at ALL (%d written under load, %d writes '
              'refused during the outage)'
              % (detect_s, rounds, INTERVAL, replaced_s, verified,
                 len(writer.rows), writer.failed))
    finally:
        actuator.stop()
        monitor.stop()
    return nodes


def _replaced_by_killed_actuators(conf, store, cloud, cluster, nodes, contact,
                                  rows, executor, config_file):
    """2: the same replacement, the actuator killed at each step."""
    victim, _ = _kill(cloud, nodes, contact)
    services.wait_for(lambda: _ring(conf, nodes[0]).get(victim['address'])
                      == 'DN', timeout=120, interval=2)
    store.nodes.change_state(cluster['id'], victim['node_id'], 'DEAD',
                             'killed by the test', ('UN',))
    assert datacheck.verify(contact, rows, ConsistencyLevel.QUORUM) \
        == len(rows)
    action = store.actions.create(cluster['id'], 'replace',
                                  {'node': victim['node_id']},
                                  step='requested', state='PENDING')
    config = config_file(
        DEFAULT={'state_path': conf.state_path},
        local_cloud={'network': NETWORK, 'jmx_port_base': JMX_BASE,
                     'flavor': FLAVOR},
        actuator={'join_timeout': 300})
    journal = kills.kill_at_each_point(store, cluster, action, REPLACE_KILLS,
                                       config)
    done = executor.run(journal)
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert len(done['result']['servers']) == 1   # adopted, not doubled
    replacements = [s for s in cloud.list(str(cluster['id']))
                    if s.metadata.get(joining.ACTION_TAG)
                    == str(action['id'])]
    assert len(replacements) == 1
    with pytest.raises(compute.ServerNotFound):
        cloud.get(victim['server_id'])
    nodes = _settled(conf, store, cloud, cluster)
    assert datacheck.verify(contact, rows) == len(rows)
    return nodes


def _removed_where_no_replacement_can_boot(conf, store, cloud, cluster, nodes,
                                           contact, rows):
    """3: the dead node's flavour retired: removenode, then a scale-out by
    one node of the policy's other flavour.
    """
    store.clusters.update(cluster['id'], policy=dict(
        store.clusters.get(cluster['id'])['policy'],
        flavors=['small', 'medium']))
    earlier = {a['id'] for a in store.actions.list(cluster['id'])}
    victim, killed_at = _kill(cloud, nodes, contact)
    services.wait_for(lambda: _ring(conf, nodes[0]).get(victim['address'])
                      == 'DN', timeout=120, interval=2)
    store.nodes.change_state(cluster['id'], victim['node_id'], 'DEAD',
                             'killed by the test', ('UN',))
    assert datacheck.verify(contact, rows, ConsistencyLevel.QUORUM) \
        == len(rows)

    # the cloud retires the dead node's flavour: a new server of it cannot
    # boot, so none can take over the node's tokens
    conf.set_override('flavor', [OTHER_FLAVOR], 'local_cloud')
    retired = local_driver.LocalDriver(conf)
    actuator = actuator_manager.ActuatorManager(conf, store, driver=retired)
    actuator.start()
    try:
        actuator.control_round()         # the healer journals the replace
        [action] = [a for a in store.actions.list(cluster['id'])
                    if a['kind'] == 'replace' and a['id'] not in earlier]
        actuator.wait_idle(timeout=600)
    finally:
        actuator.stop()
    action = store.actions.get(cluster['id'], action['id'])
    healed_s = timestamps.epoch(action['updated_at']) - killed_at
    assert action['state'] == 'SUCCEEDED', action['reason']
    plan = action['result']['plan']
    assert (plan['mode'], plan['flavor']) == ('removenode', 'medium')
    assert plan['why_removenode'] == 'flavour small no longer exists'
    assert action['result']['removed_host_id']
    [record] = [d['record'] for d in store.actions.decisions(cluster['id'])
                if d['action'] == 'replace'
                and d['record']['inputs']['dead_node'] == victim['node_id']]
    assert record['inputs']['mode'] == 'removenode'
    assert 'DEAD for' in record['reason'] and 'killed by the test' in \
        record['reason']
    assert ('no replacement can take over its tokens (flavour small no '
            'longer exists): nodetool removenode, then a scale-out by one '
            'of flavour medium') in record['reason']

    with pytest.raises(compute.ServerNotFound):
        cloud.get(victim['server_id'])
    nodes = _settled(conf, store, cloud, cluster)
    assert victim['address'] not in _ring(conf, nodes[0])
    [new] = action['result']['servers']
    assert cloud.get(new).flavor == 'medium'
    assert compute.REPLACE_ADDRESS not in cloud.get(new).metadata
    verified = datacheck.verify(contact, rows)
    print('\nkill -9 -> removenode + scale-out by one UN, dead server '
          'deleted: %.1f s (the node marked DEAD by the test once DN); %d '
          'rows verified at QUORUM before and at ALL after'
          % (healed_s, verified))
