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
"""A tenant's cloud, started once for the package: the session's Keystone,
the Nova lab behind it (its guests are Cassandra nodes configured from their
user data), and elastman's API and actuator as processes of their own over
RabbitMQ, acting in each cluster's project through a Keystone trust.

Needs tools/install.sh --nova. Tenant networks are /26 subnets of
$ELASTMAN_TEST_NOVA_NETWORK (default 127.0.62.0/24). The package runs only
with ELASTMAN_TEST_TENANT=1: it boots nine Cassandra guests and a
heat-engine, too long for tools/test.sh's 45-minute budget on 2 cores.
"""
from __future__ import annotations

import dataclasses
import datetime
import ipaddress
import os
import pathlib
import signal
import subprocess
import sys
import time
import uuid

from keystoneauth1 import session as ks_session
import openstack
import pytest
import requests

from elastman import store as em_store
from elastman.store import connection
from tests.functional import keystone as ks
from tests.functional import novalab
from tests.functional import services

REPO = pathlib.Path(__file__).resolve().parents[3]
USER_DATA = REPO / 'etc' / 'elastman' / 'cassandra-user-data.yaml'
NETWORK = ipaddress.ip_network(os.environ.get('ELASTMAN_TEST_NOVA_NETWORK',
                                              '127.0.62.0/24'))
HOSTS = ('compute1', 'compute2')
#: the tests of this package (each module's pytestmark)
ENABLED = pytest.mark.skipif(
    os.environ.get('ELASTMAN_TEST_TENANT') != '1',
    reason='the tenant cloud runs with ELASTMAN_TEST_TENANT=1')
HOST_SIZE = '4:8192:40'
FLAVOR = 'c1.node'            # 1 vCPU, 768 MB (heap 384 MB), 1 CPU quota
LAB_IMAGE = '11111111-2222-3333-4444-555555555555'
NOVA_PASSWORD = 'nova-secret'
# beside another lab on the machine, the lab's ports can move
PORT_OFFSET = int(os.environ.get('ELASTMAN_TEST_NOVA_PORT_OFFSET', '0'))
MICROVERSION = '2.95'


class Process:
    """A child elastman process; its output goes to a file."""

    def __init__(self, name: str, log_dir: pathlib.Path, argv: list[str],
                 env: dict | None = None) -> None:
        self.name = name
        self.log = log_dir / ('%s.log' % name)
        self.popen = subprocess.Popen(
            argv, stdout=open(self.log, 'wb'), stderr=subprocess.STDOUT,
            start_new_session=True, env=env)

    def output(self) -> str:
        return self.log.read_text(errors='replace')

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(10)


@dataclasses.dataclass
class Tenant:
    """A project with a member user, its network and its own image."""

    name: str
    user: str
    project_id: str
    session: ks_session.Session
    cidr: str
    network_id: str = ''
    image_id: str = ''

    @property
    def token(self) -> str:
        return self.session.get_token()

    def cloud(self) -> openstack.connection.Connection:
        return openstack.connection.Connection(
            session=self.session, compute_api_version=MICROVERSION)

    def api(self, base: str):
        return ApiClient(base, self.session)


class ApiClient:
    """The elastman API as one user sees it."""

    def __init__(self, base: str, session: ks_session.Session) -> None:
        self.base = base.rstrip('/')
        self.session = session

    def __call__(self, method: str, path: str, **kwargs):
        headers = {'X-Auth-Token': self.session.get_token()}
        return requests.request(method, self.base + path, headers=headers,
                                timeout=60, **kwargs)

    def cluster(self, cluster_id: str) -> dict:
        resp = self('GET', '/v1/clusters/%s' % cluster_id)
        assert resp.status_code == 200, resp.text
        return resp.json()['cluster']

    def wait_cluster(self, cluster_id: str, states=('ACTIVE',),
                     timeout: float = 900) -> dict:
        """Wait until no action is unfinished and the cluster is in one of
        ``states``; the last document either way.
        """
        deadline = time.monotonic() + timeout
        while True:
            doc = self.cluster(cluster_id)
            pending = [a for a in self.actions(cluster_id)
                       if a['state'] in ('PENDING', 'RUNNING')]
            if doc['state'] in states and not pending:
                return doc
            assert time.monotonic() < deadline, (doc, pending)
            time.sleep(3)

    def actions(self, cluster_id: str) -> list[dict]:
        resp = self('GET', '/v1/clusters/%s/actions' % cluster_id)
        assert resp.status_code == 200, resp.text
        return resp.json()['actions']

    def wait_action(self, cluster_id: str, action_id: str,
                    timeout: float = 900) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            resp = self('GET', '/v1/clusters/%s/actions/%s'
                        % (cluster_id, action_id))
            assert resp.status_code == 200, resp.text
            action = resp.json()['action']
            if action['state'] in ('SUCCEEDED', 'FAILED', 'ROLLED_BACK'):
                return action
            assert time.monotonic() < deadline, action
            time.sleep(3)

    def wait_gone(self, cluster_id: str, timeout: float = 600) -> None:
        deadline = time.monotonic() + timeout
        while self('GET', '/v1/clusters/%s' % cluster_id).status_code != 404:
            assert time.monotonic() < deadline, self.cluster(cluster_id)
            time.sleep(2)


@dataclasses.dataclass
class Cloud:
    keystone: ks.Keystone
    api_url: str
    lab_dir: pathlib.Path
    admin: openstack.connection.Connection
    tenants: dict[str, Tenant]
    store: em_store.Store
    processes: dict[str, Process]
    conf_file: str
    trustee_user_id: str

    def servers(self, project_id: str | None = None) -> list:
        """Every server of the lab (of one project), as the admin sees it."""
        found = list(self.admin.compute.servers(details=True,
                                                all_projects=True))
        return [s for s in found
                if project_id is None or s.project_id == project_id]

    def guest(self, server_id: str) -> dict:
        import json
        path = self.lab_dir / 'guests' / server_id / 'guest.json'
        return json.loads(path.read_text())

    def server_groups(self) -> list:
        """Every server group of the lab, as the admin sees it."""
        return list(self.admin.compute.server_groups(all_projects=True))

    def trusts(self) -> list:
        """The trusts to elastman's trustee that can still be used."""
        now = datetime.datetime.now(datetime.timezone.utc).strftime(
            '%Y-%m-%dT%H:%M:%S')
        return [t for t in self.keystone.admin.trusts.list()
                if t.trustee_user_id == self.trustee_user_id
                and (t.expires_at is None or t.expires_at > now)]


class Leftovers:
    """What one test made in the tenant cloud, removed after it whatever
    its outcome: its clusters through the API (their servers, server group
    and trust with them), then, through Nova's admin, every server and
    server group still in the tenants' projects. What it had to remove is
    printed and kept in ``swept``: a passing test leaves nothing for it.
    """

    def __init__(self, cloud: Cloud) -> None:
        self.cloud = cloud
        self.clusters: list[tuple[ApiClient, str]] = []
        self.callbacks: list = []
        self.swept: list[str] = []

    def later(self, callback) -> None:
        """Call ``callback`` first when cleaning (e.g. a stack's delete)."""
        self.callbacks.append(callback)

    def cluster(self, api: ApiClient, cluster_id: str) -> str:
        self.clusters.append((api, cluster_id))
        return cluster_id

    def clean(self) -> None:
        for callback in self.callbacks:
            try:
                callback()
            except Exception as exc:
                print('cleaning up: %s' % exc)
        for api, cluster_id in self.clusters:
            try:
                if api('GET', '/v1/clusters/%s' % cluster_id).status_code \
                        == 404:
                    continue
                self.swept.append('cluster %s' % cluster_id)
                api('DELETE', '/v1/clusters/%s' % cluster_id)
                api.wait_gone(cluster_id, timeout=300)
            except Exception as exc:   # Nova's admin removes the rest
                print('cluster %s not deleted: %s' % (cluster_id, exc))
        projects = {t.project_id for t in self.cloud.tenants.values()}
        admin = self.cloud.admin.compute
        servers = [s for s in self.cloud.servers()
                   if s.project_id in projects]
        for server in servers:
            self.swept.append('server %s (%s)' % (server.name, server.id))
            admin.delete_server(server.id, ignore_missing=True)
        for server in servers:
            try:
                admin.wait_for_delete(server, wait=180)
            except Exception as exc:
                print('server %s not deleted: %s' % (server.id, exc))
        for group in self.cloud.server_groups():
            if group.project_id in projects:
                self.swept.append('server group %s' % group.name)
                admin.delete_server_group(group.id, ignore_missing=True)
        if self.swept:
            print('removed after the test: %s' % ', '.join(self.swept))


def _user_session(keystone, user: str, project: str) -> ks_session.Session:
    return keystone.session(user, ks.PASSWORD, project)


def _setup_keystone(keystone, lab_urls: dict[str, str]) -> None:
    keystone.service_user('nova', NOVA_PASSWORD)
    for service_type, url in lab_urls.items():
        keystone.register_endpoint(url, service_type, service_type)


def _make_tenant(keystone, conn_admin, name: str, user: str,
                 cidr: str) -> Tenant:
    if not keystone.admin.users.list(name=user):
        keystone.project_user(name, user, 'member')
    project_id = keystone.admin.projects.list(name=name)[0].id
    tenant = Tenant(name, user, project_id,
                    _user_session(keystone, user, name), cidr)
    cloud = tenant.cloud()
    net = cloud.network.create_network(name='net-%s' % name)
    cloud.network.create_subnet(network_id=net.id, cidr=cidr, ip_version=4,
                                name='subnet-%s' % name)
    cloud.network.create_security_group(name='cassandra')
    tenant.network_id = net.id
    image = cloud.image.create_image(
        name='cassandra-5.0-%s' % name, disk_format='raw',
        container_format='bare', visibility='private', data=b'\0' * 1024)
    tenant.image_id = image.id
    return tenant


@pytest.fixture(scope='package')
def cloud(keystone, store_node, rabbit, conf, tmp_path_factory):
    """Keystone + Nova lab + elastman API and actuator, for the package."""
    novalab.require_installed()
    base = tmp_path_factory.mktemp('tenant-cloud')
    lab_dir = base / 'nova-lab'
    lab_rabbit = services.Rabbit()
    lab_rabbit.start()
    lab_urls = {'compute': 'http://127.0.0.1:%d/v2.1' % (8774 + PORT_OFFSET),
                'image': 'http://127.0.0.1:%d' % (9292 + PORT_OFFSET),
                'network': 'http://127.0.0.1:%d' % (9696 + PORT_OFFSET)}
    _setup_keystone(keystone, lab_urls)
    lab = novalab.Lab(
        lab_dir, lab_rabbit.url, HOSTS, HOST_SIZE,
        NOVA_LAB_PORT_OFFSET=str(PORT_OFFSET),
        NOVA_LAB_GUEST_PYTHON=sys.executable,
        NOVA_LAB_KEYSTONE_URL=keystone.url, NOVA_LAB_KEYSTONE_USER='nova',
        NOVA_LAB_KEYSTONE_PASSWORD=NOVA_PASSWORD,
        NOVA_LAB_KEYSTONE_PROJECT='service')
    keyspace = 'tenant_%s' % uuid.uuid4().hex[:10]
    processes: dict[str, Process] = {}
    opened = None
    made = None
    started = time.monotonic()
    try:
        lab.start(timeout=900)
        print('keystone + nova lab ready in %.1fs'
              % (time.monotonic() - started))

        admin = openstack.connection.Connection(
            session=keystone.session('admin', ks.ADMIN_PASSWORD, 'admin'),
            compute_api_version=MICROVERSION)
        tenants = {}
        subnets = NETWORK.subnets(new_prefix=26)
        for name, user in (('tenant-a', 'alice'), ('tenant-b', 'bob')):
            tenants[name] = _make_tenant(keystone, admin, name, user,
                                         str(next(subnets)))

        # elastman: the store, its configuration, the API and the actuator
        store_conf = {'contact_points': store_node.spec.address,
                      'port': store_node.spec.cql_port,
                      'keyspace': keyspace}
        api_port = services.free_port()
        api_url = 'http://127.0.0.1:%d' % api_port
        elastman_auth = {'auth_type': 'password', 'auth_url': keystone.url,
                         'username': 'elastman',
                         'password': ks.SERVICE_PASSWORD,
                         'user_domain_id': 'default'}
        conf_file = str(base / 'elastman.conf')
        services.write_config(
            conf_file,
            DEFAULT={'transport_url': rabbit.url,
                     'state_path': str(base / 'state'), 'host': 'tenant-test',
                     'debug': 'true'},
            store=store_conf,
            api={'bind_host': '127.0.0.1', 'bind_port': api_port,
                 'auth_strategy': 'keystone'},
            keystone_authtoken={
                'www_authenticate_uri': keystone.url,
                'auth_url': keystone.url, 'auth_type': 'password',
                'username': 'elastman', 'password': ks.SERVICE_PASSWORD,
                'project_name': 'service', 'user_domain_id': 'default',
                'project_domain_id': 'default', 'token_cache_time': 300},
            actuator={'compute_driver': 'nova', 'control_period': 30,
                      'join_timeout': 600, 'boot_timeout': 120,
                      'delete_timeout': 120},
            nova=dict(elastman_auth, project_name='service',
                      project_domain_id='default', image=LAB_IMAGE,
                      networks='none', api_microversion=MICROVERSION,
                      user_data_file=str(USER_DATA), poll_interval=1,
                      boot_timeout=120, delete_timeout=120),
            trustee=elastman_auth)
        out = subprocess.run([sys.executable, '-m', 'elastman.cmd.manage',
                              '--config-file', conf_file, 'db', 'sync'],
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr
        keystone.register_endpoint(api_url)
        # the API as operators serve it: gunicorn and the WSGI module
        processes['api'] = Process(
            'api', base,
            [os.path.join(os.path.dirname(sys.executable), 'gunicorn'),
             '--bind', '127.0.0.1:%d' % api_port, '--workers', '1',
             '--threads', '4', '--timeout', '300', '--no-control-socket',
             'elastman.wsgi.api:application'],
            env=dict(os.environ,
                     OS_ELASTMAN_CONFIG_DIR=os.path.dirname(conf_file),
                     OS_ELASTMAN_CONFIG_FILES=os.path.basename(conf_file)))
        processes['actuator'] = Process(
            'actuator', base, [sys.executable, '-m', 'elastman.cmd.actuator',
                               '--config-file', conf_file])
        services.wait_for(lambda: services.port_open('127.0.0.1', api_port),
                          timeout=120, interval=0.5)
        conf.set_override('contact_points', [store_node.spec.address],
                          'store')
        conf.set_override('port', store_node.spec.cql_port, 'store')
        conf.set_override('keyspace', keyspace, 'store')
        opened = em_store.Store.open(conf)
        trustee = keystone.admin.users.list(name='elastman')[0].id
        print('tenant cloud ready in %.1fs' % (time.monotonic() - started))
        made = Cloud(keystone, api_url, lab_dir, admin, tenants, opened,
                     processes, conf_file, trustee)
        yield made
    finally:
        # after the package nothing of it is left in Nova, and elastman
        # holds no usable trust
        left_in_nova = None
        if made is not None:
            try:
                left_in_nova = ([(s.name, s.project_id, s.status)
                                 for s in made.servers()],
                                [(g.name, g.project_id)
                                 for g in made.server_groups()],
                                [t.id for t in made.trusts()])
            except Exception as exc:
                left_in_nova = ('could not list', str(exc))
            print('left after the package (servers, server groups, '
                  'trusts): %s' % (left_in_nova,))
        for proc in processes.values():
            proc.stop()
            print('---- %s (last 3000 characters)\n%s'
                  % (proc.name, proc.output()[-3000:]))
        if opened is not None:
            opened.close()
        try:
            session = connection.connect(conf)
            session.execute('DROP KEYSPACE IF EXISTS %s' % keyspace)
            connection.close(session)
        except Exception as exc:   # the store node may be gone already
            print('could not drop keyspace %s: %s' % (keyspace, exc))
        for name in ('contact_points', 'port', 'keyspace'):
            conf.clear_override(name, 'store')
        left = lab.stop(timeout=180)
        lab_rabbit.stop()
        guests = subprocess.run(['pgrep', '-f', str(lab_dir / 'guests')],
                                capture_output=True, text=True).stdout.split()
        assert not left and not guests, ('nova lab processes left', left,
                                         guests)
        assert left_in_nova in (None, ([], [], [])), left_in_nova
        print('tenant cloud up for %.1fs in all'
              % (time.monotonic() - started))


@pytest.fixture
def leftovers(cloud):
    """The test's clusters and servers, removed after it (see Leftovers)."""
    tracker = Leftovers(cloud)
    try:
        yield tracker
    finally:
        tracker.clean()


@pytest.fixture(scope='package')
def alice(cloud) -> Tenant:
    return cloud.tenants['tenant-a']


@pytest.fixture(scope='package')
def bob(cloud) -> Tenant:
    return cloud.tenants['tenant-b']
