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
"""How the executor resumes a decommission a crashed actuator left behind,
and where a test's fault hook may fire.
"""
import pytest

from elastman.actuator import executor as executor_mod
from elastman.common import exception
from tests.unit import memstore


class FakeNodetool:
    """Records which operation the executor chose for a node in ``mode``."""

    def __init__(self, mode, fail=False):
        self.mode, self.fail, self.calls = mode, fail, []

    def netstats(self):
        if self.mode is None:
            raise exception.NodetoolError(command='netstats', node='n1',
                                          reason='connection refused')
        return {'mode': self.mode}

    def decommission(self, progress=None, timeout=None):
        self.calls.append('decommission')
        if self.fail:
            raise exception.NodetoolError(command='decommission', node='n1',
                                          reason='Node in LEAVING state')

    def wait_decommissioned(self, progress=None, timeout=None):
        self.calls.append('wait')


def _executor(conf, tool):
    store = memstore.MemStore()
    executor = executor_mod.ActionExecutor(conf, store, driver=None,
                                           nodetool_factory=lambda h, p: tool)
    return executor, store


NODE = {'node_id': 'n1', 'jmx_host': '127.0.0.1', 'jmx_port': 7199}


@pytest.mark.parametrize('mode,expected', [
    ('NORMAL', ['decommission']),
    ('DECOMMISSION_FAILED', ['decommission']),   # 5.0 resumes a failed one
    (None, ['decommission']),                    # let decommission say why
    ('LEAVING', ['wait']),                       # a dead actuator started it
    ('DECOMMISSIONED', []),                      # it finished meanwhile
])
def test_decommission_resumes_by_node_mode(conf, mode, expected):
    tool = FakeNodetool(mode)
    executor, store = _executor(conf, tool)
    executor._decommission_node({'cluster_id': 'c'}, NODE)
    assert tool.calls == expected
    assert store.nodes.rows == {}


def test_failed_decommission_puts_the_node_back(conf):
    tool = FakeNodetool('NORMAL', fail=True)
    executor, store = _executor(conf, tool)
    with pytest.raises(exception.NodetoolError, match='LEAVING state'):
        executor._decommission_node({'cluster_id': 'c'}, NODE)
    assert store.nodes.get('c', 'n1')['state'] == 'UN'


def test_checkpoint_hook_sees_every_checkpoint_name(conf):
    seen = []
    executor, _ = _executor(conf, FakeNodetool('NORMAL'))
    executor.checkpoint_hook = seen.append
    executor._checkpoint({'cluster_id': 'c', 'step': 'creating'},
                         'creating:server')
    assert seen == ['creating:server']
    with pytest.raises(AssertionError):
        executor._checkpoint({'cluster_id': 'c', 'step': 'x'}, 'halfway')
