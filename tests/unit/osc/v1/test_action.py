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
"""openstack elastman action list|show."""
from unittest import mock

from elastman.osc.v1 import action
from tests.unit.osc.v1 import fakes

ACTION = {'id': '6d0f6a1e-0d5b-4f7e-8a47-1f1c3e2b9a10',
          'cluster_id': fakes.CLUSTER_ID, 'kind': 'scale_in',
          'state': 'SUCCEEDED', 'step': 'done',
          'params': {'nodes': ['node-c'], 'decided_at': 1795515300.0},
          'result': {'removed': ['node-c']}, 'reason': None,
          'created_at': '2026-11-24T10:15:01.000Z',
          'updated_at': '2026-11-24T10:19:30.000Z'}


def _client():
    client = mock.Mock()
    client.find_cluster.return_value = fakes.cluster_doc()
    client.list_actions.return_value = [ACTION]
    client.get_action.return_value = ACTION
    return client


def test_list_shows_the_change_in_short_columns():
    out = fakes.run(action.ListAction, _client(), 'orders')
    assert out.splitlines()[1].split() == [
        '|', 'id', '|', 'kind', '|', 'state', '|', 'change', '|', 'reason',
        '|', 'created_at', '|']
    assert 'remove node-c' in out and '2026-11-24 10:15:01' in out
    assert max(len(line) for line in out.splitlines()) <= 120
    assert fakes.run_json(action.ListAction, _client(), 'orders') == [ACTION]


def test_show_and_json():
    out = fakes.run(action.ShowAction, _client(), 'orders', ACTION['id'])
    assert '{"removed": ["node-c"]}' in out
    assert fakes.run_json(action.ShowAction, _client(), 'orders',
                          ACTION['id']) == ACTION
