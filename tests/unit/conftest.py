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
"""Fixtures shared by the unit tests: the global configuration, parsed
with no files and a state_path of the test's own.
"""
import pytest

from elastman.common import config as em_config


@pytest.fixture
def conf(tmp_path):
    conf = em_config.CONF
    conf([], project='elastman', default_config_files=[])
    conf.set_override('state_path', str(tmp_path / 'state'))
    yield conf
    conf.clear_override('state_path')
