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
"""``name=value`` options."""
import pytest

from elastman.common import assignments


def test_values_are_json_or_the_bare_word():
    assert assignments.parse(['headroom=0.3', 'guard=false', ' extrapolation = trust ',
                              'flavor_costs={"m1": 2}', 'note=a=b']) == {
        'headroom': 0.3, 'guard': False, 'extrapolation': 'trust',
        'flavor_costs': {'m1': 2}, 'note': 'a=b'}
    assert assignments.parse([]) == {}


@pytest.mark.parametrize('bad', ['headroom', '=0.3', 'headroom=', ' = '])
def test_a_name_and_a_value_are_needed(bad):
    with pytest.raises(ValueError, match='expected <f>=<v>'):
        assignments.parse([bad], '<f>=<v>')
