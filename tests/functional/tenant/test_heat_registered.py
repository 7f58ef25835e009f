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
"""A real heat-engine (and heat-api) runs stacks with OS::Elastman::Cluster
against the running elastman API. One registers an existing Cassandra
cluster, which elastman discovers and maps to the tenant's servers; a stack
update changes the policy and the size; the stack delete unregisters it.
Another creates a cluster through Nova; its stack delete removes the cluster,
its servers and its server group.

The existing cluster: two servers alice booted herself in tenant-a (the same
user data template elastman uses) and one of bob's in tenant-b that joined
the same ring. elastman manages alice's two; bob's node is counted but never
removed, whatever the size asks.
"""
from __future__ import annotations

import os
import pathlib
import signal
import string
import subprocess
import sys
import textwrap
import time

from cassandra.cluster import Cluster
import openstack
import pytest
import yaml

from elastman.cassandra import nodetool
from tests.functional import keystone as ks
from tests.functional import services
from tests.functional.tenant.conftest import ENABLED
from tests.functional.tenant.conftest import FLAVOR
from tests.functional.tenant.conftest import USER_DATA

pytestmark = ENABLED

HEAT_PASSWORD = 'heat-secret'
DOMAIN_ADMIN_PASSWORD = 'heat-domain-secret'
RING_NAME = 'Shop Ring'

TEMPLATE = {
    'heat_template_version': '2021-04-16',
    'parameters': {'seed': {'type': 'string'},
                   'size': {'type': 'number', 'default': 3},
                   'max_size': {'type': 'number', 'default': 5}},
    'resources': {'shop': {
        'type': 'OS::Elastman::Cluster',
        'properties': {
            'name': 'shop', 'seeds': [{'get_param': 'seed'}],
            'flavor': FLAVOR, 'size': {'get_param': 'size'},
            'policy': {'dry_run': True, 'min_size': 1,
                       'max_size': {'get_param': 'max_size'}}}}},
    'outputs': {'cluster_id': {'value': {'get_resource': 'shop'}},
                'size': {'value': {'get_attr': ['shop', 'size']}}},
}

CREATE_TEMPLATE = {
    'heat_template_version': '2021-04-16',
    'parameters': {'image': {'type': 'string'},
                   'network': {'type': 'string'}},
    'resources': {'ledger': {
        'type': 'OS::Elastman::Cluster',
        'properties': {
            'name': 'ledger', 'flavor': FLAVOR, 'size': 1,
            'image': {'get_param': 'image'},
            'networks': [{'get_param': 'network'}],
            'security_groups': ['cassandra'],
            'server_group_policy': 'soft-anti-affinity',
            'policy': {'dry_run': True, 'min_size': 1, 'max_size': 3}}}},
    'outputs': {'cluster_id': {'value': {'get_resource': 'ledger'}}},
}


class Heat:
    """heat-api and heat-engine of the elastman virtualenv, on sqlite."""

    def __init__(self, base: pathlib.Path, keystone, transport_url: str):
        self.base = base
        self.port = services.free_port()
        self.url = 'http://127.0.0.1:%d/v1/%%(tenant_id)s' % self.port
        self.conf = base / 'heat.conf'
        self.procs: list[subprocess.Popen] = []
        plugin_dir = pathlib.Path(__file__).resolve().parents[3] / \
            'elastman' / 'heat'
        venv_etc = pathlib.Path(sys.prefix) / 'etc' / 'heat'
        auth = textwrap.dedent('''\
            auth_type = password
            auth_url = %(url)s
            username = heat
            password = %(password)s
            user_domain_id = default
            ''') % {'url': keystone.url, 'password': HEAT_PASSWORD}
        self.conf.write_text(textwrap.dedent('''\
            [DEFAULT]
            debug = true
            log_dir = %(base)s
            transport_url = %(transport)s
            plugin_dirs = %(plugins)s
            num_engine_workers = 1
            # the convergence engine left an update hanging on sqlite
            convergence_engine = false
            host = heat-test
            stack_user_domain_name = heat
            stack_domain_admin = heat_domain_admin
            stack_domain_admin_password = %(domain_password)s
            region_name_for_services = RegionOne
            [database]
            connection = sqlite:///%(base)s/heat.sqlite
            [paste_deploy]
            api_paste_config = %(etc)s/api-paste.ini
            [clients_keystone]
            auth_uri = %(keystone)s
            [ec2authtoken]
            auth_uri = %(keystone)s
            [keystone_authtoken]
            www_authenticate_uri = %(keystone)s
            project_name = service
            project_domain_id = default
            %(auth)s
            [trustee]
            %(auth)s
            ''') % {'base': base, 'transport': transport_url,
                    'plugins': plugin_dir, 'etc': venv_etc,
                    'domain_password': DOMAIN_ADMIN_PASSWORD,
                    'keystone': keystone.url, 'auth': auth})

    def _bin(self, name: str) -> str:
        return str(pathlib.Path(sys.executable).parent / name)

    def start(self) -> None:
        subprocess.run([self._bin('heat-manage'), '--config-file',
                        str(self.conf), 'db_sync'], check=True,
                       capture_output=True, timeout=300)
        for argv, log in (
                ([self._bin('heat-engine'), '--config-file', str(self.conf)],
                 'engine.out'),
                ([self._bin('heat-wsgi-api'), '--host', '127.0.0.1',
                  '--port', str(self.port), '--', '--config-file',
                  str(self.conf)], 'api.out')):
            self.procs.append(subprocess.Popen(
                argv, stdout=open(self.base / log, 'wb'),
                stderr=subprocess.STDOUT, start_new_session=True))
        services.wait_for(lambda: services.port_open('127.0.0.1', self.port),
                          timeout=180, interval=0.5)
        services.wait_for(self._engine_up, timeout=180, interval=1)

    def _engine_up(self) -> bool:
        log = self.base / 'heat-engine.log'
        return log.exists() and 'Starting engine' in log.read_text(
            errors='replace') or any(p.poll() is not None for p in
                                     self.procs)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)

    def logs(self) -> str:
        out = []
        for name in ('heat-engine.log', 'engine.out', 'api.out'):
            path = self.base / name
            if path.exists():
                out.append('---- %s\n%s' % (name, path.read_text(
                    errors='replace')[-4000:]))
        return '\n'.join(out)


def _keystone_for_heat(keystone, heat_url: str) -> None:
    admin = keystone.admin
    if keystone.service_user('heat', HEAT_PASSWORD):
        for role in ('heat_stack_owner', 'heat_stack_user'):
            if not admin.roles.list(name=role):
                admin.roles.create(role)
        domain = admin.domains.create('heat', description='Heat stacks')
        domain_admin = admin.users.create('heat_domain_admin', domain=domain,
                                          password=DOMAIN_ADMIN_PASSWORD)
        admin.roles.grant(admin.roles.list(name='admin')[0],
                          user=domain_admin, domain=domain)
    keystone.register_endpoint(heat_url, 'orchestration', 'heat')


@pytest.fixture(scope='module')
def heat(cloud, rabbit, tmp_path_factory):
    base = tmp_path_factory.mktemp('heat')
    engine = Heat(base, cloud.keystone, rabbit.url)
    _keystone_for_heat(cloud.keystone, engine.url)
    started = time.monotonic()
    try:
        engine.start()
        print('heat-api and heat-engine up in %.1fs'
              % (time.monotonic() - started))
        yield engine
    finally:
        engine.stop()
        print(engine.logs())


def _boot(tenant, name: str, seeds: str):
    """A server of ``tenant`` whose guest runs a Cassandra node of the ring."""
    user_data = string.Template(USER_DATA.read_text()).safe_substitute(
        name=name, flavor=FLAVOR, cluster='', cluster_name=RING_NAME,
        seeds=seeds, replace_address='')
    conn = tenant.cloud()
    server = conn.compute.create_server(
        name=name, flavorRef=FLAVOR, imageRef=tenant.image_id,
        networks=[{'uuid': tenant.network_id}],
        security_groups=[{'name': 'cassandra'}],
        user_data=__import__('base64').b64encode(user_data.encode()).decode())
    server = conn.compute.wait_for_server(server, wait=180)
    [address] = [a['addr'] for addrs in server.addresses.values()
                 for a in addrs]
    return server, address


def _wait_ring(conf, jmx_host: str, size: int, timeout: float = 900):
    tool = nodetool.Nodetool(conf, jmx_host, 7199)

    def ring():
        try:
            members = tool.status()
        except Exception:
            return None
        return members if (len(members) == size
                           and all(m.up_normal for m in members)) else None
    return services.wait_for(ring, timeout=timeout, interval=5)


def _stacks(cloud, tenant) -> openstack.connection.Connection:
    """Heat as ``tenant``'s user sees it (a new token: its catalog has the
    orchestration endpoint).
    """
    return openstack.connection.Connection(session=cloud.keystone.session(
        tenant.user, ks.PASSWORD, tenant.name))


def _stack_cluster(api, heat, stack, leftovers) -> tuple[str, dict]:
    """The cluster of a stack that completed (removed at the end of the
    test whatever happens), once the API shows it settled.
    """
    assert stack.status == 'CREATE_COMPLETE', (stack.status_reason,
                                               heat.logs())
    cluster_id = {o['output_key']: o['output_value']
                  for o in stack.outputs}['cluster_id']
    leftovers.cluster(api, cluster_id)
    return cluster_id, api.wait_cluster(cluster_id, timeout=300)


def test_heat_stack_registers_updates_and_unregisters(cloud, heat, alice,
                                                      bob, conf, leftovers):
    trusts_before = {t.id for t in cloud.trusts()}
    stacks = _stacks(cloud, alice)
    leftovers.later(lambda: stacks.delete_stack('shop', wait=True))
    # the tenant's existing cluster: alice's two servers, bob's one
    a1, a1_address = _boot(alice, 'shop-1', '')
    _wait_ring(conf, a1_address, 1)
    a2, a2_address = _boot(alice, 'shop-2', a1_address)
    _wait_ring(conf, a1_address, 2)
    b1, b1_address = _boot(bob, 'shop-b', a1_address)
    _wait_ring(conf, a1_address, 3)
    with Cluster([a1_address], connect_timeout=20) as cql:
        # three nodes may become two
        cql.connect().execute(
            "ALTER KEYSPACE system_distributed WITH replication = "
            "{'class': 'SimpleStrategy', 'replication_factor': 2}")

    template = pathlib.Path(heat.base) / 'shop.yaml'
    template.write_text(yaml.safe_dump(TEMPLATE))
    api = alice.api(cloud.api_url)
    stack = stacks.create_stack('shop', template_file=str(template),
                                wait=True, timeout=600, seed=a1_address)
    cluster_id, doc = _stack_cluster(api, heat, stack, leftovers)
    [register] = api.actions(cluster_id)
    assert register['kind'] == 'register'
    assert register['state'] == 'SUCCEEDED', register
    nodes = {n['address']: n for n in doc['nodes']}
    assert set(nodes) == {a1_address, a2_address, b1_address}
    assert nodes[a1_address]['server_id'] == a1.id
    assert nodes[a2_address]['server_id'] == a2.id
    assert nodes[b1_address]['server_id'] is None   # not alice's
    assert doc['spec']['cluster_name'] == RING_NAME
    assert doc['spec']['image'] == alice.image_id
    assert doc['policy']['max_size'] == 5

    # the update: policy and size; only a node elastman manages goes
    stack = stacks.update_stack('shop', template_file=str(template),
                                wait=True, timeout=900, seed=a1_address,
                                size=2, max_size=4)
    assert stack.status == 'UPDATE_COMPLETE', (stack.status_reason,
                                               heat.logs())
    doc = api.wait_cluster(cluster_id, timeout=300)
    assert doc['policy']['max_size'] == 4
    assert sorted(n['address'] for n in doc['nodes']) == sorted(
        [a1_address, b1_address])
    assert [s.id for s in cloud.servers(alice.project_id)] == [a1.id]
    assert bob.cloud().compute.get_server(b1.id).status == 'ACTIVE'
    ring = _wait_ring(conf, a1_address, 2)
    assert sorted(m.address for m in ring) == sorted([a1_address,
                                                      b1_address])

    # the delete unregisters: the cluster goes, the servers stay
    assert stacks.delete_stack('shop', wait=True)
    api.wait_gone(cluster_id)
    assert [s.id for s in cloud.servers(alice.project_id)] == [a1.id]
    # the servers are the tenant's own: it deletes them
    for tenant, server in ((alice, a1), (bob, b1)):
        tenant.cloud().compute.delete_server(server)
    for tenant, server in ((alice, a1), (bob, b1)):
        tenant.cloud().compute.wait_for_delete(server, wait=180)
    assert cloud.servers() == []
    assert {t.id for t in cloud.trusts()} == trusts_before


def test_heat_stack_creates_and_deletes_a_cluster(cloud, heat, alice,
                                                  leftovers):
    """A stack that creates a cluster through Nova; its delete removes the
    cluster, its servers, its server group and its trust.
    """
    trusts_before = {t.id for t in cloud.trusts()}
    stacks = _stacks(cloud, alice)
    leftovers.later(lambda: stacks.delete_stack('ledger', wait=True))
    template = pathlib.Path(heat.base) / 'ledger.yaml'
    template.write_text(yaml.safe_dump(CREATE_TEMPLATE))
    api = alice.api(cloud.api_url)
    stack = stacks.create_stack('ledger', template_file=str(template),
                                wait=True, timeout=600,
                                image=alice.image_id,
                                network='net-%s' % alice.name)
    cluster_id, doc = _stack_cluster(api, heat, stack, leftovers)
    [node] = doc['nodes']
    assert node['state'] == 'UN', doc
    [server] = cloud.servers(alice.project_id)
    assert server.id == node['server_id']
    assert server.image['id'] == alice.image_id
    assert list(server.addresses) == ['net-%s' % alice.name]
    [group] = cloud.server_groups()
    assert group.name == 'elastman-%s' % cluster_id
    assert group.member_ids == [server.id]
    assert len(cloud.trusts()) == len(trusts_before) + 1

    # the stack delete deletes the cluster: its server, group and trust go
    assert stacks.delete_stack('ledger', wait=True)
    assert stacks.get_stack('ledger') is None
    assert api('GET', '/v1/clusters/%s' % cluster_id).status_code == 404
    assert cloud.servers() == []
    assert cloud.server_groups() == []
    assert {t.id for t in cloud.trusts()} == trusts_before
