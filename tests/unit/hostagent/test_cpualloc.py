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
"""Adaptive CPU allocation (Guo's thesis)."""
from __future__ import annotations

import random

import pytest

from elastman.hostagent import cpualloc
from elastman.hostagent import placement


def test_table_4_2_defaults():
    t = cpualloc.TABLE_4_2
    assert (t['interval_s'], t['greedy_threshold'], t['demand_threshold'],
            t['search_threshold']) == (1.0, -0.01, 0.5, 0.04)
    assert (t['fuzzy_gdy'], t['fuzzy_gdu'], t['fuzzy_gdc']) == (12, 1, 1)
    assert (t['corrector_cores'], t['corrector_window'],
            t['corrector_threshold']) == (2, 3, 0.1)


def test_hill_climbing_follows_the_change_that_helped():
    assert cpualloc.hill_climbing(0.1, +1, 0.04) == 1
    assert cpualloc.hill_climbing(-0.1, +1, 0.04) == -1
    assert cpualloc.hill_climbing(0.1, -1, 0.04) == -1
    assert cpualloc.hill_climbing(0.01, +1, 0.04) == 0


def test_fuzzy_reproduces_the_thesis_example():
    # one more core, UIPT +17.5%, g_dy = 10: 0.25 "increase", 0.75
    # "increase_large" -> 1.75 -> two more cores
    assert cpualloc.fuzzy(0.175, 1, gdy=10) == 2
    assert cpualloc.fuzzy(-0.3, 1, gdy=12) == -2
    assert cpualloc.fuzzy(0.05, -1, gdy=12) == -1


def test_weighted_max_min_is_algorithm_5():
    alloc = cpualloc.weighted_max_min(16, {'a': 20, 'b': 2, 'c': 20},
                                      {'a': 3, 'b': 1, 'c': 1})
    assert alloc['b'] == pytest.approx(2)
    assert alloc['a'] == pytest.approx(10.5) and alloc['c'] == pytest.approx(3.5)
    assert sum(alloc.values()) == pytest.approx(16)


def test_priority_with_floors():
    a = cpualloc.allocate(16, {'lc': 14}, {'be1': 8, 'be2': 8},
                          floors={'lc': 1, 'be1': 0.5, 'be2': 0.5})
    assert a.cores['lc'] == pytest.approx(14)
    assert a.cores['be1'] == pytest.approx(1) == a.cores['be2']
    a = cpualloc.allocate(16, {'lc': 20}, {'be': 8}, floors={'be': 0.5})
    assert a.cores['be'] == pytest.approx(0.5)       # the guarantee holds


def test_uipt_hill_climbing_finds_the_knee_of_a_concave_curve():
    """TPC-E-like: UIPT grows to 7 cores, then falls slightly."""
    rng = random.Random(3)

    def uipt(cores):
        return (min(cores, 7) - 0.05 * max(0, cores - 7)) * \
            (1 + rng.gauss(0, 0.01))
    for start in (2.0, 14.0):
        tenant = cpualloc.UiptTenant(start, min_cores=1, max_cores=16,
                                     rng=random.Random(1))
        cores, seen = start, []
        for _ in range(120):
            cores = tenant.update(cores, uipt(cores))
            seen.append(cores)
        assert 5.0 <= sum(seen[-60:]) / 60 <= 9.5, start


def test_uipt_corrector_runs_every_window(monkeypatch):
    """The multi-interval corrector compares the last two windows at the
    end of every window from the second on, not only once.
    """
    calls = []
    real = cpualloc.hill_climbing

    def spy(dy, du, threshold):
        calls.append(threshold)
        return real(dy, du, threshold)
    monkeypatch.setattr(cpualloc, 'hill_climbing', spy)
    tenant = cpualloc.UiptTenant(4.0, min_cores=1, max_cores=16,
                                 params={'corrector_threshold': 0.123},
                                 rng=random.Random(1))
    ran_at = []
    cores = 4.0
    for interval in range(1, 16):
        before = calls.count(0.123)
        cores = tenant.update(cores, 1.0 + 0.5 * interval)
        if calls.count(0.123) > before:
            ran_at.append(interval)
    w = cpualloc.TABLE_4_2['corrector_window']
    assert ran_at == list(range(2 * w, 16, w))       # 6, 9, 12, 15
    assert len(tenant.history) == 2 * w


def test_slo_tenant_asks_fast_and_gives_back_slowly():
    t = cpualloc.SloTenant(4, floor=1, ceiling=16)
    assert t.update('red', 2) == 6
    assert t.update('grey', 2) == 6
    for _ in range(2):
        assert t.update('green', 2) == 6
    assert t.update('green', 2) == 5          # 3 green intervals, room
    for _ in range(3):
        t.update('green', 4.9)                 # no room below 4.9 cores
    assert t.request == 5


def test_slo_tenant_in_danger_takes_back_what_it_lent_at_once():
    """A VM shrunk below its size gets its size back in one step (not 2
    cores at a time) and keeps a corrector step idle when it gives back.
    """
    t = cpualloc.SloTenant(12, floor=1, ceiling=16)
    step = cpualloc.TABLE_4_2['corrector_cores']
    for _ in range(3 * 8):
        t.update('green', 3.0)
    assert t.request == pytest.approx(3.0 + 1.0 + step)   # not below 6
    assert t.danger() == 12                  # the guarantee, at once
    assert t.update('red', 12) == 12 + step  # beyond it, the corrector's
    assert cpualloc.SloTenant(15, floor=1, ceiling=16).danger() == 16


def test_slo_tenant_keeps_a_corrector_step_above_its_recent_peak():
    """A bursty VM gives a core back only when a corrector step stays idle
    above the most it used over the corrector's span (two windows), not
    only above its last interval's use.
    """
    t = cpualloc.SloTenant(12, floor=1, ceiling=16)
    span = 2 * cpualloc.TABLE_4_2['corrector_window']
    t.update('green', 9.5)                   # a burst
    for _ in range(span - 1):
        t.update('green', 7.0)               # room above 7, not above 9.5
    assert t.peak_used() == 9.5
    assert t.request == 12
    t.update('green', 7.0)                   # the burst left the span
    assert t.peak_used() == 7.0
    assert t.request == 11
    # a burst in a red interval counts too
    t = cpualloc.SloTenant(12, floor=1, ceiling=16)
    t.update('red', 11.0)
    for _ in range(span - 1):
        t.update('green', 5.0)
    assert t.request == 12 + cpualloc.TABLE_4_2['corrector_cores']
    t.update('green', 5.0)
    assert t.request == 13


def test_slo_tenant_never_asks_for_more_than_its_vcpus():
    """A VM of 1 vCPU in danger asks for that core, not the node's 16."""
    t = cpualloc.SloTenant(1, floor=1, ceiling=1)
    assert t.danger() == 1
    assert t.update('red', 1.0) == 1
    for _ in range(12):
        assert t.update('green', 0.1) == 1    # never below its floor


def test_small_slo_tenant_lends_in_steps_of_its_size():
    """A VM of 4 vCPUs: its corrector step and what it gives back are an
    eighth of its size (Table 4.2's 2 cores are for 16 and more), so an
    idle VM lends down to its 1-core floor, and danger takes it all back.
    """
    t = cpualloc.SloTenant(4, floor=1, ceiling=4)
    assert t.step == pytest.approx(4 * cpualloc.STEP_SHARE) == 0.5
    seen = [t.update('green', 0.3) for _ in range(3 * 8)]
    assert seen[2] == 3.5                     # 3 green intervals, room
    assert seen[-1] == 1.0
    assert t.danger() == 4                    # the guarantee, at once
    assert t.update('red', 4.0) == 4          # no further than its vCPUs
    # a VM of 16 vCPUs keeps Table 4.2's step
    assert cpualloc.SloTenant(12, floor=1, ceiling=16).step == \
        cpualloc.TABLE_4_2['corrector_cores']


def _host_vms(lc_vcpus: int, lc_used: float, be_cores: float,
              be1_vcpus: int) -> dict[str, dict]:
    """An LC VM and a BE VM on node 0, a BE VM on node 1 (of 8 cores
    each), as HostAllocator.interval reads them: each VM's perf is its use.
    """
    def vm(vm_class: str, node: int, vcpus: int, cores: float,
           used: float) -> dict:
        return {'class': vm_class, 'node': node, 'vcpus': vcpus,
                'cores': cores, 'used': used, 'perf': used}
    return {'lc': vm('latency-critical', 0, lc_vcpus, 8, lc_used),
            'be0': vm('best-effort', 0, 8, be_cores, be_cores),
            'be1': vm('best-effort', 1, be1_vcpus, be_cores, be_cores)}


def test_host_allocator_caps_best_effort_vms_per_node():
    alloc = cpualloc.HostAllocator({0: 8, 1: 8})
    vms = _host_vms(lc_vcpus=6, lc_used=5.5, be_cores=2, be1_vcpus=4)
    caps = alloc.interval(vms, {'lc': 'red'})
    assert caps['be0'] == pytest.approx(2.0)  # red LC: its 6 vCPUs of 8
    vms = _host_vms(lc_vcpus=8, lc_used=5.5, be_cores=2, be1_vcpus=4)
    caps = cpualloc.HostAllocator({0: 8, 1: 8}).interval(vms, {'lc': 'red'})
    assert caps['be0'] == pytest.approx(0.1)  # red LC: 8 cores of 8
    assert 1.0 <= caps['be1'] <= 4.0          # nobody on node 1 needs more
    assert 'lc' not in caps                   # LC VMs are never capped


def test_danger_between_intervals_takes_cores_from_that_node_only():
    alloc = cpualloc.HostAllocator({0: 8, 1: 8})
    vms = _host_vms(lc_vcpus=4, lc_used=3.5, be_cores=4, be1_vcpus=8)
    caps = alloc.interval(vms, {'lc': 'grey'})
    assert caps['be0'] == pytest.approx(4.0)          # LC asks 4 of 8
    alloc.lc['lc'].request = 2.0                      # it lent 2 cores
    alloc.be['be0'].request = 8.0
    hot = alloc.danger(['lc'])
    assert alloc.lc['lc'].request == 4.0              # its guarantee back
    assert hot == {'be0': pytest.approx(4.0)}         # node 1 untouched
    assert alloc.danger(['nobody']) == {}
    alloc.forget('lc')
    assert alloc.danger(['lc']) == {}


def test_domain_ops_compose_the_cap_and_the_ladder_share():
    ops = placement.DomainOps(lambda: None, None)
    ops.quotas['vm'] = 50000
    assert ops.quota_of('vm') == 50000
    ops.shares['vm'] = 0.3
    assert ops.quota_of('vm') == 15000
    ops.caps['vm'] = 80000
    assert ops.quota_of('vm') == 24000
    ops.quotas['free'] = -1
    assert ops.quota_of('free') == -1
    ops.shares['free'] = 0.5
    assert ops.quota_of('free') == 50000
    assert ops.cap_cores('free', 4, 8) == 4.0
    assert ops.cap_cores('vm', 4, 8) == pytest.approx(3.2)
