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
"""Tokens for nodes that bootstrap together.

Cassandra's token allocation (``allocate_tokens_for_local_replication_factor``)
plans on the ring's normal tokens only. Two nodes that bootstrap at the same
time see the same ring and pick the same tokens, and the second exits with
``Bootstrap Token collision`` (``tools/bench_joins.py``). Nodes of a
concurrent join are therefore given their tokens (``initial_token``): each
of them bisects the largest ranges of the Murmur3 ring as it stands after
the tokens given before it.
"""
from __future__ import annotations

import heapq
import ipaddress
from typing import Iterable

MIN_TOKEN = -2 ** 63
RING = 2 ** 64


def parse_ring(output: str) -> list[int]:
    """Every token of ``nodetool ring``'s output (normal and joining
    nodes alike), sorted.
    """
    tokens = set()
    for line in output.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        try:
            ipaddress.ip_address(fields[0])
            tokens.add(int(fields[-1]))
        except ValueError:
            continue
    return sorted(tokens)


def _wrap(token: int) -> int:
    return (token - MIN_TOKEN) % RING + MIN_TOKEN


def allocate(ring: Iterable[int], nodes: int, num_tokens: int
             ) -> list[list[int]]:
    """``num_tokens`` new tokens for each of ``nodes`` new nodes: each
    token is the middle of the largest range of the ring as it is then
    (the ring's tokens and those allocated before it). An empty ring is
    split evenly.
    """
    if nodes < 1 or num_tokens < 1:
        raise ValueError('nodes and num_tokens must be at least 1')
    taken = sorted(set(int(t) for t in ring))
    mine = []
    if not taken:       # the first new token opens the ring
        taken, mine = [MIN_TOKEN], [MIN_TOKEN]
    # max-heap of ranges (length, start): a range runs from a token to the
    # next one, the last wrapping round to the first
    heap = []
    for i, start in enumerate(taken):
        end = taken[(i + 1) % len(taken)]
        length = (end - start) % RING or RING
        heap.append((-length, start))
    heapq.heapify(heap)
    out = []
    for _ in range(nodes):
        while len(mine) < num_tokens:
            length, start = heapq.heappop(heap)
            length = -length
            if length < 2:
                raise ValueError('the ring has no range left to split')
            half = length // 2
            token = _wrap(start + half)
            mine.append(token)
            heapq.heappush(heap, (-half, start))
            heapq.heappush(heap, (-(length - half), token))
        out.append(sorted(mine))
        mine = []
    return out
