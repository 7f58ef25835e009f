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
"""A real Nova (tools/nova-lab) for the module, on a RabbitMQ vhost of its own.

Needs tools/install.sh --nova (once). The lab's processes are all stopped
afterwards, and the teardown checks that none is left.
"""
from __future__ import annotations

import time

from oslo_config import cfg
import pytest

from elastman.compute import nova
from elastman.conf import nova as nova_conf_mod
from tests.functional import novalab
from tests.functional import services

IMAGE = '11111111-2222-3333-4444-555555555555'
# vcpus:memory_mb:disk_gb of each of the two fake hosts: two m1.tiny
# (1 vCPU) fill one
HOST_SIZE = '2:2048:20'
HOSTS = ('compute1', 'compute2')


@pytest.fixture(scope='module')
def nova_lab(tmp_path_factory):
    """Start the lab; yields its Compute endpoint. Stops it afterwards."""
    novalab.require_installed()
    broker = services.Rabbit()
    broker.start()
    lab = novalab.Lab(tmp_path_factory.mktemp('nova-lab'), broker.url, HOSTS,
                      HOST_SIZE)
    started = time.monotonic()
    try:
        lab.start(timeout=600)
        print('nova lab started in %.1fs' % (time.monotonic() - started))
        yield 'http://127.0.0.1:8774/v2.1'
    finally:
        left = lab.stop(timeout=120)
        broker.stop()
        assert not left, 'nova lab processes left running: %s' % left


@pytest.fixture(scope='module')
def lab_conf(nova_lab, tmp_path_factory):
    """A [nova] configuration for the lab, keystoneauth admin_token auth."""
    path = tmp_path_factory.mktemp('nova-conf') / 'elastman.conf'
    services.write_config(str(path), nova={
        'auth_type': 'admin_token', 'endpoint': nova_lab,
        'token': 'admin:admin', 'image': IMAGE, 'networks': 'none',
        'api_microversion': '2.95', 'poll_interval': 0.5,
        'boot_timeout': 60, 'delete_timeout': 60})
    conf = cfg.ConfigOpts()
    nova_conf_mod.register_opts(conf)
    conf([], project='elastman', default_config_files=[str(path)])
    yield conf
    conf.reset()


@pytest.fixture
def driver(lab_conf):
    drv = nova.NovaDriver(lab_conf)
    yield drv
    # no server of a test survives it
    for server in drv.list():
        drv.delete(server.id)
    for server in drv.list():
        drv.wait_for_state(server.id, 'DELETED')
    drv.close()
