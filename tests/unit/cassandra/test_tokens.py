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
"""Tokens of nodes that bootstrap together."""
import pytest

from elastman.cassandra import tokens

RING_OUTPUT = """
Datacenter: datacenter1
==========
Address         Rack        Status State   Load            Owns                Token
                                                                               7305343932427315723
127.0.84.1      rack1       Up     Normal  20.65 MiB       48.80%              -5833381221109376878
127.0.84.2      rack1       Up     Joining 104.1 KiB       51.20%              55669
127.0.84.1      rack1       Up     Normal  20.65 MiB       48.80%              7305343932427315723

  Warning: "nodetool ring" is used to output all the tokens of a node.
"""


def test_parse_ring_takes_every_node_s_tokens():
    assert tokens.parse_ring(RING_OUTPUT) == [
        -5833381221109376878, 55669, 7305343932427315723]


def test_an_empty_ring_is_split_evenly():
    (given,) = tokens.allocate([], 1, 4)
    assert given == [-2 ** 63, -2 ** 62, 0, 2 ** 62]


def test_each_token_halves_the_largest_range():
    ring = [-2 ** 63, 0]                        # two halves
    first, second = tokens.allocate(ring, 2, 2)
    assert first == [-2 ** 62, 2 ** 62]           # each half halved
    # then four quarters: the next node halves two of them
    assert second == [-3 * 2 ** 61, -2 ** 61]


def test_nodes_get_distinct_tokens_in_range_and_share_the_ring_fairly():
    ring = [(-2 ** 63) + 7 + i * (2 ** 64 // 48) for i in range(48)]
    given = tokens.allocate(ring, 3, 16)
    flat = [t for node in given for t in node]
    assert len(set(flat)) == 48 and not set(flat) & set(ring)
    assert all(-2 ** 63 <= t < 2 ** 63 for t in flat)
    # on an even ring of 48 ranges every new token halves one of them
    everything = sorted(ring + flat)
    gaps = {(b - a) for a, b in zip(everything, everything[1:])}
    assert max(gaps) - min(gaps) <= 64      # integer halving


def test_the_wrapping_range_is_split_too():
    # one token: its range is the whole ring, wrapping round
    (given,) = tokens.allocate([2 ** 62], 1, 1)
    assert given == [-2 ** 62]


@pytest.mark.parametrize('nodes,num', [(0, 16), (1, 0)])
def test_bad_counts_are_refused(nodes, num):
    with pytest.raises(ValueError):
        tokens.allocate([0], nodes, num)
