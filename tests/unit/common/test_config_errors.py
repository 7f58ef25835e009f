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
"""Bad configuration ends the process with one clear line and exit 2."""
import subprocess
import sys

import pytest

from tests.functional import services


def _run(tmp_path, module, **groups):
    groups.setdefault('DEFAULT', {})['state_path'] = str(tmp_path)
    config = services.write_config(str(tmp_path / 'e.conf'), **groups)
    return subprocess.run([sys.executable, '-m', module, '--config-file',
                           config], capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize('groups,needle', [
    ({'DEFAULT': {'transport_url': 'carrierpigeon://somewhere/'}},
     "unknown transport 'carrierpigeon'"),
    ({'store': {'port': 'not-a-port'}}, 'port'),
    ({'store': {'keyspace': 'bad-name!'}}, 'keyspace'),
    ({'api': {'auth_strategy': 'magic'}}, 'auth_strategy'),
    ({'monitor': {'sampling_interval': '0'}}, 'sampling_interval'),
])
def test_invalid_configuration(tmp_path, groups, needle):
    out = _run(tmp_path, 'elastman.cmd.all', **groups)
    assert out.returncode == 2, out.stderr
    assert 'configuration error' in out.stderr
    assert needle in out.stderr
    assert 'Traceback' not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_unknown_config_file_is_reported(tmp_path):
    out = subprocess.run([sys.executable, '-m', 'elastman.cmd.monitor',
                          '--config-file', str(tmp_path / 'missing.conf')],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert 'missing.conf' in out.stderr
