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
"""Scaling actions against real Cassandra nodes run by the local driver.

A cluster grows to three nodes (one bootstrap at a time) and holds rows with
replication factor 3. Then an actuator is killed at every point of a
scale-out to four nodes and of the scale-in back to three: each kill is a
separate process that resumes the action from the journal where the previous
one died and dies at the next point (a checkpoint hook the harness installs
in the executor exits the process there, as kill -9 would). Afterwards the
cluster, the servers and the node rows agree, every node is UN, every row
reads back at consistency ALL, and deleting the cluster leaves no process,
directory or row behind.
"""
import json
import os
import queue
import signal
import subprocess
import sys
import threading

import pytest

from elastman.actuator import executor as executor_mod
from elastman.cassandra import nodetool
from elastman.compute import base as compute
from elastman.compute import local as local_driver
from tests.functional import datacheck
from tests.functional import services

NETWORK = '127.0.70.0/24'
JMX_BASE = 17400
FLAVOR = 'small:cpu=0,heap=384M'
ROWS = 300

#: (kill point, journalled step the resumed action starts from)
SCALE_OUT_KILLS = [('planned', 'planned'), ('creating', 'creating'),
                   ('creating:server', 'creating'), ('joining', 'joining'),
                   ('cleaning', 'cleaning'),
                   ('decommissioning', 'decommissioning'),
                   ('deleting', 'deleting')]
SCALE_IN_KILLS = [('planned', 'planned'), ('cleaning', 'cleaning'),
                  ('decommissioning', 'decommissioning'),
                  ('decommissioning:leaving', 'decommissioning'),
                  ('deleting', 'deleting'), ('deleting:server', 'deleting')]

# Actuator runs of journalled actions, each in a process of its own: this
# one imports what a run needs once, then forks a child per line of stdin
# (cluster id, action id, kill point, config file, output file). The child
# reads the configuration, opens the store and runs the action as a new
# actuator process would, and dies (as kill -9 would) when the action
# reaches the kill point. For each child this process prints its pid, then
# its exit code. (A new interpreter per run spent 2 s on imports.)
ACTUATORS = """
import json, os, sys, traceback, uuid
from elastman.actuator import executor
from elastman.actuator import steps
from elastman.common import config
from elastman.compute import local
from elastman import store as store_mod


def run(cluster_id, action_id, point, config_file):
    conf = config.parse_args(['actuator', '--config-file', config_file])
    store = store_mod.Store.open(conf)
    action = store.actions.get(uuid.UUID(cluster_id), uuid.UUID(action_id))
    run = executor.ActionExecutor(conf, store, local.LocalDriver(conf))
    assert point in steps.CHECKPOINTS, point
    run.checkpoint_hook = lambda at: at == point and os._exit(137)
    run.run(action)


for line in sys.stdin:
    cluster_id, action_id, point, config_file, output = json.loads(line)
    pid = os.fork()
    if pid == 0:
        fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        code = 0
        try:
            run(cluster_id, action_id, point, config_file)
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    print(pid, flush=True)
    _, status = os.waitpid(pid, 0)
    print(os.waitstatus_to_exitcode(status), flush=True)
"""
RUN_TIMEOUT = 600       # s one run may take


class Actuators:
    """Forks actuator runs, one process each (see ACTUATORS)."""

    def __init__(self, log_dir):
        self.log_dir = log_dir
        self.runs = 0
        self.proc = subprocess.Popen(
            [sys.executable, '-c', ACTUATORS], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(int(line))
        self.lines.put(None)

    def _line(self, child=None):
        try:
            line = self.lines.get(timeout=RUN_TIMEOUT)
        except queue.Empty:
            if child is not None:
                os.kill(child, signal.SIGKILL)
            raise TimeoutError('no actuator run ended within %ss'
                               % RUN_TIMEOUT) from None
        assert line is not None, ('the forking process died: %s'
                                  % self.proc.wait(10))
        return line

    def run(self, cluster, action, point, config):
        """Run ``action`` in a new process that dies at ``point``; its exit
        code and output.
        """
        self.runs += 1
        output = os.path.join(self.log_dir, 'run-%s-%d-%s.log' % (
            str(action['id'])[:8], self.runs, point.replace(':', '-')))
        self.proc.stdin.write(json.dumps([
            str(cluster['id']), str(action['id']), point, config,
            output]) + '\n')
        self.proc.stdin.flush()
        code = self._line(child=self._line())
        with open(output) as f:
            return code, f.read()

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def cloud(conf, tmp_path):
    conf.set_override('state_path', str(tmp_path / 'state'))
    conf.set_override('network', NETWORK, 'local_cloud')
    conf.set_override('jmx_port_base', JMX_BASE, 'local_cloud')
    conf.set_override('flavor', [FLAVOR], 'local_cloud')
    conf.set_override('join_timeout', 300, 'actuator')
    driver = local_driver.LocalDriver(conf)
    yield driver
    services.delete_all(driver)
    conf.clear_override('state_path')
    for name in ('network', 'jmx_port_base', 'flavor'):
        conf.clear_override(name, 'local_cloud')
    conf.clear_override('join_timeout', 'actuator')


def _action(store, cluster, kind, **params):
    return store.actions.create(cluster['id'], kind, params, step='requested',
                                state='PENDING')


def kill_at_each_point(store, cluster, action, kills, config):
    """Run the action once per kill point in a new process that dies there;
    each one resumes from the step the previous one journalled.
    """
    actuators = Actuators(os.path.dirname(config))
    try:
        for point, journalled in kills:
            code, output = actuators.run(cluster, action, point, config)
            journal = store.actions.get(cluster['id'], action['id'])
            assert code == 137, (point, journal['reason'], output[-3000:])
            assert (journal['step'], journal['state']) == (journalled,
                                                           'RUNNING')
    finally:
        actuators.close()
    return journal


def _consistent(conf, store, cloud, cluster, size):
    """Node rows, servers and the ring agree and every node is UN."""
    nodes = store.nodes.list(cluster['id'])
    assert sorted(n['state'] for n in nodes) == ['UN'] * size
    servers = cloud.list(str(cluster['id']))
    assert sorted(s.id for s in servers) == sorted(n['node_id']
                                                   for n in nodes)
    tool = nodetool.Nodetool(conf, nodes[0]['jmx_host'], nodes[0]['jmx_port'])
    expected = sorted((n['address'], 'UN') for n in nodes)

    def ring():
        return sorted((m.address, m.code) for m in tool.status())

    # the executor waits until one peer's gossip has a new node UN; the
    # others hear of it within seconds
    try:
        services.wait_for(lambda: ring() == expected, timeout=30, interval=2)
    except TimeoutError:
        pass
    assert ring() == expected
    return nodes


def _new_cluster(conf, store, cloud, name, size, max_size):
    """A managed cluster of ``size`` local nodes, its executor and nodes."""
    cluster = store.clusters.create(
        'p', name, spec={'mode': 'managed', 'flavor': 'small'},
        policy={'min_size': size, 'max_size': max_size,
                'flavors': ['small']})
    executor = executor_mod.ActionExecutor(conf, store, cloud)
    done = executor.run(_action(store, cluster, 'create', count=size,
                                flavor='small'))
    assert done['state'] == 'SUCCEEDED', done['reason']
    return cluster, executor, _consistent(conf, store, cloud, cluster, size)


def test_actuator_killed_at_every_step(conf, store, cloud, config_file):
    cluster, executor, nodes = _new_cluster(conf, store, cloud, 'crashes',
                                            3, 4)
    datacheck.create(nodes[0]['address'])
    rows = datacheck.write(nodes[0]['address'], range(ROWS))
    config = config_file(
        DEFAULT={'state_path': conf.state_path},
        local_cloud={'network': NETWORK, 'jmx_port_base': JMX_BASE,
                     'flavor': FLAVOR},
        actuator={'join_timeout': 300})

    # scale out to 4, killed at every step; a last run finishes it
    action = _action(store, cluster, 'scale', count=4)
    journal = kill_at_each_point(store, cluster, action, SCALE_OUT_KILLS,
                                 config)
    done = executor.run(journal)
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert len(done['result']['servers']) == 1   # adopted, not duplicated
    nodes = _consistent(conf, store, cloud, cluster, 4)
    assert datacheck.verify(nodes[0]['address'], rows) == ROWS
    # the old nodes' cleanup waits for the next removal (the default)
    marked = sorted(n['node_id'] for n in nodes
                    if (n['details'] or {}).get('cleanup_pending'))
    assert marked == sorted(done['result']['plan']['previous'])

    # scale in to 3, killed at every step (once while the node streams)
    action = _action(store, cluster, 'scale', count=3)
    journal = kill_at_each_point(store, cluster, action, SCALE_IN_KILLS,
                                 config)
    done = executor.run(journal)
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert done['result']['decommissioned'] == done['result']['plan'][
        'remove']
    # ... which cleaned up every marked node that stays, before leaving
    assert set(done['result']['plan']['cleanup_before']) == set(marked) - set(
        done['result']['plan']['remove'])
    nodes = _consistent(conf, store, cloud, cluster, 3)
    assert [n['node_id'] for n in nodes
            if (n['details'] or {}).get('cleanup_pending')] == []
    assert datacheck.verify(nodes[0]['address'], rows) == ROWS
    assert store.clusters.get(cluster['id'])['state'] == 'ACTIVE'

    # deleting the cluster removes every server, row and directory
    done = executor.run(_action(store, cluster, 'delete', count=0))
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert cloud.list(str(cluster['id'])) == []
    assert store.nodes.list(cluster['id']) == []
    state_dir = os.path.join(conf.state_path, 'local-cloud')
    leftovers = [d for d in os.listdir(state_dir) if not d.startswith('.')] \
        if os.path.isdir(state_dir) else []
    assert leftovers == []


def test_failed_join_rolls_back(conf, store, cloud):
    """A node that never joins is deleted, the action fails with why and the
    cluster it was to create is in ERROR.
    """
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
        # a cluster whose create failed has no node: it never came to be,
        # and says why
        failed = store.clusters.get(cluster['id'])
        assert failed['state'] == 'ERROR'
        assert 'did not join within 1s' in failed['status_reason']
    finally:
        conf.set_override('join_timeout', 300, 'actuator')


def test_concurrent_joins_bring_nodes_in_together(conf, store, cloud):
    """With ``concurrent_joins`` 2 a +2 creates both servers before either
    is UN, each with tokens of its own; both join (Cassandra would stop the
    second without them), and every row is still there.
    """
    cluster, executor, (first,) = _new_cluster(conf, store, cloud,
                                               'together', 1, 3)
    datacheck.create(first['address'], replication_factor=1)
    rows = datacheck.write(first['address'], range(ROWS))
    tool = nodetool.Nodetool(conf, first['jmx_host'], first['jmx_port'])
    ring_before = set(tool.ring_tokens())

    seen = []       # the ring's state codes at each server's create

    def at_checkpoint(point):
        if point == 'creating:server':
            seen.append(sorted(m.code for m in tool.status()))
    executor.checkpoint_hook = at_checkpoint
    conf.set_override('concurrent_joins', 2, 'actuator')
    try:
        done = executor.run(_action(store, cluster, 'scale', count=3))
    finally:
        conf.clear_override('concurrent_joins', 'actuator')
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert not done['result'].get('warnings'), done['result']['warnings']
    # when the second server was created, the first was not UN yet
    assert len(seen) == 2 and seen[1].count('UN') == 1, seen
    new = [cloud.get(s) for s in done['result']['servers']]
    given = [s.metadata[compute.INITIAL_TOKENS].split(',')
             for s in new]
    assert [len(t) for t in given] == [16, 16]
    nodes = _consistent(conf, store, cloud, cluster, 3)
    ring = tool.ring_tokens()
    assert len(ring) == 48 and ring_before < set(ring)
    assert set(ring) - ring_before == {int(t) for t in given[0] + given[1]}
    assert datacheck.verify(nodes[0]['address'], rows) == ROWS
