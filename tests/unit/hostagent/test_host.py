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
"""Topology, resctrl, fs guard, BWAP, page migration, domains, placement."""
from __future__ import annotations

import json
import os
import socket
import time

import pytest

from elastman.hostagent import bwap
from elastman.hostagent import domains
from elastman.hostagent import fsguard
from elastman.hostagent import pagemigration
from elastman.hostagent import placement
from elastman.hostagent import resctrl
from elastman.hostagent import topology


@pytest.fixture
def fake_sys(tmp_path):
    root = tmp_path / 'sys'
    for nid, cpus in ((0, '0-3'), (1, '4-7')):
        node = root / 'devices/system/node' / ('node%d' % nid)
        node.mkdir(parents=True)
        (node / 'cpulist').write_text(cpus + '\n')
        (node / 'meminfo').write_text('Node %d MemTotal:  8388608 kB\n' % nid)
        (node / 'distance').write_text('10 21\n' if nid == 0 else '21 10\n')
    for cpu in range(8):
        t = root / 'devices/system/cpu' / ('cpu%d' % cpu) / 'topology'
        t.mkdir(parents=True)
        (t / 'physical_package_id').write_text('%d\n' % (cpu // 4))
    return str(root)


@pytest.fixture
def fake_resctrl(tmp_path):
    root = tmp_path / 'resctrl'
    (root / 'info/MB').mkdir(parents=True)
    (root / 'info/MB/min_bandwidth').write_text('10\n')
    (root / 'info/MB/bandwidth_gran').write_text('10\n')
    (root / 'info/MB/num_closids').write_text('8\n')
    (root / 'info/L3_MON').mkdir(parents=True)
    (root / 'info/L3_MON/mon_features').write_text(
        'llc_occupancy\nmbm_total_bytes\nmbm_local_bytes\n')
    (root / 'schemata').write_text('    L3:0=7ff;1=7ff\n    MB:0=100;1=100\n')
    return str(root)


def test_topology_from_sysfs_and_resctrl(fake_sys, fake_resctrl):
    topo = topology.discover(fake_sys, fake_resctrl)
    assert topo.node_ids == [0, 1]
    assert topo.nodes[1].cpus == [4, 5, 6, 7]
    assert topo.nodes[1].socket == 1 and topo.nodes[0].memory_kib == 8388608
    assert topo.resctrl.mba and topo.resctrl.mbm_total
    assert topo.resctrl.mba_min == 10 and topo.resctrl.num_closids == 8
    assert topo.node_of_cpu(5) == 1


def test_topology_without_resctrl(tmp_path, fake_sys):
    topo = topology.discover(fake_sys, str(tmp_path / 'none'))
    assert not topo.resctrl.mounted and not topo.resctrl.mba


def test_cpulist_round_trip():
    assert topology.parse_cpulist('0-2,5,7-8') == [0, 1, 2, 5, 7, 8]
    assert topology.format_cpulist([8, 0, 1, 2, 5, 7]) == '0-2,5,7-8'


def test_fsguard_refuses_outside_roots(tmp_path):
    guard = fsguard.FsGuard(str(tmp_path / 'state'))
    guard.makedirs(str(tmp_path / 'state'))
    guard.write_atomic(str(tmp_path / 'state' / 'x.json'), '{}')
    for bad in (str(tmp_path / 'elsewhere'), '/etc/passwd',
                str(tmp_path / 'state' / '..' / 'escape'),
                str(tmp_path / 'state-sibling')):
        with pytest.raises(fsguard.OutsideAllowedRoots):
            guard.write_atomic(bad, 'x')
    os.symlink('/tmp', str(tmp_path / 'state' / 'link'))
    with pytest.raises(fsguard.OutsideAllowedRoots):
        guard.write(str(tmp_path / 'state' / 'link' / 'f'), 'x')


def test_resctrl_group_mba_and_mbm(tmp_path, fake_resctrl):
    guard = fsguard.FsGuard(fake_resctrl)
    mgr = resctrl.ResctrlManager(fake_resctrl, guard)
    path = mgr.ensure_group('vm-1')
    assert path.startswith(fake_resctrl) and os.path.isdir(path)
    assert mgr.set_mba('vm-1', 33) == 40  # rounded up to the granularity
    with open(os.path.join(path, 'schemata')) as f:
        assert f.read() == 'MB:0=40;1=40\n'
    assert mgr.clamp(1) == 10
    for dom, (total, local) in ((0, (1000, 800)), (1, (500, 500))):
        d = os.path.join(path, 'mon_data', 'mon_L3_%02d' % dom)
        os.makedirs(d)
        open(os.path.join(d, 'mbm_total_bytes'), 'w').write(str(total))
        open(os.path.join(d, 'mbm_local_bytes'), 'w').write(str(local))
    assert mgr.read_mbm('vm-1') == {0: 800, 1: 700}
    # the group name cannot escape the resctrl root
    assert mgr.group_path('../../etc').startswith(fake_resctrl + '/elastman-')


def test_bwap_weights_and_moves():
    bw = {0: {0: 50.0, 1: 25.0}, 1: {0: 25.0, 1: 50.0}}
    w = bwap.canonical_weights(bw, [1])
    assert w[1] == pytest.approx(2 / 3) and w[0] == pytest.approx(1 / 3)
    assert bwap.canonical_weights(bw, [0, 1]) == {0: 0.5, 1: 0.5}
    local = bwap.with_dwp(w, [1], 1.0)
    assert local[1] == pytest.approx(1.0) and local[0] == pytest.approx(0.0)
    moves = bwap.plan_moves({0: 6.0, 1: 10.0}, {0: 2.0, 1: 14.0}, 3.0)
    assert moves == [(0, 1, 3.0)]


def test_page_migration_on_own_process():
    pid = os.getpid()
    buf = bytearray(4 * 1024 * 1024)  # touch some memory
    assert buf is not None
    per_node = pagemigration.numa_maps_bytes(pid)
    assert per_node.get(0, 0) > 0
    addrs = pagemigration.pages_on_node(pid, 0, 64)
    assert len(addrs) == 64
    assert pagemigration.move_pages(pid, addrs[:4], None) == [0] * 4
    # one node here: a bounded batch to the same node moves at most nbytes
    moved = pagemigration.move_batch(pid, 0, 0, 16 * pagemigration.PAGE_SIZE)
    assert 0 < moved <= 16 * pagemigration.PAGE_SIZE


def test_hook_event_validation():
    good = {'v': 1, 'op': 'started', 'subop': 'begin', 'name': 'a',
            'uuid': 'u', 'vm_class': 'latency-critical', 'slo_ms': 35}
    ev = domains.HookEvent.from_json(json.dumps(good).encode())
    assert ev.vm_class == 'latency-critical' and ev.slo_ms == 35.0
    for bad in ({**good, 'v': 2}, {**good, 'vm_class': 'vip'},
                {k: v for k, v in good.items() if k != 'uuid'}, [1, 2]):
        with pytest.raises(ValueError):
            domains.HookEvent.from_json(json.dumps(bad).encode())
    with pytest.raises(ValueError):
        domains.HookEvent.from_json(b'\xff\xfe')
    # an SLO that is not one is dropped, as classify_xml drops it
    for slo in (-5, 0, True, 'fast', 1e7):
        event = domains.HookEvent.from_json(json.dumps({**good, 'slo_ms': slo}).encode())
        assert event.slo_ms is None
    assert domains.valid_slo(float('nan')) is None
    assert domains.valid_slo(float('inf')) is None


def test_registry_lifecycle_and_sync():
    seen = []
    reg = domains.DomainRegistry(on_change=lambda d, op: seen.append(op))
    ev = domains.HookEvent('started', 'begin', 'a', 'u1',
                           vm_class='latency-critical')
    reg.handle_event(ev)
    assert reg.running('latency-critical')[0].uuid == 'u1'
    reg.handle_event(domains.HookEvent('stopped', 'end', 'a', 'u1'))
    assert not reg.running()
    reg.handle_event(domains.HookEvent('release', 'end', 'a', 'u1'))
    assert reg.get('u1') is None
    new = reg.sync([domains.Domain('u2', 'b', running=True)])
    assert [d.uuid for d in new] == ['u2'] and seen[-1] == 'reconnect'
    assert reg.sync([domains.Domain('u2', 'b', running=True)]) == []


def test_listener_receives_datagrams(tmp_path):
    got = []
    path = str(tmp_path / 'state' / 'hook.sock')
    lst = domains.HookListener(path, got.append)
    lst.start()
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.sendto(b'not json', path)
        s.sendto(json.dumps({'v': 1, 'op': 'started', 'subop': 'begin',
                             'name': 'a', 'uuid': 'u'}).encode(), path)
        s.close()
        end = time.monotonic() + 5
        while not got and time.monotonic() < end:
            time.sleep(0.02)
    finally:
        lst.stop()
    assert got[0].uuid == 'u' and lst.rejected == 1
    assert not os.path.exists(path)


def test_placement_decisions(fake_sys):
    topo = topology.discover(fake_sys, '/nonexistent')
    lc = domains.Domain('u', 'lc', vm_class='latency-critical')
    d = placement.decide(lc, topo, {0: 1})
    assert d.node == 1 and d.cpus == [4, 5, 6, 7] and d.memory_nodes == [1]
    assert d.emulator_cpus == d.cpus
    be = domains.Domain('v', 'be')
    d = placement.decide(be, topo, {0: 1}, be_quota=30000)
    assert d.memory_nodes == [0, 1] and d.vcpu_quota == 30000
    assert d.node == 1 and d.cpus == [4, 5, 6, 7] and d.mba == 100


def test_classify_xml_matches_hook_convention():
    from defusedxml import ElementTree as DET
    root = DET.fromstring(
        '<domain><metadata><nova:instance xmlns:nova="http://openstack.org/'
        'xmlns/libvirt/nova/1.0"><nova:flavor name="f"><nova:extraSpecs>'
        '<nova:extraSpec name="elastman:class">latency-critical'
        '</nova:extraSpec></nova:extraSpecs></nova:flavor></nova:instance>'
        '</metadata></domain>')
    assert domains.classify_xml(root) == ('latency-critical', None, 'f')
