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
"""``elastman-manage local-cluster`` against real Cassandra: create a one-node
cluster (no actuator runs, so the command carries the action out itself),
list it, refuse a second one of the same name, delete it, and find no
process, directory, cgroup or store row left behind.
"""
import os
import subprocess
import sys
import uuid

import pytest

from elastman.cassandra import nodetool
from elastman.compute import base
from elastman.compute import local as local_driver
from tests.functional import services

NETWORK = '127.0.100.0/24'
JMX_BASE = 18000
FLAVOR = 'one:cpu=1,heap=384M'
CGROUP_ROOTS = ('/sys/fs/cgroup/cpu', '/sys/fs/cgroup')


@pytest.fixture
def cloud(conf, tmp_path):
    """The local-cloud settings the command gets, and a driver on the same
    state directory to look at (and, on failure, clean up) its servers.
    """
    settings = {'network': NETWORK, 'jmx_port_base': JMX_BASE,
                'flavor': FLAVOR,
                'cgroup_parent': 'elastman-test-%s' % uuid.uuid4().hex[:6]}
    conf.set_override('state_path', str(tmp_path / 'state'))
    for name, value in settings.items():
        conf.set_override(name, [value] if name == 'flavor' else value,
                          'local_cloud')
    driver = local_driver.LocalDriver(conf, recover=False)
    yield settings, driver
    services.delete_all(driver)
    for root in CGROUP_ROOTS:
        path = os.path.join(root, settings['cgroup_parent'])
        if os.path.isdir(path):
            os.rmdir(path)
    conf.clear_override('state_path')
    for name in settings:
        conf.clear_override(name, 'local_cloud')


def _manage(config: str, *args: str, timeout: float = 60):
    return subprocess.run([sys.executable, '-m', 'elastman.cmd.manage',
                           '--config-file', config, 'local-cluster', *args],
                          capture_output=True, text=True, timeout=timeout)


def _processes_under(path: str) -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open('/proc/%s/cmdline' % pid, 'rb') as f:
                if path.encode() in f.read():
                    found.append(pid)
        except OSError:
            continue
    return found


def test_create_list_delete_one_node(conf, store, cloud, config_file):
    settings, driver = cloud
    config = config_file(DEFAULT={'state_path': conf.state_path},
                         local_cloud=settings,
                         actuator={'join_timeout': 420})

    created = _manage(config, 'create', 'cli', '--size', '1', timeout=900)
    assert created.returncode == 0, created.stdout[-3000:] + created.stderr
    assert 'running the create here' in created.stdout
    assert 'is ready' in created.stdout

    [cluster] = [c for c in store.clusters.all() if c['name'] == 'cli']
    assert cluster['state'] == 'ACTIVE'
    assert cluster['spec']['flavor'] == 'one'
    assert cluster['policy']['min_size'] == 1
    [node] = store.nodes.list(cluster['id'])
    assert (node['state'], node['flavor']) == ('UN', 'one')
    [server] = driver.list(str(cluster['id']))
    assert server.status == base.ACTIVE
    assert server.address == node['address'] == '127.0.100.1'
    ring = nodetool.Nodetool(conf, server.jmx_host, server.jmx_port).status()
    assert [(s.address, s.code) for s in ring] == [(server.address, 'UN')]
    assert store.leases.holder('actuator/%s' % cluster['id']) is None
    pid = driver.node(server.id).pid()
    assert pid is not None

    listed = _manage(config, 'list')
    assert listed.returncode == 0, listed.stderr
    header, *rows = listed.stdout.strip().splitlines()
    assert header.split() == ['CLUSTER', 'ID', 'STATE', 'ADDRESS', 'FLAVOR',
                              'NODE', 'SERVER', 'PID']
    assert [r.split() for r in rows] == [
        ['cli', str(cluster['id']), 'ACTIVE', '127.0.100.1', 'one', 'UN',
         'ACTIVE', str(pid)]]

    again = _manage(config, 'create', 'cli', '--size', '1')
    assert again.returncode == 2
    assert "a cluster named 'cli' exists already" in again.stderr
    assert [c['id'] for c in store.clusters.all()] == [cluster['id']]

    server_dir = os.path.join(driver.state_dir, server.id)
    deleted = _manage(config, 'delete', 'cli', timeout=300)
    assert deleted.returncode == 0, deleted.stdout[-3000:] + deleted.stderr
    assert 'deleted' in deleted.stdout.strip().splitlines()[-1]

    assert list(store.clusters.all()) == []
    assert store.nodes.list(cluster['id']) == []
    assert {a['kind']: a['state'] for a in
            store.actions.list(cluster['id'])} == {'create': 'SUCCEEDED',
                                                   'delete': 'SUCCEEDED'}
    assert store.leases.holder('actuator/%s' % cluster['id']) is None
    assert driver.list() == []
    assert not os.path.exists(server_dir)
    assert not os.path.exists('/proc/%d' % pid)
    assert _processes_under(conf.state_path) == []
    for root in CGROUP_ROOTS:
        group = os.path.join(root, settings['cgroup_parent'], server.id)
        assert not os.path.exists(group)
    assert _manage(config, 'list').stdout.strip().splitlines()[1:] == []
