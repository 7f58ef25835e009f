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
"""The libvirt hook script: safe parsing, classification, never failing."""
from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading

import pytest

from elastman.hostagent import domains
from elastman.hostagent import hookinstall

HOOK = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'etc',
                    'libvirt', 'hooks', 'qemu')


def _load_hook():
    loader = importlib.machinery.SourceFileLoader('elastman_hook', HOOK)
    spec = importlib.util.spec_from_loader('elastman_hook', loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


hook = _load_hook()

NOVA_XML = b"""<domain type='kvm' id='7'>
  <name>instance-0001</name>
  <uuid>629b29b9-b0fb-4766-b27d-f4a686d5cbda</uuid>
  <metadata>
    <nova:instance xmlns:nova="http://openstack.org/xmlns/libvirt/nova/1.1">
      <nova:flavor name="cassandra.large">
        <nova:vcpus>4</nova:vcpus>
        <nova:extraSpecs>
          <nova:extraSpec name="hw:cpu_policy">dedicated</nova:extraSpec>
          <nova:extraSpec name="elastman:class">latency-critical</nova:extraSpec>
          <nova:extraSpec name="elastman:slo_ms">35</nova:extraSpec>
        </nova:extraSpecs>
      </nova:flavor>
    </nova:instance>
  </metadata>
  <vcpu placement='static'>4</vcpu>
</domain>"""

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<domain><name>&lol4;</name><uuid>x</uuid></domain>"""

EXTERNAL = b"""<?xml version="1.0"?>
<!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>
<domain><name>&x;</name><uuid>u</uuid></domain>"""

HOSTILE = {
    'billion-laughs': BILLION_LAUGHS,
    'external-entity': EXTERNAL,
    'huge': b'<domain><name>' + b'a' * (2 * 1024 * 1024) + b'</name></domain>',
    'missing-uuid': b'<domain><name>x</name></domain>',
    'missing-name': b'<domain><uuid>u</uuid></domain>',
    'not-a-domain': b'<network><name>x</name><uuid>u</uuid></network>',
    'garbage': b'\x00\xff<<<',
    'empty': b'',
}


def test_nova_flavour_extra_specs_classify():
    event = hook.build_event(['qemu', 'instance-0001', 'started', 'begin', '-'],
                             NOVA_XML)
    assert event['vm_class'] == 'latency-critical'
    assert event['slo_ms'] == 35.0
    assert event['flavor'] == 'cassandra.large'
    assert event['uuid'] == '629b29b9-b0fb-4766-b27d-f4a686d5cbda'
    assert event['vcpus'] == 4 and event['id'] == '7'


def test_elastman_element_wins_and_default_is_best_effort():
    xml = (b"<domain><name>a</name><uuid>u</uuid><metadata>"
           b"<e:vm xmlns:e='http://openstack.org/xmlns/elastman/hostagent/1.0'"
           b" class='latency-critical' slo_ms='12'/></metadata></domain>")
    ev = hook.build_event(['q', 'a', 'prepare', 'begin', '-'], xml)
    assert (ev['vm_class'], ev['slo_ms']) == ('latency-critical', 12.0)
    plain = hook.build_event(['q', 'a', 'prepare', 'begin', '-'],
                             b'<domain><name>a</name><uuid>u</uuid></domain>')
    assert plain['vm_class'] == 'best-effort' and plain['slo_ms'] is None
    bad = xml.replace(b'latency-critical', b'vip').replace(b"'12'", b"'-1'")
    ev = hook.build_event(['q', 'a', 'start', 'begin', '-'], bad)
    assert (ev['vm_class'], ev['slo_ms']) == ('best-effort', None)


@pytest.mark.parametrize('name', sorted(HOSTILE))
def test_hostile_xml_rejected(name):
    with pytest.raises(hook.HostileXML):
        hook.build_event(['q', 'x', 'start', 'begin', '-'], HOSTILE[name])


def test_stdlib_fallback_refuses_dtd():
    with pytest.raises(hook.HostileXML):
        hook._parse_stdlib(BILLION_LAUGHS)
    root = hook._parse_stdlib(NOVA_XML)
    assert root.tag == 'domain'
    assert hook._classification(root)[:2] == ('latency-critical', 35.0)


#: Seconds a hook process may take before it counts as hung: a hang guard
#: (an expanded billion-laughs document never ends), not a speed target,
#: so it is far above what a loaded machine needs to start Python.
HUNG_S = 120


def _run_hook(tmp_path, xml, args=('vm', 'start', 'begin', '-')):
    env = dict(os.environ,
               ELASTMAN_HOSTAGENT_SOCKET=str(tmp_path / 'hook.sock'))
    return subprocess.run([sys.executable, HOOK, *args], input=xml, env=env,
                          capture_output=True, timeout=HUNG_S)


@pytest.mark.parametrize('name', ['billion-laughs', 'huge', 'missing-uuid'])
def test_hook_process_exits_zero_on_hostile_xml(tmp_path, name):
    proc = _run_hook(tmp_path, HOSTILE[name])
    assert proc.returncode == 0 and proc.stdout == b''
    log = (tmp_path / 'hook.log').read_text()
    assert 'rejected domain XML' in log


def test_hook_process_agent_down_exits_zero_and_logs(tmp_path):
    proc = _run_hook(tmp_path, NOVA_XML)
    assert proc.returncode == 0 and proc.stdout == b''
    assert 'agent unreachable' in (tmp_path / 'hook.log').read_text()


def test_hook_process_delivers_datagram(tmp_path):
    path = str(tmp_path / 'hook.sock')
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    srv.bind(path)
    srv.settimeout(5)
    try:
        proc = _run_hook(tmp_path, NOVA_XML,
                         ('instance-0001', 'started', 'begin', '-'))
        event = json.loads(srv.recv(65536))
    finally:
        srv.close()
    assert proc.returncode == 0
    assert event['op'] == 'started' and event['vm_class'] == 'latency-critical'


def test_send_does_not_block_on_full_socket(tmp_path):
    path = str(tmp_path / 's')
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    srv.bind(path)
    raised = []

    def fill() -> None:
        try:
            for _ in range(100000):  # nobody reads: the queue fills up
                hook.send({'x': 'y' * 1000}, path)
        except OSError as exc:
            raised.append(exc)

    try:
        # a send that blocked would never return: the thread would stay
        # alive past the hang guard instead of ending with the error
        sender = threading.Thread(target=fill, daemon=True)
        sender.start()
        sender.join(HUNG_S)
        assert not sender.is_alive(), 'hook.send blocked on a full socket'
        assert raised, 'a full socket never refused a datagram'
    finally:
        srv.close()


def test_hookinstall_renders_socket_and_installs(tmp_path):
    dest = tmp_path / 'hooks' / 'qemu'
    hookinstall.install('/run/x/agent.sock', str(dest), reload_libvirtd=False)
    text = dest.read_text()
    assert "SOCKET_PATH = '/run/x/agent.sock'" in text
    assert os.access(dest, os.X_OK)
    # a foreign qemu hook is kept: ours goes to qemu.d
    (tmp_path / 'other').mkdir()
    (tmp_path / 'other' / 'qemu').write_text('#!/bin/sh\nexit 0\n')
    assert hookinstall.default_dest(str(tmp_path / 'other')).endswith(
        'qemu.d/elastman')
    assert hookinstall.default_dest(str(tmp_path / 'hooks')).endswith('qemu')


@pytest.mark.parametrize('value,expected', [
    ('10.0.0.5:7199', '10.0.0.5:7199'), ('cass-1.local:7199', 'cass-1.local:7199'),
    ('[fd00::5]:7199', '[fd00::5]:7199'), ('10.0.0.5', None),
    ('10.0.0.5:0', None), ('10.0.0.5:99999', None), ('$(reboot):7199', None),
    ('a b:7199', None)])
def test_jmx_endpoint_from_the_elastman_element(value, expected):
    xml = ("<domain><name>a</name><uuid>u</uuid><metadata>"
           "<e:vm xmlns:e='http://openstack.org/xmlns/elastman/hostagent/1.0'"
           " class='latency-critical' jmx='%s'/></metadata></domain>" % value)
    ev = hook.build_event(['q', 'a', 'started', 'begin', '-'], xml.encode())
    assert ev['jmx'] == expected
    parsed = domains.HookEvent.from_json(json.dumps(dict(ev, v=1)).encode())
    assert parsed.jmx == expected
