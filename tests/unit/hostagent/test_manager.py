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
"""HostAgentManager without libvirt: state dir confinement and its RPC API."""
from __future__ import annotations

import pytest

from elastman.conf import hostagent as hostagent_conf
from elastman.hostagent import fsguard
from elastman.hostagent import manager
from tests.unit.hostagent import helpers


def test_socket_outside_state_dir_is_refused(tmp_path):
    conf = helpers.agent_conf(tmp_path, socket_path='/tmp/elsewhere.sock')
    with pytest.raises(fsguard.OutsideAllowedRoots):
        manager.HostAgentManager(conf)


def test_start_stop_without_libvirt(tmp_path):
    def no_libvirt(uri):
        raise RuntimeError('no libvirt here')

    agent = manager.HostAgentManager(helpers.agent_conf(tmp_path),
                                     libvirt_open=no_libvirt)
    agent.start()
    try:
        assert (tmp_path / 'state' / 'hook.sock').exists()
        agent.push_latency(None, 'vm', 12.0)
        assert agent.controller.cfg.mode == 'ladder'
        assert '0 domain(s)' in agent.describe()
        agent.report_interference()
    finally:
        agent.stop()
    assert sorted(p.name for p in (tmp_path / 'state').iterdir()) == []
    assert not (tmp_path / 'resctrl').exists()


def test_list_opts_has_the_new_options():
    (group, opts), = hostagent_conf.list_opts()
    names = {o.name for o in opts}
    assert {'poll_interval', 'window', 'socket_path', 'state_dir',
            'mba_min', 'mba_step', 'max_retries', 'migration_batch_mb',
            'yellow_threshold', 'green_threshold'} <= names
    assert all(o.help for o in opts)


class _Caps:
    """The DomainOps calls the allocator makes, recorded."""

    def __init__(self):
        self.set = []

    def cap_cores(self, vm, vcpus, node_cpus):
        return 4.0

    def set_cap(self, vm, cores, vcpus):
        self.set.append((vm, round(cores, 2), vcpus))


def test_a_red_lc_vm_gets_cores_between_allocation_intervals(tmp_path):
    from elastman.hostagent import cpualloc
    agent = manager.HostAgentManager(helpers.agent_conf(tmp_path))
    agent.allocator = cpualloc.HostAllocator({0: 8})
    agent.domain_ops = _Caps()
    vms = {'lc': {'class': 'latency-critical', 'node': 0, 'vcpus': 6,
                  'cores': 8, 'used': 2.5, 'perf': 2.5},
           'be': {'class': 'best-effort', 'node': 0, 'vcpus': 8,
                  'cores': 4, 'used': 4, 'perf': 4}}
    agent.allocator.interval(vms, {'lc': 'grey'})
    agent.allocator.lc['lc'].request = 3.0          # it lent 3 cores
    agent._vcpus = {'be': 8}
    agent.monitor.register('lc', 0, 35.0)
    assert agent.cpu_danger(1.0) == {}                # no samples: not ready
    for i in range(10):
        agent.monitor.add_sample('lc', 1.0 + i * 0.02, 50.0)   # red
    caps = agent.cpu_danger(1.2)
    assert caps == {'be': pytest.approx(2.0)}         # LC: its 6 of 8
    assert agent.domain_ops.set == [('be', 2.0, 8)]
    assert agent.cpu_danger(1.25) == {}               # within settle_time
    # the cap restarted BALM's window: the red samples before it are gone
    assert not agent.monitor.evaluate(1.3).ready


def test_allocate_cpu_protects_an_lc_vm_of_unknown_size(tmp_path, monkeypatch):
    """A domain whose size the hook did not report: an LC VM may use its
    whole node (its BE neighbour keeps the floor), not one core.
    """
    from elastman.hostagent import cpualloc
    from elastman.hostagent import domains
    from elastman.hostagent import topology
    agent = manager.HostAgentManager(helpers.agent_conf(tmp_path))
    agent.topology = topology.Topology(
        {0: topology.NumaNode(0, list(range(8)))}, topology.ResctrlInfo())
    agent.allocator = cpualloc.HostAllocator({0: 8})
    agent.platform = object()
    agent.domain_ops = _Caps()
    for vm, vm_class, vcpus in (('lc', domains.LATENCY_CRITICAL, None),
                                ('be', domains.BEST_EFFORT, 8)):
        agent.registry.handle_event(domains.HookEvent(
            op='started', subop='begin', name=vm, uuid=vm,
            vm_class=vm_class, vcpus=vcpus))
    agent._pids = {'lc': 1, 'be': 2}
    monkeypatch.setattr(agent, '_performance', lambda vm, pid: (1.0, 1.0))
    agent.allocate_cpu()
    assert agent.allocator.lc['lc'].ceiling == 8
    assert agent.allocator.lc['lc'].guarantee == 8
    assert agent.domain_ops.set == [('be', 0.1, 8)]
