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
"""Shared set-up of the host agent's unit tests."""
from __future__ import annotations

from oslo_config import cfg

from elastman.conf import hostagent as hostagent_conf


def agent_conf(tmp_path, **overrides) -> cfg.ConfigOpts:
    """A private ConfigOpts with [hostagent] (state and resctrl under
    ``tmp_path``) and ``overrides`` of that group.
    """
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
