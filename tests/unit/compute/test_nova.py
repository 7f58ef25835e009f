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
"""The nova compute driver against a fake openstacksdk connection.

The proxies (conn.compute, conn.image, conn.network) are faked; servers,
flavours and server groups are openstacksdk's own resource objects.
"""
import base64
import os

from keystoneauth1 import exceptions as ks_exc
from openstack.compute.v2 import flavor as sdk_flavor
from openstack.compute.v2 import limits as sdk_limits
from openstack.compute.v2 import server as sdk_server
from openstack.compute.v2 import server_group as sdk_group
from openstack import exceptions as os_exc
from oslo_config import cfg
import pytest

from elastman.compute import base
from elastman.compute import nova
from elastman.conf import nova as nova_conf_mod

IMAGE = '11111111-2222-3333-4444-555555555555'


def make_server(**body):
    body.setdefault('id', 'srv-1')
    body.setdefault('name', 'node-1')
    body.setdefault('status', 'ACTIVE')
    body.setdefault('metadata', {base.CLUSTER_TAG: 'c1'})
    body.setdefault('flavor', {'original_name': 'm1.tiny', 'vcpus': 1})
    body.setdefault('created', '2026-01-02T03:04:05Z')
    return sdk_server.Server.existing(**body)


FLAVORS = [sdk_flavor.Flavor.existing(id='f1', name='m1.tiny', vcpus=1,
                                      ram=512, disk=1),
           sdk_flavor.Flavor.existing(id='f2', name='m1.small', vcpus=2,
                                      ram=1024, disk=5)]


class FakeCompute:
    """conn.compute: records calls; ``fail`` maps a method to exceptions
    raised (in order) before it succeeds.
    """

    def __init__(self):
        self.calls = []
        self.servers_by_id = {}
        self.groups = {}
        self.fail = {}

    def _record(self, _method, *args, **kwargs):
        self.calls.append((_method, args, kwargs))
        errors = self.fail.get(_method)
        if errors:
            raise errors.pop(0)

    def flavors(self, **query):
        self._record('flavors', **query)
        return iter(FLAVORS)

    def find_flavor(self, name_or_id, ignore_missing=True):
        self._record('find_flavor', name_or_id)
        for f in FLAVORS:
            if name_or_id in (f.id, f.name):
                return f
        return None

    def create_server(self, **attrs):
        self._record('create_server', **attrs)
        sid = 'srv-%d' % (len(self.servers_by_id) + 1)
        self.servers_by_id[sid] = make_server(
            id=sid, name=attrs['name'], status='BUILD',
            metadata=attrs.get('metadata', {}))
        return sdk_server.Server.existing(id=sid, adminPass='x')

    def get_server(self, server_id):
        self._record('get_server', server_id)
        try:
            return self.servers_by_id[server_id]
        except KeyError:
            raise os_exc.NotFoundException('no such server')

    def servers(self, **query):
        self._record('servers', **query)
        return iter(list(self.servers_by_id.values()))

    def delete_server(self, server_id, ignore_missing=True):
        self._record('delete_server', server_id,
                     ignore_missing=ignore_missing)
        self.servers_by_id.pop(server_id, None)

    def find_server_group(self, name, ignore_missing=True):
        self._record('find_server_group', name)
        return self.groups.get(name)

    def create_server_group(self, **attrs):
        self._record('create_server_group', **attrs)
        group = sdk_group.ServerGroup.existing(id='grp-' + attrs['name'],
                                               **attrs)
        self.groups[attrs['name']] = group
        return group

    def delete_server_group(self, group_id, ignore_missing=True):
        self._record('delete_server_group', group_id)
        for name, group in list(self.groups.items()):
            if group.id == group_id:
                del self.groups[name]

    limits = {'maxTotalInstances': 10, 'totalInstancesUsed': 0,
              'maxTotalCores': 20, 'totalCoresUsed': 0,
              'maxTotalRAMSize': 51200, 'totalRAMUsed': 0}

    def get_limits(self):
        self._record('get_limits')
        return sdk_limits.Limits.existing(absolute=dict(self.limits))


class FakeConnection:
    def __init__(self):
        self.compute = FakeCompute()
        self.image = self
        self.network = self
        self.closed = 0

    missing = frozenset({'gone', '99999999-9999-9999-9999-999999999999'})

    def _lookup(self, prefix, ref):
        if ref in self.missing:
            raise os_exc.NotFoundException('%s %s not found' % (prefix, ref))
        return sdk_server.Server.existing(id=ref if '-' in ref and len(
            ref) == 36 else prefix + ref)

    def find_image(self, name, ignore_missing=False):
        return self._lookup('img-', name)

    def get_image(self, image_id):
        return self._lookup('img-', image_id)

    def find_network(self, name, ignore_missing=False):
        return self._lookup('net-', name)

    def get_network(self, network_id):
        return self._lookup('net-', network_id)

    def close(self):
        self.closed += 1


@pytest.fixture
def nova_conf():
    conf = cfg.ConfigOpts()
    nova_conf_mod.register_opts(conf)
    conf([], project='elastman', default_config_files=[])
    for key, value in {'image': IMAGE, 'networks': ['none'],
                       'api_microversion': '2.95', 'api_retry_interval': 0,
                       'poll_interval': 0.1}.items():
        conf.set_override(key, value, 'nova')
    yield conf
    conf.reset()


@pytest.fixture
def conn():
    return FakeConnection()


@pytest.fixture
def driver(nova_conf, conn):
    return nova.NovaDriver(nova_conf, connection=conn)


def calls(conn, name):
    return [c for c in conn.compute.calls if c[0] == name]


# status and fault mapping ----------------------------------------------------
@pytest.mark.parametrize('nova_status,expected', [
    ('ACTIVE', base.ACTIVE), ('BUILD', base.BUILD), ('REBUILD', base.BUILD),
    ('HARD_REBOOT', base.BUILD), ('RESIZE', base.BUILD),
    ('VERIFY_RESIZE', base.BUILD), ('MIGRATING', base.BUILD),
    ('ERROR', base.ERROR), ('SHUTOFF', base.ERROR), ('PAUSED', base.ERROR),
    ('SHELVED_OFFLOADED', base.ERROR), ('UNKNOWN', base.ERROR),
    ('DELETED', base.DELETED), ('SOFT_DELETED', base.DELETED),
    ('something-new', base.ERROR), (None, base.ERROR), ('active', base.ACTIVE),
])
def test_status_mapping(nova_status, expected):
    assert nova.map_status(nova_status) == expected
    assert expected in base.STATUSES


def test_get_maps_status_fault_and_fields(driver, conn):
    conn.compute.servers_by_id['s'] = make_server(
        id='s', status='SHUTOFF', access_ipv4='',
        addresses={'net': [
            {'addr': 'fe80::1', 'version': 6},
            {'addr': '203.0.113.9', 'version': 4,
             'OS-EXT-IPS:type': 'floating'},
            {'addr': '10.0.0.5', 'version': 4, 'OS-EXT-IPS:type': 'fixed'}]})
    server = driver.get('s')
    assert server.status == base.ERROR
    assert server.fault == 'Nova status SHUTOFF'
    assert server.address == '10.0.0.5'
    assert server.jmx_host == '10.0.0.5' and server.jmx_port == 7199
    assert server.cql_port == 9042
    assert server.flavor == 'm1.tiny'
    assert server.cluster_id == 'c1'
    assert server.created_at == 1767323045.0


def test_fault_message_is_kept(driver, conn):
    conn.compute.servers_by_id['s'] = make_server(
        id='s', status='ERROR',
        fault={'code': 500, 'message': 'No valid host was found. ',
               'details': 'Traceback...'})
    server = driver.get('s')
    assert server.status == base.ERROR
    assert server.fault == 'No valid host was found. (code 500)'


def test_no_valid_host_raises_compute_error(driver, conn):
    conn.compute.servers_by_id['s'] = make_server(
        id='s', status='ERROR', fault={
            'code': 500, 'message': 'No valid host was found. There are '
                                    'not enough hosts available.'})
    with pytest.raises(base.ComputeError) as info:
        driver.wait_for_state('s', base.ACTIVE, timeout=5)
    assert isinstance(info.value, nova.NoValidHost)
    assert 'No valid host was found' in str(info.value)
    assert 'not enough hosts available' in str(info.value)


def test_other_error_is_plain_compute_error(driver, conn):
    conn.compute.servers_by_id['s'] = make_server(
        id='s', status='ERROR', fault={'code': 500, 'message': 'boom'})
    with pytest.raises(base.ComputeError) as info:
        driver.wait_for_state('s', base.ACTIVE, timeout=5)
    assert not isinstance(info.value, nova.NoValidHost)
    assert 'boom' in str(info.value)


def test_wait_for_active_and_deleted(driver, conn):
    conn.compute.servers_by_id['s'] = make_server(id='s', status='ACTIVE')
    assert driver.wait_for_state('s', base.ACTIVE).status == base.ACTIVE
    conn.compute.servers_by_id['s'] = make_server(id='s', status='DELETED')
    assert driver.wait_for_state('s', base.DELETED).status == base.DELETED
    del conn.compute.servers_by_id['s']
    assert driver.wait_for_state('s', base.DELETED).status == base.DELETED


def test_a_dead_server_on_its_way_out_is_waited_for(driver, conn):
    # a dead node's server is SHUTOFF (ERROR to the driver) until Nova has
    # deleted it: a deletion wait does not give up on that status
    conn.compute.servers_by_id['s'] = make_server(id='s', status='SHUTOFF')
    assert driver.get('s').status == base.ERROR
    with pytest.raises(base.WaitTimeout):
        driver.wait_for_state('s', base.DELETED, timeout=0.2, interval=0.05)
    del conn.compute.servers_by_id['s']
    assert driver.wait_for_state('s', base.DELETED).status == base.DELETED


def test_wait_timeout_defaults_to_boot_timeout(driver, conn, nova_conf):
    nova_conf.set_override('boot_timeout', 1, 'nova')
    conn.compute.servers_by_id['s'] = make_server(id='s', status='BUILD')
    with pytest.raises(base.WaitTimeout):
        driver.wait_for_state('s', base.ACTIVE)


# metadata, tags and the create request ---------------------------------------
def test_create_tags_the_cluster(driver, conn, nova_conf):
    for key, value in {'key_name': 'ops', 'security_groups': ['cassandra'],
                       'availability_zone': 'az1',
                       'server_group_policy': 'anti-affinity'}.items():
        nova_conf.set_override(key, value, 'nova')
    server = driver.create('node-1', 'm1.small',
                           {base.CLUSTER_TAG: 'c1', 'role': 'cassandra'},
                           user_data='#cloud-config\n')
    [(_n, _a, attrs)] = calls(conn, 'create_server')
    assert attrs['metadata'] == {base.CLUSTER_TAG: 'c1', 'role': 'cassandra'}
    assert attrs['tags'] == ['elastman', 'elastman_cluster=c1']
    assert attrs['flavorRef'] == 'f2' and attrs['imageRef'] == IMAGE
    assert attrs['networks'] == 'none'
    assert attrs['key_name'] == 'ops'
    assert attrs['security_groups'] == [{'name': 'cassandra'}]
    assert attrs['availability_zone'] == 'az1'
    assert attrs['scheduler_hints'] == {'group': 'grp-elastman-c1'}
    assert base64.b64decode(attrs['user_data']) == b'#cloud-config\n'
    [(_n, _a, group)] = calls(conn, 'create_server_group')
    assert group == {'name': 'elastman-c1', 'policy': 'anti-affinity'}
    assert server.status == base.BUILD and server.fault is None
    assert server.name == 'node-1' and server.flavor == 'm1.small'
    assert server.cluster_id == 'c1'


def test_create_reuses_cluster_server_group(driver, conn, nova_conf):
    nova_conf.set_override('server_group_policy', 'anti-affinity', 'nova')
    driver.create('a', 'm1.tiny', {base.CLUSTER_TAG: 'c1'})
    driver.create('b', 'm1.tiny', {base.CLUSTER_TAG: 'c1'})
    assert len(calls(conn, 'create_server_group')) == 1


def test_create_without_tags_before_2_52(nova_conf, conn):
    nova_conf.set_override('api_microversion', '2.37', 'nova')
    driver = nova.NovaDriver(nova_conf, connection=conn)
    driver.create('a', 'm1.tiny', {base.CLUSTER_TAG: 'c1'})
    [(_n, _a, attrs)] = calls(conn, 'create_server')
    assert 'tags' not in attrs
    assert attrs['metadata'] == {base.CLUSTER_TAG: 'c1'}
    driver.list('c1')
    [(_n, _a, query)] = calls(conn, 'servers')
    assert 'tags' not in query


def test_create_resolves_image_and_network_names(driver, conn, nova_conf):
    nova_conf.set_override('image', 'debian-12', 'nova')
    nova_conf.set_override('networks', ['private', IMAGE], 'nova')
    driver.create('a', 'm1.tiny', {base.CLUSTER_TAG: 'c1'})
    [(_n, _a, attrs)] = calls(conn, 'create_server')
    assert attrs['imageRef'] == 'img-debian-12'
    assert attrs['networks'] == [{'uuid': 'net-private'}, {'uuid': IMAGE}]


def test_user_data_template(driver, conn, nova_conf, tmp_path):
    template = tmp_path / 'cloud-init.yaml'
    template.write_text('cluster: ${cluster}\nseeds: ${seeds}\n'
                        'name: ${name}\nkeep: ${other}\n')
    nova_conf.set_override('user_data_file', str(template), 'nova')
    driver.create('n1', 'm1.tiny', {base.CLUSTER_TAG: 'c1',
                                    'elastman_seeds': '10.0.0.1,10.0.0.2'})
    [(_n, _a, attrs)] = calls(conn, 'create_server')
    assert base64.b64decode(attrs['user_data']).decode() == (
        'cluster: c1\nseeds: 10.0.0.1,10.0.0.2\nname: n1\nkeep: ${other}\n')
    assert 'elastman_seeds' not in attrs['metadata']
    driver.create('n2', 'm1.tiny', {base.CLUSTER_TAG: 'c1'},
                  seeds=['10.0.0.3'])
    attrs = calls(conn, 'create_server')[1][2]
    assert 'seeds: 10.0.0.3\n' in base64.b64decode(
        attrs['user_data']).decode()


def test_create_unknown_flavor(driver, conn):
    with pytest.raises(base.FlavorNotFound):
        driver.create('a', 'm9.nope', {base.CLUSTER_TAG: 'c1'})
    assert not calls(conn, 'create_server')


def test_create_needs_an_image(driver, nova_conf):
    nova_conf.set_override('image', '', 'nova')
    with pytest.raises(base.ComputeError, match='image'):
        driver.create('a', 'm1.tiny', {base.CLUSTER_TAG: 'c1'})


def test_quota_exceeded(driver, conn):
    conn.compute.fail['create_server'] = [os_exc.ForbiddenException(
        'Quota exceeded for cores: Requested 2, but already used 20 of 20 '
        'cores', http_status=403)]
    with pytest.raises(base.ComputeError) as info:
        driver.create('a', 'm1.small', {base.CLUSTER_TAG: 'c1'})
    assert isinstance(info.value, nova.QuotaExceeded)
    assert 'Quota exceeded for cores' in str(info.value)


# listing ---------------------------------------------------------------------
def test_list_by_cluster_tag(driver, conn):
    conn.compute.servers_by_id.update({
        'a': make_server(id='a', metadata={base.CLUSTER_TAG: 'c1'}),
        'b': make_server(id='b', metadata={base.CLUSTER_TAG: 'c2'}),
        'c': make_server(id='c', metadata={}),
    })
    assert [s.id for s in driver.list('c1')] == ['a']
    assert calls(conn, 'servers')[-1][2] == {
        'details': True, 'tags': 'elastman_cluster=c1'}
    assert sorted(s.id for s in driver.list()) == ['a', 'b']
    assert calls(conn, 'servers')[-1][2] == {'details': True,
                                             'tags': 'elastman'}


def test_flavor_name_looked_up_before_2_47(driver, conn):
    conn.compute.servers_by_id['s'] = make_server(
        id='s', flavor={'id': 'f2', 'links': []})
    assert driver.get('s').flavor == 'm1.small'


def test_flavors(driver):
    assert driver.flavors() == {
        'm1.tiny': {'id': 'f1', 'vcpus': 1, 'ram': 512, 'disk': 1},
        'm1.small': {'id': 'f2', 'vcpus': 2, 'ram': 1024, 'disk': 5}}


# get / delete ----------------------------------------------------------------
def test_get_missing(driver):
    with pytest.raises(base.ServerNotFound):
        driver.get('nope')


def test_delete_is_idempotent(driver, conn):
    conn.compute.servers_by_id['s'] = make_server(id='s')
    driver.delete('s')
    driver.delete('s')
    conn.compute.fail['delete_server'] = [
        os_exc.NotFoundException('gone', http_status=404)]
    driver.delete('s')
    assert all(c[2] == {'ignore_missing': True}
               for c in calls(conn, 'delete_server'))


def test_delete_error_is_compute_error(driver, conn):
    conn.compute.fail['delete_server'] = [
        os_exc.ConflictException('locked', http_status=409)]
    with pytest.raises(base.ComputeError, match='locked'):
        driver.delete('s')


# retries ---------------------------------------------------------------------
def test_reads_are_retried_on_transient_errors(driver, conn):
    conn.compute.servers_by_id['s'] = make_server(id='s')
    conn.compute.fail['get_server'] = [
        ks_exc.ConnectFailure('refused'),
        os_exc.HttpException('bad gateway', http_status=502),
        ks_exc.RequestTimeout('slow')]
    assert driver.get('s').id == 's'
    assert len(calls(conn, 'get_server')) == 4


def test_retries_are_bounded(driver, conn, nova_conf):
    nova_conf.set_override('api_retries', 1, 'nova')
    conn.compute.fail['get_server'] = [
        os_exc.HttpException('unavailable', http_status=503)] * 5
    with pytest.raises(base.ComputeError, match='unavailable'):
        driver.get('s')
    assert len(calls(conn, 'get_server')) == 2


def test_create_retried_only_when_nova_was_not_reached(driver, conn):
    conn.compute.fail['create_server'] = [ks_exc.ConnectFailure('refused')]
    driver.create('a', 'm1.tiny', {base.CLUSTER_TAG: 'c1'})
    assert len(calls(conn, 'create_server')) == 2
    conn.compute.fail['create_server'] = [
        os_exc.HttpException('oops', http_status=500)]
    with pytest.raises(base.ComputeError, match='oops'):
        driver.create('b', 'm1.tiny', {base.CLUSTER_TAG: 'c1'})
    assert len(calls(conn, 'create_server')) == 3


def test_client_errors_are_not_retried(driver, conn):
    conn.compute.fail['get_server'] = [
        os_exc.BadRequestException('bad', http_status=400)]
    with pytest.raises(base.ComputeError):
        driver.get('s')
    assert len(calls(conn, 'get_server')) == 1


# client lifecycle and configuration ----------------------------------------
def test_close(driver, conn):
    driver.close()
    driver.close()
    assert conn.closed == 1


def test_connect_with_cloud_name(nova_conf, monkeypatch):
    seen = {}

    def connect(**kwargs):
        seen.update(kwargs)
        return FakeConnection()

    monkeypatch.setattr(nova.openstack, 'connect', connect)
    nova_conf.set_override('cloud', 'mycloud', 'nova')
    nova_conf.set_override('region_name', 'RegionTwo', 'nova')
    driver = nova.NovaDriver(nova_conf)
    assert driver.conn is driver.conn
    assert seen == {'cloud': 'mycloud', 'compute_api_version': '2.95',
                    'interface': 'public', 'region_name': 'RegionTwo'}


def test_connect_with_keystoneauth_options(tmp_path, monkeypatch):
    path = tmp_path / 'elastman.conf'
    path.write_text('[nova]\nauth_type = admin_token\n'
                    'endpoint = http://nova.example:8774/v2.1\n'
                    'token = secret\ntimeout = 7\n')
    conf = cfg.ConfigOpts()
    nova_conf_mod.register_opts(conf)
    conf([], project='elastman', default_config_files=[str(path)])
    seen = {}

    class Connection:
        def __init__(self, session, **kwargs):
            seen.update(kwargs, session=session)

    monkeypatch.setattr(nova.openstack.connection, 'Connection', Connection)
    nova.NovaDriver(conf).conn
    session = seen.pop('session')
    assert session.timeout == 7.0
    assert session.auth.get_endpoint(session) == (
        'http://nova.example:8774/v2.1')
    assert seen == {'app_name': 'elastman', 'compute_api_version': '2.79',
                    'interface': 'public'}


def test_options_are_listed():
    [(group, opts)] = nova_conf_mod.list_opts()
    names = {o.name for o in opts}
    assert group.name == 'nova'
    assert {'cloud', 'image', 'networks', 'key_name', 'security_groups',
            'availability_zone', 'server_group', 'boot_timeout',
            'delete_timeout', 'api_microversion', 'auth_type', 'auth-url',
            'cafile', 'insecure', 'timeout'} <= names
    assert all(o.help for o in opts)


def test_driver_is_a_plugin(nova_conf):
    driver = base.load_driver(nova_conf, 'nova')
    assert isinstance(driver, nova.NovaDriver)
    driver.close()


# the cluster's request, its project and its quota ----------------------------
def test_request_wins_over_the_configuration(driver, conn, nova_conf):
    for key, value in {'key_name': 'ops', 'security_groups': ['default'],
                       'availability_zone': 'az1',
                       'server_group_policy': 'anti-affinity'}.items():
        nova_conf.set_override(key, value, 'nova')
    request = base.ServerRequest(
        image='debian-12', networks=['tenant-net'],
        security_groups=['cassandra'], availability_zone='az2',
        server_group_policy='soft-anti-affinity', key_name='mine')
    driver.create('a', 'm1.tiny', {base.CLUSTER_TAG: 'c1'}, request=request)
    [(_n, _a, attrs)] = calls(conn, 'create_server')
    assert attrs['imageRef'] == 'img-debian-12'
    assert attrs['networks'] == [{'uuid': 'net-tenant-net'}]
    assert attrs['security_groups'] == [{'name': 'cassandra'}]
    assert attrs['availability_zone'] == 'az2'
    assert attrs['key_name'] == 'mine'
    [(_n, _a, group)] = calls(conn, 'create_server_group')
    assert group == {'name': 'elastman-c1', 'policy': 'soft-anti-affinity'}
    # an existing group of the request; the configured policy is not used
    conn.compute.groups['shared'] = sdk_group.ServerGroup.existing(
        id='grp-shared', name='shared', policy='anti-affinity')
    driver.create('b', 'm1.tiny', {base.CLUSTER_TAG: 'c2'},
                  request=base.ServerRequest(server_group='shared'))
    assert calls(conn, 'create_server')[1][2]['scheduler_hints'] == {
        'group': 'grp-shared'}
    assert len(calls(conn, 'create_server_group')) == 1


def test_request_from_spec_ignores_other_keys():
    request = base.ServerRequest.from_spec({
        'image': 'img', 'networks': ['n'], 'trust_id': 't', 'size': 3})
    assert request == base.ServerRequest(image='img', networks=['n'])


@pytest.mark.parametrize('request_,error,text', [
    (base.ServerRequest(image='gone'), nova.ImageNotFound,
     'Image gone not found'),
    (base.ServerRequest(image='99999999-9999-9999-9999-999999999999'),
     nova.ImageNotFound, 'Image 99999999-9999-9999-9999-999999999999'),
    (base.ServerRequest(networks=['gone']), nova.NetworkNotFound,
     'Network gone not found'),
])
def test_missing_image_or_network_boots_nothing(driver, conn, request_, error,
                                                text):
    with pytest.raises(error, match=text):
        driver.create('a', 'm1.tiny', {base.CLUSTER_TAG: 'c1'},
                      request=request_)
    assert not calls(conn, 'create_server')


def test_user_data_gets_the_cluster_name(driver, conn, nova_conf, tmp_path):
    template = tmp_path / 'cloud-init.yaml'
    template.write_text('name: "${cluster_name}" seeds: "${seeds}"\n')
    nova_conf.set_override('user_data_file', str(template), 'nova')
    driver.create('n1', 'm1.tiny', {base.CLUSTER_TAG: 'c1',
                                    'cluster_name': 'orders'}, seeds=[])
    driver.create('n2', 'm1.tiny', {base.CLUSTER_TAG: 'c1'},
                  seeds=['10.0.0.1', '10.0.0.2'])
    data = [base64.b64decode(c[2]['user_data']).decode()
            for c in calls(conn, 'create_server')]
    assert data == ['name: "orders" seeds: ""\n',
                    'name: "elastman-c1" seeds: "10.0.0.1,10.0.0.2"\n']


def test_user_data_gets_the_tokens_of_a_concurrent_join(
        driver, conn, nova_conf, tmp_path):
    template = tmp_path / 'cloud-init.yaml'
    template.write_text('seeds: "${seeds}"\n')
    nova_conf.set_override('user_data_file', str(template), 'nova')
    assert not driver.supports_initial_tokens    # the template drops them
    template.write_text('tokens: "${initial_tokens}"\n')
    assert driver.supports_initial_tokens
    driver.create('n1', 'm1.tiny', {base.CLUSTER_TAG: 'c1',
                                    base.INITIAL_TOKENS: '-5,7'})
    driver.create('n2', 'm1.tiny', {base.CLUSTER_TAG: 'c1'})
    data = [base64.b64decode(c[2]['user_data']).decode()
            for c in calls(conn, 'create_server')]
    assert data == ['tokens: "-5,7"\n', 'tokens: ""\n']


def test_the_shipped_user_data_passes_tokens_on(driver, nova_conf):
    shipped = os.path.join(os.path.dirname(__file__), '..', '..', '..',
                           'etc', 'elastman', 'cassandra-user-data.yaml')
    nova_conf.set_override('user_data_file', shipped, 'nova')
    assert driver.supports_initial_tokens and driver.supports_replace


def test_check_quota_names_what_is_short(driver, conn):
    conn.compute.limits = dict(FakeCompute.limits, maxTotalInstances=4,
                               totalInstancesUsed=3, maxTotalCores=20,
                               totalCoresUsed=17)
    driver.check_quota('m1.tiny', 1)
    with pytest.raises(base.QuotaExceeded) as info:
        driver.check_quota('m1.small', 2)
    assert 'instances: 3 used of 4, 2 more needed' in str(info.value)
    assert 'cores: 17 used of 20, 4 more needed' in str(info.value)
    assert 'RAM' not in str(info.value)
    conn.compute.limits = dict(FakeCompute.limits, maxTotalInstances=-1,
                               maxTotalCores=-1, maxTotalRAMSize=-1)
    driver.check_quota('m1.small', 1000)       # -1: unlimited


@pytest.fixture
def scoped(driver, conn, monkeypatch):
    """A driver of project p1, its connection the fake one."""
    monkeypatch.setattr(nova.NovaDriver, '_connect', lambda self: conn)
    found = driver.scoped('p1', 'trust-1')
    assert found is driver.scoped('p1', 'trust-1')   # one per trust
    assert driver.scoped('p1', None) is driver       # no trust: itself
    return found


def test_scoped_driver_sees_and_touches_its_project_only(scoped, conn):
    conn.compute.servers_by_id.update({
        'mine': make_server(id='mine', project_id='p1'),
        'theirs': make_server(id='theirs', project_id='p2'),
    })
    assert scoped.project_id == 'p1'
    assert [s.id for s in scoped.list('c1')] == ['mine']
    assert scoped.get('mine').project_id == 'p1'
    with pytest.raises(base.ServerNotFound):
        scoped.get('theirs')
    with pytest.raises(nova.ForeignServer, match='belongs to project p2'):
        scoped.delete('theirs')
    scoped.delete('mine')
    scoped.delete('gone')          # still idempotent
    assert [c[1] for c in calls(conn, 'delete_server')] == [('mine',)]
    assert 'theirs' in conn.compute.servers_by_id


def test_find_servers_maps_addresses_of_the_project(scoped, conn):
    conn.compute.servers_by_id.update({
        'a': make_server(id='a', project_id='p1', metadata={},
                         addresses={'net': [{'addr': '10.0.0.5',
                                             'version': 4}]},
                         image={'id': 'img-1'},
                         security_groups=[{'name': 'cassandra'}]),
        'b': make_server(id='b', project_id='p2', metadata={},
                         addresses={'net': [{'addr': '10.0.0.6',
                                             'version': 4}]}),
    })
    found = scoped.find_servers(['10.0.0.5', '10.0.0.6', '10.0.0.7'])
    assert list(found) == ['10.0.0.5']
    server = found['10.0.0.5']
    assert (server.id, server.image, server.networks,
            server.security_groups) == ('a', 'img-1', {'10.0.0.5': 'net'},
                                        ['cassandra'])


def test_release_deletes_the_cluster_server_group(driver, conn, nova_conf):
    nova_conf.set_override('server_group_policy', 'anti-affinity', 'nova')
    driver.create('a', 'm1.tiny', {base.CLUSTER_TAG: 'c1'})
    driver.release('c1')
    driver.release('c1')
    assert conn.compute.groups == {}
    assert calls(conn, 'delete_server_group') == [
        ('delete_server_group', ('grp-elastman-c1',), {})]


def test_live_migrate_lets_the_scheduler_pick_the_host(driver, conn):
    conn.compute.live_migrate_server = \
        lambda server, **kw: conn.compute._record('live_migrate_server',
                                                  server, **kw)
    driver.live_migrate('srv-9')
    assert calls(conn, 'live_migrate_server') == [
        ('live_migrate_server', ('srv-9',),
         {'host': None, 'block_migration': 'auto'})]
    conn.compute.fail['live_migrate_server'] = [
        os_exc.HttpException('migration refused', http_status=400)]
    with pytest.raises(base.ComputeError, match='live-migrating server srv-9'):
        driver.live_migrate('srv-9')
