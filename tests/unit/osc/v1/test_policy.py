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
"""openstack elastman policy set."""
from unittest import mock

from osc_lib import exceptions
import pytest

from elastman.osc.v1 import policy
from tests.unit.osc.v1 import fakes


def _client(current):
    client = mock.Mock()
    client.find_cluster.return_value = fakes.cluster_doc(current)
    client.get_policy.return_value = dict(current)
    client.set_policy.side_effect = lambda cluster_id, doc: doc
    return client


def test_set_takes_any_field_as_json_and_keeps_the_others():
    client = _client({'slo_threshold_ms': 35.0, 'headroom': 0.2})
    got = fakes.run_json(policy.SetPolicy, client, 'orders', '--max-size', '9',
                         '--set', 'headroom=0.3', '--set', 'guard=false',
                         '--set', 'extrapolation=trust',
                         '--set', 'flavor_costs={"m1.small": 1.5}')
    sent = client.set_policy.call_args[0][1]
    assert sent == {'slo_threshold_ms': 35.0, 'headroom': 0.3, 'max_size': 9,
                    'guard': False, 'extrapolation': 'trust',
                    'flavor_costs': {'m1.small': 1.5}}
    assert got['headroom'] == 0.3 and got['guard'] is False


@pytest.mark.parametrize('bad', ['headroom', '=0.3', 'headroom='])
def test_set_without_a_value_is_refused_before_the_api(bad):
    client = _client({})
    with pytest.raises(exceptions.CommandError, match='expected <field>=<value>'):
        fakes.run(policy.SetPolicy, client, 'orders', '--set', bad)
    client.set_policy.assert_not_called()
