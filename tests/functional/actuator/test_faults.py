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
"""Two elastman processes, one RabbitMQ and one store, three clusters; then
the broker is stopped for 60 s and the store node restarted.

Each process runs every control worker (monitor, trainer, predictor,
actuator), so every worker runs twice. Each cluster (one real local node)
scales out by the actuators' own decision (its policy's minimum goes to 2) and
back in by an operator's journalled request. Exactly one action is carried
out per decision: one scale-out action per scale-out decision, one server per
action, and each action is planned by one process only. Every row written
before a scaling action reads back after it at consistency ALL.

Then RabbitMQ (a private node of this test) stops for 60 s and the store node
restarts meanwhile: both processes log the outages and reconnect, and each
cluster's next control period is decided and recorded.
"""
import os
import tempfile
import time

import pytest

from elastman.common import timestamps
from tests.functional import datacheck
from tests.functional import services

NETWORK = os.environ.get('ELASTMAN_TEST_LOCAL_NETWORK', '127.0.72.0/24')
JMX_BASE = int(os.environ.get('ELASTMAN_TEST_FAULTS_JMX_BASE', '17700'))
FLAVOR = 'small:cpu=0,heap=320M'
PERIOD = 10
ROWS = 200
HOSTS = ('elastman-a', 'elastman-b')
OUTAGE = 60                     # s the broker is away

RUN_WORKERS = """
import sys
from elastman.cmd import workers
sys.exit(workers.run(sys.argv, workers.CONTROL_WORKERS))
"""


@pytest.fixture
def broker():
    rabbit = services.PrivateRabbit()
    rabbit.start()
    yield rabbit
    rabbit.destroy()


@pytest.fixture
def cloud(keyspace_conf, tmp_path):
    with services.local_cloud(keyspace_conf, str(tmp_path / 'state'),
                              NETWORK, JMX_BASE, FLAVOR) as driver:
        yield driver


def _wait_actions(store, clusters, kind, workers, timeout=420):
    """Every cluster's ``kind`` actions ended; return them per cluster."""
    def ended():
        for worker in workers:
            assert worker.popen.poll() is None, worker.output[-5000:]
        found = {}
        for cluster in clusters:
            actions = [a for a in store.actions.list(cluster['id'])
                       if a['kind'] == kind]
            if not actions or any(a['state'] not in ('SUCCEEDED', 'FAILED')
                                  for a in actions):
                return None
            found[cluster['id']] = actions
        return found
    return services.wait_for(ended, timeout=timeout, interval=3)


def _address(store, cluster):
    return sorted(n['address'] for n in store.nodes.list(cluster['id']))[0]


@pytest.mark.timeout(1800)
def test_two_processes_scale_three_clusters_and_survive_restarts(
        keyspace_conf, store, store_node, cloud, broker, config_file,
        tmp_path):
    conf = keyspace_conf
    clusters = []
    for i in range(3):
        cluster = store.clusters.create(
            'p', 'faults%d' % i, spec={'mode': 'managed', 'flavor': 'small'},
            policy={'min_size': 1, 'max_size': 2, 'replication_factor': 1,
                    'flavors': ['small'], 'control_period_s': PERIOD,
                    'cooldown_s': 0, 'warmup_s': 3600, 'auto_heal': False})
        store.actions.create(cluster['id'], 'create',
                             {'count': 1, 'flavor': 'small'},
                             step='requested', state='PENDING')
        clusters.append(cluster)
    workers = []
    for host in HOSTS:
        config = config_file(
            DEFAULT={'state_path': conf.state_path, 'host': host,
                     'transport_url': broker.url},
            local_cloud={'network': NETWORK, 'jmx_port_base': JMX_BASE,
                         'flavor': FLAVOR},
            actuator={'control_period': PERIOD, 'join_timeout': 300},
            monitor={'sampling_interval': PERIOD,
                     'push_latency_to_hosts': False})
        os.rename(config, str(tmp_path / ('%s.conf' % host)))
        workers.append(services.Process(
            '-c', RUN_WORKERS, '--config-file',
            str(tmp_path / ('%s.conf' % host))))
    try:
        created = _wait_actions(store, clusters, 'create', workers)
        assert all(a[0]['state'] == 'SUCCEEDED' for a in created.values()), \
            created
        rows = {}
        for cluster in clusters:
            address = _address(store, cluster)
            datacheck.create(address, replication_factor=1)
            rows[cluster['id']] = datacheck.write(address, range(ROWS))

        # scale out: the actuators decide it (the minimum rises to 2)
        for cluster in clusters:
            policy = dict(store.clusters.get(cluster['id'])['policy'],
                          min_size=2)
            store.clusters.update(cluster['id'], policy=policy)
        outs = _wait_actions(store, clusters, 'scale_out', workers)
        for cluster in clusters:
            [action] = outs[cluster['id']]
            assert action['state'] == 'SUCCEEDED', action['reason']
            assert len(action['result']['servers']) == 1
            decided = [d for d in store.actions.decisions(cluster['id'])
                       if d['action'] == 'scale_out']
            assert len(decided) == 1, decided
            assert len(cloud.list(str(cluster['id']))) == 2
            assert datacheck.verify(_address(store, cluster),
                                    rows[cluster['id']]) == ROWS

        # scale in: an operator's request, journalled as the API does. The
        # guard is off: the one node left, streaming and serving alone, may
        # read red and ask for a node again before the count below
        for cluster in clusters:
            policy = dict(store.clusters.get(cluster['id'])['policy'],
                          min_size=1, guard=False)
            store.clusters.update(cluster['id'], policy=policy)
            store.actions.create(cluster['id'], 'scale', {'count': 1},
                                 step='requested', state='PENDING')
        ins = _wait_actions(store, clusters, 'scale', workers)
        for cluster in clusters:
            [action] = ins[cluster['id']]
            assert action['state'] == 'SUCCEEDED', action['reason']
            assert len(action['result']['decommissioned']) == 1
            assert len(cloud.list(str(cluster['id']))) == 1
            assert datacheck.verify(_address(store, cluster),
                                    rows[cluster['id']]) == ROWS
        # each action was planned once, by one of the two processes
        for actions in list(outs.values()) + list(ins.values()):
            line = 'action %s (' % actions[0]['id']
            planned = sum(1 for w in workers for ln in w.lines
                          if line in ln and '-> planned' in ln)
            assert planned == 1, actions[0]['id']

        # the broker away for OUTAGE s, the store node restarted meanwhile
        broker.stop()
        away = time.monotonic()
        store_node.stop()
        store_node.start()
        store_node.wait_for_cql()
        restarted = time.time()
        time.sleep(max(0.0, away + OUTAGE - time.monotonic()))
        broker.start()

        def store_answers():
            try:
                return store.clusters.get(clusters[0]['id']) is not None
            except Exception:   # the test's own session reconnects too
                return False
        services.wait_for(store_answers, timeout=180, interval=3)

        def decided_again():
            try:
                return all(any(timestamps.epoch(d['ts']) > restarted
                               for d in store.actions.decisions(c['id'],
                                                                limit=5))
                           for c in clusters)
            except Exception:   # the test's own session reconnects too
                return False
        services.wait_for(decided_again, timeout=240, interval=5)
        # every periodic task that failed through the outage says so once
        # it works again (each process's driver reconnects on its own
        # schedule, at most [store] reconnect_max_delay apart)
        services.wait_for(lambda: all('works again after' in w.output
                                      for w in workers), timeout=180,
                          interval=5)
        # and each process's AMQP connections are back (the driver retries
        # with a growing back-off, so this may come after the store's)
        services.wait_for(lambda: all('Reconnected to AMQP server' in w.output
                                      for w in workers), timeout=120,
                          interval=2)
        for worker in workers:
            out = worker.output
            assert worker.popen.poll() is None, out[-3000:]
            assert 'Connection failed' in out or 'unreachable' in out, \
                out[-3000:]
            assert 'Reconnected to AMQP server' in out, out[-3000:]
    finally:
        for host, worker in zip(HOSTS, workers):
            worker.stop()
            # outside pytest's temporary directories, which other runs prune
            path = os.path.join(tempfile.gettempdir(),
                                'elastman-test-faults-%s.log' % host)
            with open(path, 'w') as f:
                f.write(worker.output)
            print('%s: %d lines of output in %s' % (host, len(worker.lines),
                                                    path))
