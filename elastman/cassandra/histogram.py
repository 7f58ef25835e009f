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
"""Cassandra's estimated histograms, read as cumulative bucket counts.

Cassandra's Timers and Histograms keep, besides the exponentially decaying
reservoir behind their percentile attributes, plain (never decaying) bucket
counters, exposed by the ``values`` JMX operation. Bucket ``i`` counts values
in ``(offset[i-1], offset[i]]``; the offsets grow by a factor of about 1.2
(1, 2, 3, ..., 10, 12, 14, 17, 20, 24, ...) and the last bucket counts
overflows. The difference of two reads is the exact histogram of what
happened between them, which gives percentiles over exactly the sampling
interval, at the resolution of one bucket (about 20%).
"""
from __future__ import annotations

import functools
import math
from typing import Iterable, Mapping, Sequence

import numpy as np


@functools.lru_cache(maxsize=8)
def offsets(count: int) -> tuple[int, ...]:
    """Upper bounds of the first ``count`` buckets (Cassandra's series)."""
    result = []
    last = 1
    while len(result) < count:
        result.append(last)
        nxt = round(last * 1.2)
        last = nxt if nxt != last else last + 1
    return tuple(result)


def bounds(length: int) -> list[tuple[float, float]]:
    """(lower, upper) of each of ``length`` buckets; the last is overflow."""
    ups = offsets(length)
    out = []
    for i in range(length):
        lower = float(ups[i - 1]) if i else 0.0
        upper = float(ups[i]) if i < length - 1 else lower * 1.2
        out.append((lower, upper))
    return out


def add(a: Sequence[int] | None, b: Sequence[int] | None) -> list[int] | None:
    """Element-wise sum (histograms of several tables)."""
    if a is None:
        return list(b) if b is not None else None
    if b is None:
        return list(a)
    n = max(len(a), len(b))
    return [(a[i] if i < len(a) else 0) + (b[i] if i < len(b) else 0)
            for i in range(n)]


def delta(now: Sequence[int], before: Sequence[int] | None) -> list[int] | None:
    """What was recorded between two reads; None after a reset (restart)."""
    if before is None:
        return None
    if len(before) != len(now):
        return None
    out = [a - b for a, b in zip(now, before)]
    if any(v < 0 for v in out):
        return None
    return out


def total(buckets: Sequence[int]) -> int:
    return sum(buckets)


def percentile(buckets: Sequence[int], q: float) -> float | None:
    """The upper bound of the bucket holding the q-quantile (nodetool's
    convention: never under-reports); None for an empty histogram.
    """
    n = sum(buckets)
    if n == 0:
        return None
    rank = max(1, math.ceil(q * n))
    seen = 0
    for (lower, upper), count in zip(bounds(len(buckets)), buckets):
        seen += count
        if seen >= rank:
            return upper
    return bounds(len(buckets))[-1][1]


def mean(buckets: Sequence[int]) -> float | None:
    """Mean with each value at the middle of its bucket (error < 10%)."""
    n = sum(buckets)
    if n == 0:
        return None
    acc = 0.0
    for (lower, upper), count in zip(bounds(len(buckets)), buckets):
        if count:
            acc += count * (lower + upper) / 2.0
    return acc / n


def distribution(buckets: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Values (the upper bounds of the non-empty buckets, as in
    :func:`percentile`) and their counts, for :func:`weighted_quantile`.
    """
    counts = np.asarray(buckets, dtype=np.float64)
    index = np.nonzero(counts)[0]
    uppers = np.array([upper for _, upper in bounds(len(buckets))])
    return uppers[index], counts[index]


def sum_distribution(a: Sequence[int], b: Sequence[int]
                     ) -> tuple[np.ndarray, np.ndarray] | None:
    """The distribution of X + Y for independent X ~ ``a`` and Y ~ ``b``:
    values (sums of bucket upper bounds, as in :func:`percentile`, so that
    a quantile never under-reports) and weights that add up to ``a``'s
    count (distributions of several nodes then mix by their requests).
    None when either histogram is empty.
    """
    ca, cb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if ca.sum() <= 0 or cb.sum() <= 0:
        return None
    ia, ib = np.nonzero(ca)[0], np.nonzero(cb)[0]
    ua = np.array([upper for _, upper in bounds(len(a))])[ia]
    ub = np.array([upper for _, upper in bounds(len(b))])[ib]
    values = np.add.outer(ua, ub).ravel()
    weights = np.multiply.outer(ca[ia], cb[ib]).ravel() / cb.sum()
    return values, weights


def weighted_quantile(parts: Iterable[tuple[np.ndarray, np.ndarray]],
                      q: float) -> float | None:
    """The q-quantile of the mixture of weighted values ``parts`` (each a
    pair of arrays): the smallest value at or below which at least ``q`` of
    the weight lies. None without weight.
    """
    parts = [p for p in parts if p is not None and len(p[0])]
    if not parts:
        return None
    values = np.concatenate([v for v, _ in parts])
    weights = np.concatenate([w for _, w in parts])
    order = np.argsort(values, kind='stable')
    cumulative = np.cumsum(weights[order])
    if cumulative[-1] <= 0:
        return None
    rank = max(q * cumulative[-1], 1e-12)
    index = int(np.searchsorted(cumulative, rank * (1 - 1e-12), side='left'))
    return float(values[order][min(index, len(values) - 1)])


def sum_percentile(a: Sequence[int], b: Sequence[int], q: float
                   ) -> float | None:
    """The q-quantile of X + Y for independent X ~ ``a`` and Y ~ ``b``
    (:func:`sum_distribution`); None when either histogram is empty.
    """
    return weighted_quantile([sum_distribution(a, b)], q)


def quantile(counts: Mapping[int, int], q: float) -> float | None:
    """The q-quantile of a sparse histogram ``{bucket: count}``, placed
    linearly inside its bucket (the buckets are about 20% wide, so the upper
    bound alone would move a latency just above one bound to the next: a
    29.6 ms read would count as 35.4 ms); None for an empty histogram.
    """
    items = sorted((int(i), int(c)) for i, c in counts.items() if c > 0)
    n = sum(c for _, c in items)
    if n == 0:
        return None
    ups = offsets(items[-1][0] + 1)
    rank = max(q * n, 1e-9)
    seen = 0
    for i, c in items:
        if seen + c >= rank:
            lower = float(ups[i - 1]) if i else 0.0
            return lower + (float(ups[i]) - lower) * (rank - seen) / c
        seen += c
    return float(ups[items[-1][0]])
