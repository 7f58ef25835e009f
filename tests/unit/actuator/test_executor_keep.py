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
"""A scale-in that the guard trims while it runs: the executor removes its
nodes one at a time and keeps those the journal no longer lists (in-memory
store, driver and nodetool).
"""
import pytest

from elastman.common import exception
from tests.unit.actuator.test_executor_cloud import Cloud
from tests.unit.actuator.test_executor_cloud import make_world
from tests.unit.actuator.test_executor_cloud import Ring

KEEP = {'count': 2, 'decided_at': 0.0, 'trigger': 'guard'}


class HookedRing(Ring):
    """Calls ``on_decommission`` with the host before each decommission."""

    on_decommission = None

    def decommission(self, progress=None, timeout=None):
        if self.on_decommission is not None:
            self.on_decommission(self.host)
        super().decommission(progress, timeout)


@pytest.fixture
def world(conf):
    store, cloud, ring, executor = make_world(conf, Cloud(project='proj-a'),
                                              HookedRing)
    done = executor.run(store.actions.create('c1', 'create', {'count': 5}))
    assert done['state'] == 'SUCCEEDED', done['reason']
    return store, cloud, ring, executor


def _removable(store, count):
    """The ``count`` newest nodes (the first ones are the seeds)."""
    return sorted(n['node_id'] for n in store.nodes.list('c1'))[-count:]


def _scale_in(store, nodes):
    return store.actions.create('c1', 'scale_in', {'nodes': list(nodes)},
                                step='requested')


def test_kept_nodes_stay_and_the_node_leaving_finishes(world):
    store, cloud, ring, executor = world
    nodes = _removable(store, 3)
    action = _scale_in(store, nodes)
    kept = []

    def keep(host):
        if not kept:   # during the first decommission: keep all three
            kept.append(store.actions.keep('c1', action['id'], nodes, KEEP))

    ring.on_decommission = keep
    done = executor.run(action)
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert [op for op, _ in ring.log].count('decommission') == 1
    # the first node had begun to leave: only the two after it are kept
    assert kept[0]['params']['nodes'] == nodes[:1]
    assert kept[0]['params']['keeps'] == [dict(KEEP, nodes=nodes[1:])]
    assert done['result']['kept'] == nodes[1:]
    assert done['result']['plan']['remove'] == nodes[:1]
    states = {n['node_id']: n['state'] for n in store.nodes.list('c1')}
    assert nodes[0] not in states
    assert all(states[n] == 'UN' for n in nodes[1:])
    assert len(cloud.servers) == 4


def test_a_keep_between_reading_the_nodes_and_claiming_one_wins(world, monkeypatch):
    store, cloud, ring, executor = world
    nodes = _removable(store, 2)
    action = _scale_in(store, nodes)
    advance = store.actions.advance
    raced = []

    def racing_advance(cluster_id, action_id, step, **kwargs):
        # the guard keeps both nodes right after the executor read them
        if kwargs.get('expected_params') is not None and not raced:
            raced.append(store.actions.keep('c1', action_id, nodes, KEEP))
        return advance(cluster_id, action_id, step, **kwargs)

    monkeypatch.setattr(store.actions, 'advance', racing_advance)
    done = executor.run(action)
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert raced[0] is not None
    assert 'decommission' not in [op for op, _ in ring.log]
    assert done['result']['kept'] == nodes
    assert len(cloud.servers) == 5


def test_a_node_claimed_cannot_be_kept(world):
    store, _cloud, _ring, _executor = world
    nodes = _removable(store, 2)
    action = _scale_in(store, nodes)
    store.actions.advance('c1', action['id'], 'decommissioning',
                          result={'plan': {'remove': nodes}, 'leaving': nodes[0],
                                  'decommissioned': []})
    kept = store.actions.keep('c1', action['id'], nodes, KEEP)
    assert kept['params']['nodes'] == nodes[:1]
    assert store.actions.keep('c1', action['id'], nodes, KEEP) is None
    # a scale-out has no nodes to keep
    out = store.actions.create('c1', 'scale_out', {'count': 1, 'flavor': 'small'})
    assert store.actions.keep('c1', out['id'], nodes, KEEP) is None


def test_an_executor_that_cannot_claim_a_node_fails_the_action_consistently(
        world, monkeypatch):
    store, cloud, ring, executor = world
    nodes = _removable(store, 1)
    action = _scale_in(store, nodes)
    advance = store.actions.advance

    def conflicting(cluster_id, action_id, step, **kwargs):
        if kwargs.get('expected_params') is not None:
            raise exception.Conflict(reason='moved on')
        return advance(cluster_id, action_id, step, **kwargs)

    monkeypatch.setattr(store.actions, 'advance', conflicting)
    done = executor.run(action)
    assert done['state'] == 'FAILED'
    assert 'decommission' not in [op for op, _ in ring.log]
    assert len(cloud.servers) == 5
