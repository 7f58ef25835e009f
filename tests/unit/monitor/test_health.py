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
"""When the monitor marks a node DEAD: missed samples and DN at live peers."""
import datetime
import uuid

import pytest

from elastman.cassandra import nodetool
from elastman.common import config
from elastman.common import exception
from elastman.monitor import health
from tests.unit import memstore


class Peers:
    """nodetool per peer: what each one's ``nodetool status`` says."""

    def __init__(self, views):
        self.views = views          # jmx_host -> {address: 'UN'/'DN'} | Exc
        self.asked = []

    def __call__(self, host, port):
        peers = self

        class Tool:
            def status(self):
                peers.asked.append(host)
                view = peers.views[host]
                if isinstance(view, Exception):
                    raise view
                return [nodetool.NodeStatus('dc', c[0], c[1], a, 1, 16, 1.0,
                                            str(uuid.uuid4()), 'r')
                        for a, c in view.items()]
        return Tool()


@pytest.fixture
def conf():
    conf = config.CONF
    conf([], project='elastman', default_config_files=[])
    return conf


def _cluster(store, size=3):
    cid = uuid.uuid4()
    for i in range(1, size + 1):
        store.nodes.upsert(cid, 'n%d' % i, address='10.0.0.%d' % i,
                           jmx_host='10.0.0.%d' % i, jmx_port=7199,
                           state='UN')
    return cid


def _round(checker, store, cid, up):
    """One monitor round: store each node's sample, then check health."""
    ts = datetime.datetime.now()
    samples = [{'cluster_id': cid, 'node_id': n, 'ts': ts, 'up': u}
               for n, u in up.items()]
    for s in samples:
        store.samples.add(s)
    return checker.check(cid, store.nodes.list(cid), samples)


RING_N3_DOWN = {'10.0.0.1': 'UN', '10.0.0.2': 'UN', '10.0.0.3': 'DN'}


def test_dead_after_missed_samples_and_two_peers_see_it_down(conf):
    store = memstore.MemStore()
    cid = _cluster(store)
    peers = Peers({'10.0.0.1': RING_N3_DOWN, '10.0.0.2': RING_N3_DOWN})
    checker = health.HealthChecker(conf, store, peers)
    down = {'n1': True, 'n2': True, 'n3': False}
    assert _round(checker, store, cid, down) == []     # 1 of 2 missed
    assert peers.asked == []                           # nobody asked yet
    [change] = _round(checker, store, cid, down)
    assert change['state'] == 'DEAD'
    node = store.nodes.get(cid, 'n3')
    assert node['state'] == 'DEAD'
    assert node['state_reason'] == ('missed its last 2 samples; DN at '
                                    '10.0.0.1, 10.0.0.2')
    assert node['state_changed_at'] is not None
    assert sorted(peers.asked) == ['10.0.0.1', '10.0.0.2']
    # dead stays dead without asking again; answering again is UN
    assert _round(checker, store, cid, down) == []
    assert len(peers.asked) == 2
    [back] = _round(checker, store, cid, {'n1': True, 'n2': True,
                                          'n3': True})
    assert back == {'node_id': 'n3', 'state': 'UN',
                    'reason': 'answering again'}


def _silent_n3(conf, answers, state=None):
    """n3's state after three rounds in which it gives no sample and the
    peers' nodetool gives ``answers``; n3 starts in ``state``.
    """
    store = memstore.MemStore()
    cid = _cluster(store)
    if state is not None:
        store.nodes.upsert(cid, 'n3', state=state)
    peers = Peers(answers)
    checker = health.HealthChecker(conf, store, peers)
    for _ in range(3):
        _round(checker, store, cid, {'n1': True, 'n2': True, 'n3': False})
    return store.nodes.get(cid, 'n3')['state'], peers


def test_not_dead_while_a_peer_sees_it_up(conf):
    state, _ = _silent_n3(conf, {
        '10.0.0.1': RING_N3_DOWN,
        '10.0.0.2': dict(RING_N3_DOWN, **{'10.0.0.3': 'UN'})})
    assert state == 'UN'


def test_peer_that_cannot_answer_is_skipped(conf):
    store = memstore.MemStore()
    cid = _cluster(store, size=4)
    ring = dict(RING_N3_DOWN, **{'10.0.0.4': 'UN'})
    peers = Peers({'10.0.0.1': exception.NodetoolError(
        command='status', node='10.0.0.1', reason='refused'),
        '10.0.0.2': ring, '10.0.0.4': ring})
    checker = health.HealthChecker(conf, store, peers)
    for _ in range(2):
        _round(checker, store, cid, {'n1': True, 'n2': True, 'n3': False,
                                     'n4': True})
    assert store.nodes.get(cid, 'n3')['state'] == 'DEAD'
    assert 'DN at 10.0.0.2, 10.0.0.4' in store.nodes.get(
        cid, 'n3')['state_reason']


def test_one_confirmation_is_not_enough_when_two_are_wanted(conf):
    state, _ = _silent_n3(conf, {
        '10.0.0.1': RING_N3_DOWN,
        '10.0.0.2': exception.NodetoolError(command='status', node='x',
                                            reason='down')})
    assert state == 'UN'


def test_nodes_the_actuator_is_working_on_are_left_alone(conf):
    state, peers = _silent_n3(conf, {'10.0.0.1': RING_N3_DOWN,
                                     '10.0.0.2': RING_N3_DOWN},
                              state='LEAVING')
    assert state == 'LEAVING'
    assert peers.asked == []
