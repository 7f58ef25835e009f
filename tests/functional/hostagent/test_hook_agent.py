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
"""Real libvirtd + QEMU (TCG): hook -> agent -> placement visible in libvirt,
and a VM still starts when the agent is down or its XML is hostile.
The fixtures are in conftest.py.
"""
from __future__ import annotations

import os
import socket

from tests.functional.hostagent.conftest import make_agent
from tests.functional.hostagent.conftest import start_domain
from tests.functional.hostagent.conftest import virsh
from tests.functional.hostagent.conftest import wait


def test_hook_agent_placement_visible_in_libvirt(
        libvirt_conn, installed_hook, fake_sysfs, domains_to_clean, tmp_path):
    state_dir, sock = installed_hook
    agent = make_agent(state_dir, fake_sysfs, tmp_path,
                       lc_vcpu_quota=90000, be_vcpu_quota=40000,
                       controller_enabled=False)
    agent.start()
    try:
        lc, _ = start_domain(libvirt_conn, domains_to_clean, 'latency-critical')
        be, _ = start_domain(libvirt_conn, domains_to_clean, 'best-effort')
        assert wait(lambda: agent.events_applied >= 2, 20), \
            'agent did not place both domains (hook events: %d)' \
            % agent.listener.received
        # what the hook told the agent
        lc_rec = agent.registry.get(lc.UUIDString())
        assert lc_rec.vm_class == 'latency-critical' and lc_rec.slo_ms == 35
        assert agent.registry.get(be.UUIDString()).vm_class == 'best-effort'
        # what libvirt shows: LC pinned to node 0's CPU, BE to the other node
        assert lc.vcpuPinInfo(1)[0] == (True, False)
        assert lc.emulatorPinInfo(1) == (True, False)
        assert lc.schedulerParameters()['vcpu_quota'] == 90000
        assert be.vcpuPinInfo(1)[0] == (False, True)
        assert be.schedulerParameters()['vcpu_quota'] == 40000
        pinned = virsh('vcpupin', lc.name())
        assert ' 0      0\n' in pinned or pinned.split()[-1] == '0'
        assert 'vcpu_quota     : 40000' in virsh('schedinfo', be.name())
        # the agent wrote only inside its state dir
        assert sorted(os.listdir(state_dir)) == ['domains.json', 'hook.sock']
    finally:
        agent.stop()


def test_vm_starts_when_agent_is_down(libvirt_conn, installed_hook,
                                      domains_to_clean):
    state_dir, sock = installed_hook
    os.makedirs(state_dir, exist_ok=True)
    assert not os.path.exists(sock)
    dom, took = start_domain(libvirt_conn, domains_to_clean, 'latency-critical')
    assert dom.isActive()
    log = os.path.join(state_dir, 'hook.log')
    assert wait(lambda: os.path.exists(log), 5)
    with open(log) as f:
        text = f.read()
    assert 'agent unreachable' in text and dom.name() in text


def test_vm_starts_when_the_agent_crashed(libvirt_conn, installed_hook,
                                          domains_to_clean):
    """A crashed agent leaves its socket behind, with nobody reading."""
    state_dir, sock = installed_hook
    os.makedirs(state_dir, exist_ok=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    stale.bind(sock)
    stale.close()
    try:
        dom, _ = start_domain(libvirt_conn, domains_to_clean,
                              'latency-critical')
        assert dom.isActive()
        log = os.path.join(state_dir, 'hook.log')
        assert wait(lambda: os.path.exists(log) and dom.name() in
                    open(log).read(), 5)
    finally:
        os.unlink(sock)


HOSTILE_METADATA = """
    <elastman:vm xmlns:elastman="http://openstack.org/xmlns/elastman/hostagent/1.0"
                 class="vip" slo_ms="-5" jmx="$(reboot):7199"
                 junk="{junk}"/>""".format(junk='x' * 60000)


def test_vm_with_hostile_metadata_starts_as_best_effort(
        libvirt_conn, installed_hook, fake_sysfs, domains_to_clean, tmp_path):
    state_dir, _ = installed_hook
    agent = make_agent(state_dir, fake_sysfs, tmp_path,
                       controller_enabled=False)
    agent.start()
    try:
        dom, _ = start_domain(libvirt_conn, domains_to_clean, 'vip',
                              extra_metadata=HOSTILE_METADATA)
        assert dom.isActive()
        assert wait(lambda: agent.registry.get(dom.UUIDString()), 20)
        rec = agent.registry.get(dom.UUIDString())
        assert (rec.vm_class, rec.slo_ms, rec.jmx) == ('best-effort', None,
                                                       None)
    finally:
        agent.stop()
