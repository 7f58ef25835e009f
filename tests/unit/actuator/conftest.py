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
"""Fixtures of the actuator unit tests."""
from oslo_config import cfg
import pytest

import elastman.conf.actuator
import elastman.conf.monitor
import elastman.conf.trainer


@pytest.fixture
def conf():
    """A private ConfigOpts with the [actuator] options, the [trainer]
    SLO the controller falls back on and the [monitor] interval its rounds
    stand for.
    """
    conf = cfg.ConfigOpts()
    elastman.conf.actuator.register_opts(conf)
    elastman.conf.monitor.register_opts(conf)
    elastman.conf.trainer.register_opts(conf)
    conf([], default_config_files=[])
    return conf
