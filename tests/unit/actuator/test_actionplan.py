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
"""Plans of actions: what each kind adds, removes and cleans up."""
import pytest

from elastman.actuator import actionplan
from elastman.common import exception
from tests.unit import fakecompute
from tests.unit import memstore


class Cloud(fakecompute.MemoryDriver):
    """A cloud that plans ask about (flavours, replace support) only."""

    def create(self, *args, **kwargs):
        raise AssertionError('planning creates no server')


def _store(nodes, policy=None):
    """Cluster c1 with ``nodes``: (node id, server id or None, marked)."""
    store = memstore.MemStore()
    store.clusters.rows['c1'] = {'id': 'c1', 'name': 'shop',
                                 'project_id': 'p', 'state': 'ACTIVE',
                                 'spec': {'flavor': 'small'},
                                 'policy': dict(policy or {})}
    for node_id, server_id, marked in nodes:
        details = {'cleanup_pending': {'since': 0.0}} if marked else {}
        store.nodes.upsert('c1', node_id, server_id=server_id, state='UN',
                           flavor='small', address='10.0.0.%s' % node_id[-1],
                           details=details)
    return store


def _plan(store, kind, **params):
    action = {'id': 'a1', 'cluster_id': 'c1', 'kind': kind, 'params': params}
    return actionplan.plan(store, Cloud, action)


def test_a_scale_out_marks_the_old_nodes_for_a_later_cleanup():
    store = _store([('n1', 's1', False), ('n2', 's2', False)])
    plan = _plan(store, 'scale_out', count=2, flavor='small')
    assert (plan['add'], plan['remove']) == (2, [])
    assert plan['defer_cleanup'] == ['n1', 'n2'] and plan['cleanup'] == []
    assert plan['cleanup_before'] == []
    store = _store([('n1', 's1', False)], policy={'cleanup': 'after_join'})
    plan = _plan(store, 'scale_out', count=1, flavor='small')
    assert plan['cleanup'] == ['n1'] and plan['defer_cleanup'] == []


def test_a_removal_first_cleans_up_the_marked_nodes_that_stay():
    store = _store([('n1', 's1', True), ('n2', 's2', True),
                    ('n3', 's3', False), ('n4', 's4', False)])
    plan = _plan(store, 'scale_in', nodes=['n2'])
    assert plan['remove'] == ['n2']
    assert plan['cleanup_before'] == ['n1']   # n2 leaves, n3/n4 unmarked


def test_a_smaller_scale_removes_only_nodes_elastman_manages():
    store = _store([('n1', 's1', False), ('n2', None, False),
                    ('n3', 's3', False), ('n4', 's4', False)])
    plan = _plan(store, 'scale', count=2)
    assert len(plan['remove']) == 2 and 'n2' not in plan['remove']
    with pytest.raises(exception.ElastmanException, match='have a server'):
        _plan(store, 'scale', count=0)
    with pytest.raises(exception.ElastmanException, match='no server'):
        _plan(store, 'scale_in', nodes=['n2'])


def test_a_dead_node_is_removed_first_when_the_driver_cannot_replace_it():
    store = _store([('n1', 's1', False), ('n2', 's2', False),
                    ('n3', 's3', False)])
    store.nodes.upsert('c1', 'n3', state='DEAD')
    plan = _plan(store, 'replace', node='n3')
    # the memory driver cannot boot a replacement: removenode, then +1
    assert plan['mode'] == 'removenode' and plan['removenode']
    assert (plan['add'], plan['flavor'], plan['dead']) == (1, 'small', ['n3'])
    assert 'cannot boot a replacement' in plan['why_removenode']
    assert store.nodes.get('c1', 'n3')['state'] == 'REPLACING'
