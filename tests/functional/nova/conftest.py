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

import os
import pathlib
import subprocess
import time

from oslo_config import cfg
import pytest

from elastman.compute import nova
from elastman.conf import nova as nova_conf_mod
from tests.functional import services

REPO = pathlib.Path(__file__).resolve().parents[3]
LAB_SH = REPO / 'tools' / 'nova-lab' / 'lab.sh'
IMAGE = '11111111-2222-3333-4444-555555555555'
# vcpus:memory_mb:disk_gb of each of the two fake hosts: two m1.tiny
# (1 vCPU) fill one
HOST_SIZE = '2:2048:20'
HOSTS = ('compute1', 'compute2')


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope='module')
def nova_lab(tmp_path_factory):
    """Start the lab; yields its Compute endpoint. Stops it afterwards."""
    cache = pathlib.Path(os.environ.get(
        'ELASTMAN_CACHE', pathlib.Path.home() / '.cache' / 'elastman'))
    venv = pathlib.Path(os.environ.get('ELASTMAN_NOVA_VENV',
                                       cache / 'nova-venv'))
    if not (venv / 'bin' / 'nova-compute').exists():
        pytest.fail('the Nova lab is not installed: run tools/install.sh '
                    '--nova (or tools/nova-lab/install.sh)')
    lab_dir = tmp_path_factory.mktemp('nova-lab')
    broker = services.Rabbit()
    broker.start()
    env = dict(os.environ, NOVA_LAB_DIR=str(lab_dir),
               NOVA_LAB_TRANSPORT_URL=broker.url,
               NOVA_LAB_COMPUTES=' '.join(HOSTS),
               NOVA_LAB_HOST_SIZE=HOST_SIZE)
    started = time.monotonic()
    pids: list[int] = []
    try:
        result = subprocess.run([str(LAB_SH), 'start'], env=env,
                                capture_output=True, text=True, timeout=600)
        print(result.stdout)
        if result.returncode:
            pytest.fail('nova lab did not start:\n%s\n%s'
                        % (result.stdout, result.stderr))
        pids = [int(p.read_text()) for p in (lab_dir / 'run').glob('*.pid')]
        print('nova lab started in %.1fs' % (time.monotonic() - started))
        yield 'http://127.0.0.1:8774/v2.1'
    finally:
        subprocess.run([str(LAB_SH), 'stop'], env=env, timeout=120,
                       capture_output=True)
        broker.stop()
        left = [p for p in pids if _alive(p)]
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
