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

from oslo_config import cfg
import pytest

from elastman.conf import hostagent as hostagent_conf
from elastman.hostagent import fsguard
from elastman.hostagent import manager


def _conf(tmp_path, **overrides):
    conf = cfg.ConfigOpts()
    conf.register_opt(cfg.StrOpt('host', default='h1'))
    # a fresh group: overrides live on the OptGroup, which CONF shares
    conf.register_opts(hostagent_conf.hostagent_opts, group='hostagent')
    conf([], project='elastman-test', default_config_files=[])
    conf.set_override('state_dir', str(tmp_path / 'state'), 'hostagent')
    conf.set_override('resctrl_root', str(tmp_path / 'resctrl'), 'hostagent')
    for k, v in overrides.items():
        conf.set_override(k, v, 'hostagent')
    return conf


def test_socket_outside_state_dir_is_refused(tmp_path):
    conf = _conf(tmp_path, socket_path='/tmp/elsewhere.sock')
    with pytest.raises(fsguard.OutsideAllowedRoots):
        manager.HostAgentManager(conf)


def test_start_stop_without_libvirt(tmp_path):
    def no_libvirt(uri):
        raise RuntimeError('no libvirt here')

    agent = manager.HostAgentManager(_conf(tmp_path),
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
