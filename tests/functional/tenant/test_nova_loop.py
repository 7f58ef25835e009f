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
"""The production path through a real Nova, as a tenant sees it.

A tenant (project tenant-a, user alice, role member) creates a 3-node
cluster through elastman's API with an image and a network of its own. The
actuator, acting in tenant-a through the trust the API made, boots the
servers through Nova's API, scheduler, placement and conductor; each guest
is a Cassandra node configured from the server's user data (cluster name,
seeds) and its flavour (CPU quota). The cluster scales out by one and back
in; a node whose server is powered off is replaced in place (a new server
boots with replace_address_first_boot, the dead one is deleted); the rows
written before are read back at ALL after the scale-out, the scale-in and
the replacement, and deleting the cluster leaves no server,
port, server group or trust. A server of tenant-b that carries
the cluster's tag is never touched. Bad input fails the action and the
cluster with a clear reason and creates nothing.
"""
import datetime
import time
import uuid

from cassandra.cluster import Cluster
from cassandra import ConsistencyLevel
from cassandra.query import SimpleStatement
from keystoneclient.v3 import client as ks_client
import pytest

from elastman.cassandra import nodetool as nodetool_mod
from elastman.compute import base as compute
from tests.functional.tenant.conftest import ENABLED
from tests.functional.tenant.conftest import FLAVOR
from tests.functional.tenant.conftest import HOSTS
from tests.functional.tenant.conftest import LAB_IMAGE

pytestmark = ENABLED

ROWS = 200
POLICY = {'dry_run': True, 'min_size': 1, 'max_size': 6}


def _create(api, tenant, name, size, **extra):
    body = {'name': name, 'flavor': FLAVOR, 'image': tenant.image_id,
            'size': size, 'networks': ['net-%s' % tenant.name],
            'policy': POLICY}
    body.update(extra)
    resp = api('POST', '/v1/clusters', json=body)
    assert resp.status_code == 201, resp.text
    return resp.json()['cluster']


def _scale(api, cluster_id, count):
    resp = api('POST', '/v1/clusters/%s/scale' % cluster_id,
               json={'count': count})
    assert resp.status_code == 202, resp.text
    return api.wait_action(cluster_id, resp.json()['action']['id'])


def _delete(cloud, api, cluster_id):
    resp = api('DELETE', '/v1/clusters/%s' % cluster_id)
    assert resp.status_code in (202, 204), resp.text
    api.wait_gone(cluster_id)


def _cluster_servers(cloud, cluster_id):
    return [s for s in cloud.servers()
            if (s.metadata or {}).get(compute.CLUSTER_TAG) == cluster_id]


def _cql(address):
    return Cluster([address], connect_timeout=20, control_connection_timeout=20)


def _read_back(address):
    with _cql(address) as cql:
        query = SimpleStatement('SELECT id, item FROM shop.orders',
                                consistency_level=ConsistencyLevel.ALL)
        rows = {r.id: r.item for r in cql.connect().execute(query)}
    assert rows == {i: 'item-%d' % i for i in range(ROWS)}


def _replace_dead_node(conf, cloud, api, alice, cluster_id):
    """Power a node's server off, mark the node DEAD as the monitor
    does once it misses its samples, and journal the replace action the
    healer would: the executor boots its replacement through Nova.
    """
    cid = uuid.UUID(cluster_id)
    nodes = sorted(cloud.store.nodes.list(cid), key=lambda n: n['address'])
    # the nodes a create boots are all seeds; the replacement joins through
    # the live ones
    dead = nodes[-1]
    live = next(n for n in nodes if n['node_id'] != dead['node_id'])
    alice.cloud().compute.stop_server(dead['server_id'])
    tool = nodetool_mod.Nodetool(conf, live['address'], live['jmx_port'])
    deadline = time.monotonic() + 180
    while not any(m.address == dead['address'] and m.code == 'DN'
                  for m in tool.status()):
        assert time.monotonic() < deadline, tool.status()
        time.sleep(3)
    assert cloud.store.nodes.change_state(cid, dead['node_id'], 'DEAD',
                                          'powered off', ('UN',))
    action = cloud.store.actions.create(
        cid, 'replace', {'node': dead['node_id'], 'decided_at': time.time()},
        step='requested', state='PENDING')
    action = api.wait_action(cluster_id, str(action['id']))
    assert action['state'] == 'SUCCEEDED', action
    plan = action['result']['plan']
    assert (plan['mode'], plan['replace_address']) == ('replace',
                                                       dead['address'])
    [new_id] = action['result']['servers']
    assert 'replace_address: "%s"' % dead['address'] in \
        cloud.guest(new_id)['user_data']
    doc = api.cluster(cluster_id)
    assert sorted(n['state'] for n in doc['nodes']) == ['UN'] * 3
    assert str(dead['node_id']) not in {str(n['id']) for n in doc['nodes']}
    servers = {s.id for s in cloud.servers(alice.project_id)
               if s.name.startswith('orders-')}
    assert dead['server_id'] not in servers and new_id in servers
    ring = {m.address: m.code for m in tool.status()}
    assert dead['address'] not in ring and set(ring.values()) == {'UN'}
    return doc


def test_tenant_cluster_through_nova(conf, cloud, alice, bob, leftovers):
    api = alice.api(cloud.api_url)
    trusts_before = {t.id for t in cloud.trusts()}
    doc = _create(api, alice, 'orders', 3,
                  security_groups=['cassandra'], availability_zone='nova',
                  server_group_policy='soft-anti-affinity')
    cluster_id = leftovers.cluster(api, doc['id'])
    assert doc['state'] == 'CREATING' and doc['image'] == alice.image_id
    assert 'trust_id' not in doc['spec']            # never shown

    # a server of another project that carries this cluster's tag
    bob_cloud = bob.cloud()
    decoy = bob_cloud.compute.create_server(
        name='decoy', flavorRef='m1.tiny', imageRef=LAB_IMAGE,
        networks=[{'uuid': bob.network_id}],
        metadata={compute.CLUSTER_TAG: cluster_id},
        tags=['elastman', 'elastman_cluster=%s' % cluster_id])
    bob_cloud.compute.wait_for_server(decoy, wait=120)

    doc = api.wait_cluster(cluster_id)
    nodes = doc['nodes']
    assert sorted(n['state'] for n in nodes) == ['UN'] * 3, doc
    servers = [s for s in _cluster_servers(cloud, cluster_id)
               if s.project_id == alice.project_id]
    assert sorted(s.id for s in servers) == sorted(n['server_id']
                                                   for n in nodes)
    group = [g for g in alice.cloud().compute.server_groups()
             if g.name == 'elastman-%s' % cluster_id]
    assert len(group) == 1 and group[0].policy == 'soft-anti-affinity'
    assert sorted(group[0].member_ids) == sorted(s.id for s in servers)
    seeds_seen = []
    for server in servers:
        # the request's image, network, security group and zone
        assert server.image['id'] == alice.image_id
        assert list(server.addresses) == ['net-tenant-a']
        assert server.security_groups == [{'name': 'cassandra'}]
        assert server.availability_zone == 'nova'
        assert server.compute_host in HOSTS
        # the guest was configured from the user data and the flavour
        guest = cloud.guest(server.id)
        assert guest['flavor']['extra_specs']['quota:cpu_quota'] == '100000'
        assert "cluster_name: \"elastman-%s\"" % cluster_id in \
            guest['user_data']
        seeds_seen.append(guest['user_data'].split('seeds: "')[1]
                          .split('"')[0])
    # the first node seeded itself; the others joined through it
    assert sorted(seeds_seen)[0] == ''
    assert all(seeds_seen[i] for i in range(3)
               if seeds_seen[i] != '') and seeds_seen.count('') == 1
    addresses = sorted(n['address'] for n in nodes)
    with _cql(addresses[0]) as cql:
        session = cql.connect()
        name = session.execute('SELECT cluster_name FROM system.local').one()
        assert name.cluster_name == 'elastman-%s' % cluster_id
        session.execute("CREATE KEYSPACE shop WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 3}")
        session.execute('CREATE TABLE shop.orders (id int PRIMARY KEY, '
                        'item text)')
        insert = session.prepare('INSERT INTO shop.orders (id, item) '
                                 'VALUES (?, ?)')
        insert.consistency_level = ConsistencyLevel.ALL
        for i in range(ROWS):
            session.execute(insert, (i, 'item-%d' % i))

    # out by one, back in by one, all through Nova in tenant-a
    action = _scale(api, cluster_id, 4)
    assert action['state'] == 'SUCCEEDED', action
    doc = api.cluster(cluster_id)
    assert len(doc['nodes']) == 4 and {n['state'] for n in doc['nodes']} \
        == {'UN'}
    assert len([s for s in cloud.servers(alice.project_id)
                if s.name.startswith('orders-')]) == 4
    _read_back(doc['nodes'][0]['address'])
    action = _scale(api, cluster_id, 3)
    assert action['state'] == 'SUCCEEDED', action
    doc = api.cluster(cluster_id)
    assert len(doc['nodes']) == 3
    servers = [s for s in cloud.servers(alice.project_id)
               if s.name.startswith('orders-')]
    assert sorted(s.id for s in servers) == sorted(
        n['server_id'] for n in doc['nodes'])
    _read_back(doc['nodes'][0]['address'])

    # a dead node replaced in place through Nova (self-healing's path)
    doc = _replace_dead_node(conf, cloud, api, alice, cluster_id)
    _read_back(doc['nodes'][0]['address'])

    # every server of the cluster is the tenant's; bob's decoy untouched
    for server in _cluster_servers(cloud, cluster_id):
        assert server.project_id in (alice.project_id, bob.project_id)
    assert bob_cloud.compute.get_server(decoy.id).status == 'ACTIVE'

    _delete(cloud, api, cluster_id)
    left = [s for s in cloud.servers(alice.project_id)]
    assert left == []
    assert [s.id for s in _cluster_servers(cloud, cluster_id)] == [decoy.id]
    assert cloud.server_groups() == []
    assert {t.id for t in cloud.trusts()} == trusts_before
    assert [p for p in alice.cloud().network.ports()] == []
    bob_cloud.compute.delete_server(decoy)
    bob_cloud.compute.wait_for_delete(decoy, wait=120)
    assert cloud.servers() == []


def _failed(api, cluster_id, expected):
    """The create failed with ``expected`` in its reason, on the action and
    on the cluster.
    """
    doc = api.wait_cluster(cluster_id, states=('ERROR',), timeout=300)
    [action] = api.actions(cluster_id)
    assert action['state'] == 'FAILED', action
    assert expected in action['reason'], action['reason']
    assert expected in doc['status_reason'], doc['status_reason']
    assert doc['nodes'] == []
    return action


@pytest.mark.parametrize('field,value,expected', [
    ('image', 'no-such-image', 'Image no-such-image not found'),
    ('networks', ['no-such-net'], 'Network no-such-net not found'),
])
def test_missing_image_or_network(cloud, alice, leftovers, field, value,
                                  expected):
    api = alice.api(cloud.api_url)
    trusts_before = {t.id for t in cloud.trusts()}
    cluster = _create(api, alice, 'bad-%s' % field, 2, **{field: value})
    leftovers.cluster(api, cluster['id'])
    _failed(api, cluster['id'], expected)
    assert cloud.servers(alice.project_id) == []
    _delete(cloud, api, cluster['id'])
    assert {t.id for t in cloud.trusts()} == trusts_before


def test_exceeded_quota(cloud, alice, leftovers):
    """Room for two more servers than the project has: three do not fit.
    The quota is set from the project's current usage, so the case holds
    whatever else the project runs.
    """
    api = alice.api(cloud.api_url)
    before = sorted(s.id for s in cloud.servers(alice.project_id))
    used = cloud.admin.compute.get_quota_set(
        alice.project_id, usage=True).usage['instances']
    cloud.admin.compute.update_quota_set(alice.project_id,
                                         instances=used + 2)
    try:
        cluster = _create(api, alice, 'too-big', 3)
        leftovers.cluster(api, cluster['id'])
        _failed(api, cluster['id'], 'Quota of project %s exceeded'
                % alice.project_id)
        reason = api.cluster(cluster['id'])['status_reason']
        assert ('instances: %d used of %d, 3 more needed'
                % (used, used + 2)) in reason, reason
        assert sorted(s.id for s in cloud.servers(alice.project_id)) \
            == before
        _delete(cloud, api, cluster['id'])
    finally:
        cloud.admin.compute.revert_quota_set(alice.project_id)


def test_expired_trust(cloud, alice, leftovers):
    """The actuator acts by itself (a journalled action, as a control
    period's decision is) with a trust that expired: the action and the
    cluster say so, and nothing is created. Deleting the cluster through the
    API gives it a new trust from the caller first, so the delete works.
    """
    api = alice.api(cloud.api_url)
    trusts_before = {t.id for t in cloud.trusts()}
    cluster = _create(api, alice, 'expired', 1, image='no-such-image')
    leftovers.cluster(api, cluster['id'])
    _failed(api, cluster['id'], 'not found')
    # alice's own trust to elastman, expiring in a few seconds
    keystone = ks_client.Client(session=alice.session)
    expires = (datetime.datetime.now(datetime.timezone.utc)
               + datetime.timedelta(seconds=15))
    trust = keystone.trusts.create(
        trustor_user=alice.session.get_user_id(),
        trustee_user=cloud.trustee_user_id, project=alice.project_id,
        role_names=['member'], impersonation=True,
        expires_at=expires.replace(tzinfo=None))
    cluster_id = uuid.UUID(cluster['id'])
    spec = cloud.store.clusters.get(cluster_id)['spec']
    cloud.keystone.admin.trusts.delete(spec['trust_id'])  # the API's
    spec.update(trust_id=trust.id, image=alice.image_id)
    cloud.store.clusters.update(cluster_id, spec=spec)
    while datetime.datetime.now(datetime.timezone.utc) < expires:
        time.sleep(1)
    time.sleep(1)
    action = cloud.store.actions.create(cluster_id, 'scale',
                                        {'count': 1, 'flavor': None},
                                        step='requested', state='PENDING')
    action = api.wait_action(cluster['id'], str(action['id']))
    assert action['state'] == 'FAILED'
    assert 'Keystone refuses trust %s' % trust.id in action['reason']
    doc = api.cluster(cluster['id'])
    assert doc['state'] == 'ERROR'
    assert 'Keystone refuses trust %s' % trust.id in doc['status_reason']
    assert cloud.servers(alice.project_id) == []
    _delete(cloud, api, cluster['id'])
    assert {t.id for t in cloud.trusts()} == trusts_before
