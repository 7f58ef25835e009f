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
