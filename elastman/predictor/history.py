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
"""Sliding-window history of one series, and cleaning of raw samples.

Monitors miss samples, nodes restart and counters glitch, so the history a
forecaster sees is cleaned first: non-finite values (NaN, inf, None) are
filled by linear interpolation between their finite neighbours, missing
samples at the end repeat the last finite value, missing samples at the start
are dropped, and negative rates are clipped to zero.  Irregular timestamps are
put on a regular grid of one control period first, so a gap is a run of
missing points rather than a silent jump.
"""

import collections
from typing import Iterable, Optional, Sequence

import numpy as np


def clean(values: Iterable[Optional[float]]) -> np.ndarray:
    """Return a finite, non-negative copy of ``values`` (possibly shorter)."""
    if isinstance(values, np.ndarray):
        y = values.astype(float)  # a copy
    else:
        y = np.array(
            [np.nan if v is None else v for v in values], dtype=float
        )
    y[~np.isfinite(y)] = np.nan
    ok = ~np.isnan(y)
    if not ok.any():
        return np.empty(0)
    y = y[int(np.argmax(ok)):]
    ok = ~np.isnan(y)
    if not ok.all():
        idx = np.arange(y.size)
        y = np.interp(
            idx, idx[ok], y[ok]
        )  # also repeats the last value at the end
    return np.maximum(y, 0.0)


def block_means(values: Sequence[float], every: int) -> np.ndarray:
    """Means of ``every`` consecutive values, from the first, over the
    values that are not missing (NaN when all of a block's are); a partial
    block at the end is left out.
    """
    y = np.asarray(values, dtype=float)
    every = max(1, int(every))
    blocks = y[:y.size // every * every].reshape(-1, every)
    present = np.isfinite(blocks)
    counts = present.sum(axis=1)
    sums = np.where(present, blocks, 0.0).sum(axis=1)
    return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def regularise(
    timestamps: Sequence[float],
    values: Sequence[Optional[float]],
    step: float,
    end: Optional[float] = None,
) -> np.ndarray:
    """Average samples into buckets of ``step`` s; empty buckets are NaN.

    With ``end``, the buckets end on the grid ``end - k * step``, each
    holding the samples after its start up to its end, and samples after
    ``end`` are left out. Without it the buckets start at the first
    sample, and the last holds the last sample.
    """
    t = np.asarray(timestamps, dtype=float)
    v = np.array([np.nan if x is None else x for x in values], dtype=float)
    if end is not None:
        keep = t <= float(end)
        t, v = t[keep], v[keep]
    if t.size == 0:
        return np.empty(0)
    if end is not None:
        back = np.floor((float(end) - t) / step + 1e-9).astype(int)
        n = int(back.max()) + 1
        idx = n - 1 - back
    else:
        start = float(t.min())
        n = int(np.floor((float(t.max()) - start) / step)) + 1
        idx = np.clip(np.floor((t - start) / step).astype(int), 0, n - 1)
    good = np.isfinite(v)
    sums = np.bincount(idx[good], weights=v[good], minlength=n)
    counts = np.bincount(idx[good], minlength=n)
    out = np.full(n, np.nan)
    out[counts > 0] = sums[counts > 0] / counts[counts > 0]
    return out


class History:
    """A bounded window of the most recent observations of one series."""

    def __init__(
        self, maxlen: int, values: Iterable[Optional[float]] = ()
    ) -> None:
        self._buf: collections.deque = collections.deque(
            maxlen=max(1, int(maxlen))
        )
        self.extend(values)

    def append(self, value: Optional[float]) -> None:
        self._buf.append(np.nan if value is None else float(value))

    def extend(self, values: Iterable[Optional[float]]) -> None:
        for v in values:
            self.append(v)

    def __len__(self) -> int:
        return len(self._buf)

    def array(self) -> np.ndarray:
        """The cleaned window, oldest first."""
        return clean(self._buf)
