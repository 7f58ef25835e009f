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
"""Real libvirtd + QEMU (TCG) for the host agent's functional tests.

Needs libvirtd, virtlogd and qemu-system-x86_64 (tools/install-libvirt.sh)
and root; skips only when libvirtd cannot be started. The hook is installed
as /etc/libvirt/hooks/qemu.d/<unique name> and removed afterwards; libvirtd
is SIGHUPed so it re-reads its hooks. A fake two-node sysfs makes the
pinning decisions visible on a one-node machine.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
import uuid

from oslo_config import cfg
import pytest

from elastman.conf import hostagent as hostagent_conf
from elastman.hostagent import hookinstall
from tests.functional import services

HOOKS_D = '/etc/libvirt/hooks/qemu.d'
URI = 'qemu:///system'

DOMAIN_XML = """<domain type='qemu'>
  <name>{name}</name>
  <uuid>{uuid}</uuid>
  <metadata>
    <nova:instance xmlns:nova="http://openstack.org/xmlns/libvirt/nova/1.1">
      <nova:flavor name="{flavor}">
        <nova:extraSpecs>
          <nova:extraSpec name="elastman:class">{vm_class}</nova:extraSpec>
          <nova:extraSpec name="elastman:slo_ms">35</nova:extraSpec>
        </nova:extraSpecs>
      </nova:flavor>
    </nova:instance>{extra_metadata}
  </metadata>
  <memory unit='MiB'>64</memory>
  <vcpu>{vcpus}</vcpu>
  <os><type arch='x86_64'>hvm</type></os>
  <devices><emulator>/usr/bin/qemu-system-x86_64</emulator>{devices}</devices>
</domain>"""


def pids(name: str) -> list[int]:
    out = subprocess.run(['pgrep', '-x', name], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def wait(pred, timeout: float = 15.0, step: float = 0.1):
    """``pred()``'s first true value within ``timeout`` s, else its last."""
    try:
        return services.wait_for(pred, timeout, step)
    except TimeoutError:
        return pred()


@pytest.fixture(scope='module')
def libvirt_conn():
    """A connection to a running libvirtd; starts the daemons if needed."""
    if os.geteuid() != 0:
        pytest.skip('libvirtd cannot be started: not root')
    started = []
    for daemon in ('virtlogd', 'libvirtd'):
        if pids(daemon):
            continue
        if shutil.which(daemon) is None:
            pytest.skip('libvirtd cannot be started: %s is not installed '
                        '(run tools/install-libvirt.sh)' % daemon)
        for d in ('/var/log/libvirt', '/var/run/libvirt',
                  '/var/lib/libvirt/qemu', '/var/cache/libvirt'):
            os.makedirs(d, exist_ok=True)
        before = set(pids(daemon))
        rc = subprocess.run([daemon, '-d'], capture_output=True, text=True)
        if rc.returncode != 0:
            pytest.skip('libvirtd cannot be started: %s -d: %s'
                        % (daemon, rc.stderr.strip()))
        new = wait(lambda: set(pids(daemon)) - before, 5)
        started.extend(new or [])
    try:
        import libvirt
    except ImportError:
        pytest.fail('libvirt-python missing: run tools/install-libvirt.sh')
    conn = wait(lambda: _try_open(libvirt), 10)
    if not conn:
        pytest.skip('libvirtd cannot be started: no answer on %s' % URI)
    yield conn
    conn.close()
    for pid in reversed(started):  # only what this fixture started
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    # The next module's fixture must not find a daemon still exiting: it
    # would take it for a running one and get no answer.
    wait(lambda: not any(os.path.exists('/proc/%d' % pid)
                         for pid in started), 30)


def _try_open(libvirt):
    try:
        return libvirt.open(URI)
    except libvirt.libvirtError:
        return None


@pytest.fixture
def fake_sysfs(tmp_path):
    """Two NUMA nodes: node0 = cpu0, node1 = cpu1."""
    root = tmp_path / 'sys'
    for nid in (0, 1):
        node = root / 'devices/system/node' / ('node%d' % nid)
        node.mkdir(parents=True)
        (node / 'cpulist').write_text('%d\n' % nid)
        (node / 'meminfo').write_text('Node %d MemTotal: 1048576 kB\n' % nid)
        (node / 'distance').write_text('10 21\n' if nid == 0 else '21 10\n')
        topo = root / 'devices/system/cpu' / ('cpu%d' % nid) / 'topology'
        topo.mkdir(parents=True)
        (topo / 'physical_package_id').write_text('%d\n' % nid)
    return str(root)


@pytest.fixture
def installed_hook(tmp_path, libvirt_conn):
    state = tmp_path / 'state'
    sock = str(state / 'hook.sock')
    dest = os.path.join(HOOKS_D, 'elastman-test-%d' % os.getpid())
    hookinstall.install(sock, dest, reload_libvirtd=True)
    time.sleep(0.5)  # let libvirtd re-scan its hooks
    yield str(state), sock
    os.unlink(dest)
    try:
        os.rmdir(HOOKS_D)
    except OSError:
        pass
    hookinstall.reload_hooks()


@pytest.fixture
def domains_to_clean(libvirt_conn):
    names = []
    yield names
    import libvirt
    for name in names:
        try:
            dom = libvirt_conn.lookupByName(name)
        except libvirt.libvirtError:
            continue
        try:
            # a transient domain is gone once destroyed: ask first
            persistent = dom.isPersistent()
            if dom.isActive():
                dom.destroy()
            if persistent:
                dom.undefine()
        except libvirt.libvirtError:
            pass


def start_domain(conn, names, vm_class, flavor='m1.test',
                 extra_metadata='', devices='', vcpus=1):
    """Create a transient TCG domain of ``vcpus`` vCPUs (``devices``: XML
    added to its <devices>); returns (domain, seconds it took).
    """
    name = 'elastman-ft-%s' % uuid.uuid4().hex[:8]
    names.append(name)
    xml = DOMAIN_XML.format(name=name, uuid=uuid.uuid4(), vm_class=vm_class,
                            flavor=flavor, extra_metadata=extra_metadata,
                            devices=devices, vcpus=vcpus)
    t0 = time.monotonic()
    dom = conn.createXML(xml, 0)
    return dom, time.monotonic() - t0


def virsh(*args) -> str:
    return subprocess.run(['virsh', '-c', URI, *args], capture_output=True,
                          text=True).stdout


def make_agent(state_dir, sysfs_root, tmp_path, **overrides):
    """A host agent with the default configuration, but for where it
    writes and what it reads of the host (and ``overrides``).
    """
    from elastman.hostagent import manager
    conf = cfg.ConfigOpts()
    conf.register_opt(cfg.StrOpt('host', default='test-host'))
    # a fresh group: overrides live on the OptGroup, which CONF shares
    conf.register_opts(hostagent_conf.hostagent_opts, group='hostagent')
    conf([], project='elastman-test', default_config_files=[])
    conf.set_override('state_dir', state_dir, 'hostagent')
    conf.set_override('sysfs_root', sysfs_root, 'hostagent')
    conf.set_override('resctrl_root', str(tmp_path / 'no-resctrl'),
                      'hostagent')
    for name, value in overrides.items():
        conf.set_override(name, value, 'hostagent')
    return manager.HostAgentManager(conf)
