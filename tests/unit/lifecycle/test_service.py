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
"""The lifecycle service on an in-memory store: what create, register,
scale and delete write, and what they refuse.
"""
import uuid

import pytest

from elastman.common import trusts
from elastman.lifecycle import service as lifecycle
from tests.unit import memstore

SPEC = {'cql_port': 9042, 'jmx_port': 7199, 'flavor': 'small',
        'image': 'img', 'size': 3}


@pytest.fixture
def store():
    return memstore.MemStore()


@pytest.fixture
def told():
    return []


@pytest.fixture
def service(conf, store, told):
    return lifecycle.ClusterService(
        conf, store, notify=lambda row, action: told.append(
            (row['id'], action['kind'])))


def _kinds(store, cluster_id):
    return [(a['kind'], a['state'], a['params']['count'])
            for a in sorted(store.actions.rows.values(),
                            key=lambda a: a['created_at'])
            if a['cluster_id'] == cluster_id]


def test_create_writes_the_row_and_journals_then_notifies(service, store,
                                                          told):
    given = uuid.uuid4()
    row, action = service.create('p1', 'orders', SPEC, {'min_size': 1},
                                 requested_by='alice', cluster_id=given)
    assert row['id'] == given and row['state'] == 'CREATING'
    assert row['spec']['mode'] == 'managed' and row['policy'] == {
        'min_size': 1}
    assert _kinds(store, given) == [('create', 'PENDING', 3)]
    assert action['params'] == {'count': 3, 'flavor': 'small',
                                'requested_by': 'alice'}
    assert told == [(given, 'create')]


def test_register_records_the_seeds_as_nodes(service, store, told):
    row, _action = service.register(
        'p1', 'ring', {'cql_port': 9042, 'jmx_port': 7299, 'flavor': None},
        {}, [('10.0.0.1', 9042), ('10.0.0.2', 9043)], requested_by='bob')
    assert row['state'] == 'ACTIVE' and row['spec']['mode'] == 'registered'
    assert row['spec']['seeds'] == ['10.0.0.1:9042', '10.0.0.2:9043']
    nodes = {n['node_id']: n for n in store.nodes.list(row['id'])}
    assert sorted(nodes) == ['10.0.0.1', '10.0.0.2']
    assert (nodes['10.0.0.2']['cql_port'], nodes['10.0.0.2']['jmx_port'],
            nodes['10.0.0.2']['state'], nodes['10.0.0.2']['seed']) == (
        9043, 7299, 'UNKNOWN', True)
    assert _kinds(store, row['id']) == [('register', 'PENDING', 2)]
    assert told == [(row['id'], 'register')]


def test_a_notify_that_fails_leaves_the_action_pending(conf, store):
    def broken(row, action):
        raise RuntimeError('no broker')

    service = lifecycle.ClusterService(conf, store, notify=broken)
    row, action = service.create('p1', 'c', SPEC, {}, requested_by=None)
    assert store.actions.get(row['id'], action['id'])['state'] == 'PENDING'


def test_scale_checks_state_and_bounds(service, store):
    row, _ = service.create('p1', 'c', SPEC, {'min_size': 2, 'max_size': 4},
                            requested_by=None)
    with pytest.raises(lifecycle.Conflict, match='is CREATING'):
        service.scale(row, 3, None, requested_by=None)
    row = store.clusters.update(row['id'], state='ACTIVE')
    with pytest.raises(lifecycle.OutOfBounds, match=r'outside .*\[2, 4\]'):
        service.scale(row, 5, None, requested_by=None)
    action = service.scale(row, 4, 'big', requested_by='alice')
    assert (action['kind'], action['params']['flavor']) == ('scale', 'big')
    assert _kinds(store, row['id'])[-1] == ('scale', 'PENDING', 4)


def test_delete_of_a_cluster_with_servers_is_one_action(service, store):
    row, create = service.create('p1', 'c', SPEC, {}, requested_by=None)
    store.actions.advance(row['id'], create['id'], 'done',
                          state='SUCCEEDED')
    store.nodes.upsert(row['id'], 's1', server_id='s1', state='UN')
    action = service.delete(row, requested_by='alice')
    assert action['kind'] == 'delete'
    assert store.clusters.get(row['id'])['state'] == 'DELETING'
    # asked again: the journalled delete, not a second one
    again = service.delete(store.clusters.get(row['id']),
                           requested_by='alice')
    assert again['id'] == action['id']
    assert [k for k, _s, _c in _kinds(store, row['id'])] == ['create',
                                                             'delete']


def test_delete_while_the_create_is_under_way_waits_for_it(service, store):
    row, _create = service.create('p1', 'c', SPEC, {}, requested_by=None)
    # no server yet, but the create may be booting one right now
    action = service.delete(row, requested_by=None)
    assert action['kind'] == 'delete'
    assert store.clusters.get(row['id'])['state'] == 'DELETING'


def test_delete_of_a_registered_cluster_is_immediate(service, store, told,
                                                     monkeypatch):
    dropped = []
    monkeypatch.setattr(trusts, 'delete_trust',
                        lambda conf, trust_id: dropped.append(trust_id))
    row, _ = service.register(
        'p1', 'ring', {'cql_port': 9042, 'jmx_port': 7199,
                       'trust_id': 't-1'}, {}, [('10.0.0.1', 9042)],
        requested_by=None)
    assert service.delete(row, requested_by=None) is None
    assert row['id'] not in store.clusters.rows
    assert store.nodes.list(row['id']) == []
    assert dropped == ['t-1']


def test_a_trust_keystone_refuses_to_delete_is_only_logged(service, store,
                                                           monkeypatch,
                                                           caplog):
    def refuse(conf, trust_id):
        raise trusts.TrustError(reason='Keystone refuses it')

    monkeypatch.setattr(trusts, 'delete_trust', refuse)
    service.drop_trust('c1', 't-2')
    assert 't-2 not deleted' in caplog.text
