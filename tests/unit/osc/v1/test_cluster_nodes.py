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
"""How `openstack elastman cluster show` lists a cluster's nodes."""
from elastman.osc.v1 import cluster


def test_cluster_show_says_why_a_node_is_not_up():
    assert cluster.node_line({'id': 'n1', 'address': '10.0.0.1',
                              'state': 'UN'}) == 'n1 10.0.0.1 (UN)'
    line = cluster.node_line({
        'id': 'n3', 'address': '10.0.0.3', 'state': 'DEAD',
        'state_changed_at': '2026-11-24T04:00:00.000Z',
        'state_reason': 'missed its last 2 samples; DN at 10.0.0.1'})
    assert line == ('n3 10.0.0.3 (DEAD since 2026-11-24T04:00:00.000Z: '
                    'missed its last 2 samples; DN at 10.0.0.1)')
