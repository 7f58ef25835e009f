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
"""BWAP's canonical weighted interleave (BWAP).

For a VM whose vCPUs run on the worker nodes W, the canonical share of its
pages on node i is proportional to the weakest bandwidth from i to any worker
node: ``w_i = minbw(i) / sum_j minbw(j)`` with ``minbw(i) = min_{w in W}
bw(i -> w)``. A data-to-worker proximity factor ``dwp`` in [0, 1] shifts
weight towards the worker nodes (1 = all pages local).
"""
from __future__ import annotations

from typing import Iterable, Mapping


def canonical_weights(bw: Mapping[int, Mapping[int, float]],
                      workers: Iterable[int],
                      allowed: Iterable[int] | None = None) -> dict[int, float]:
    """Weights per memory node; ``bw[src][dst]`` is the bandwidth src->dst."""
    workers = list(workers)
    nodes = list(allowed) if allowed is not None else list(bw)
    minbw = {n: min(bw[n][w] for w in workers) for n in nodes}
    total = sum(minbw.values())
    if total <= 0:
        return {n: (1.0 / len(workers) if n in workers else 0.0) for n in nodes}
    return {n: minbw[n] / total for n in nodes}


def with_dwp(weights: Mapping[int, float], workers: Iterable[int],
             dwp: float) -> dict[int, float]:
    """Move a fraction ``dwp`` of the non-worker weight onto the workers,
    keeping the relative weights inside each set.
    """
    workers = set(workers)
    dwp = min(max(dwp, 0.0), 1.0)
    w_sum = sum(v for n, v in weights.items() if n in workers)
    o_sum = 1.0 - w_sum
    new_w_sum = w_sum + dwp * o_sum
    out = {}
    for n, v in weights.items():
        if n in workers:
            out[n] = v / w_sum * new_w_sum if w_sum else new_w_sum / len(workers)
        else:
            out[n] = v / o_sum * (1.0 - new_w_sum) if o_sum else 0.0
    return out


def plan_moves(current: Mapping[int, float], target: Mapping[int, float],
               budget: float) -> list[tuple[int, int, float]]:
    """Moves (src, dst, amount) bringing ``current`` towards ``target``.

    Both map node -> amount (bytes or fractions, same unit, same total);
    at most ``budget`` is moved, from the most over-weight node to the most
    under-weight one first.
    """
    excess = {n: current.get(n, 0.0) - target.get(n, 0.0)
              for n in set(current) | set(target)}
    moves = []
    while budget > 1e-12:
        src = max(excess, key=excess.get)
        dst = min(excess, key=excess.get)
        amount = min(excess[src], -excess[dst], budget)
        if amount <= 1e-12:
            break
        moves.append((src, dst, amount))
        excess[src] -= amount
        excess[dst] += amount
        budget -= amount
    return moves
