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
"""Sparse grid of cells, each with the last ``n`` values of the SLO metric.

Cells exist only where samples landed. Storage is a set of growing numpy arrays
(one row per cell, a ring buffer of ``n`` float32 values) indexed by a dict of
integer cell keys, so memory follows the number of visited cells.

The grid remembers which cells changed since its owner last saved it
(:meth:`CellGrid.changed_cells`, :meth:`CellGrid.mark_saved`), and one cell
encodes on its own (:func:`encode_cell`), so that a store writes only the
cells a round of samples touched and reads a grid back cell by cell
(:meth:`CellGrid.from_cells`).
"""
from __future__ import annotations

import base64
import math
import struct
from typing import Any, Iterable, Mapping, Sequence

import numpy as np


class CellGrid:
    """The cells of one VM."""

    def __init__(self, granularity: Sequence[float], buffer_size: int) -> None:
        self.granularity = np.asarray(granularity, dtype=np.float64)
        self.dims = len(self.granularity)
        self.buffer_size = int(buffer_size)
        self._index: dict[tuple[int, ...], int] = {}
        self._alloc(16)
        self.revision = 0  # bumped on each accepted sample
        self._changed: set[int] = set()   # rows changed since mark_saved()

    def _alloc(self, cap: int) -> None:
        self._keys = np.zeros((cap, self.dims), dtype=np.int64)
        self._buf = np.full((cap, self.buffer_size), np.nan, dtype=np.float32)
        self._sts = np.zeros((cap, self.buffer_size), dtype=np.float64)
        self._pos = np.zeros(cap, dtype=np.int32)
        self._ts = np.zeros(cap, dtype=np.float64)

    def _grow(self) -> None:
        old = (self._keys, self._buf, self._sts, self._pos, self._ts)
        n = len(self._index)
        self._alloc(max(16, 2 * old[0].shape[0]))
        (self._keys[:n], self._buf[:n], self._sts[:n], self._pos[:n],
         self._ts[:n]) = (a[:n] for a in old)

    def __len__(self) -> int:
        return len(self._index)

    def key_of(self, point: Sequence[float]) -> tuple[int, ...]:
        return tuple(int(math.floor(x / g))
                     for x, g in zip(point, self.granularity))

    def add(self, point: Sequence[float], value: float, ts: float) -> tuple[int, ...]:
        """Put one SLO-metric ``value`` observed at ``point`` into its cell."""
        key = self.key_of(point)
        row = self._index.get(key)
        if row is None:
            row = len(self._index)
            if row == self._keys.shape[0]:
                self._grow()
            self._index[key] = row
            self._keys[row] = key
        pos = self._pos[row]
        self._buf[row, pos] = value
        self._sts[row, pos] = ts
        self._pos[row] = (pos + 1) % self.buffer_size
        self._ts[row] = max(self._ts[row], ts)
        self.revision += 1
        self._changed.add(row)
        return key

    def absorb(self, other: 'CellGrid') -> int:
        """Take every sample of ``other`` (a grid of the same granularity):
        each cell keeps the newest ``buffer_size`` of its samples and
        theirs, in time order. Returns how many cells it touched.
        """
        if other.dims != self.dims or not np.allclose(other.granularity,
                                                      self.granularity):
            raise ValueError('cannot absorb a grid of another granularity')
        for row in range(len(other)):
            key = tuple(int(k) for k in other._keys[row])
            mine = self._index.get(key)
            vals, stamps = other._samples(row)
            if mine is not None:
                own_vals, own_stamps = self._samples(mine)
                vals = np.concatenate([own_vals, vals])
                stamps = np.concatenate([own_stamps, stamps])
            else:
                mine = len(self._index)
                if mine == self._keys.shape[0]:
                    self._grow()
                self._index[key] = mine
                self._keys[mine] = key
            order = np.argsort(stamps, kind='stable')[-self.buffer_size:]
            n = len(order)
            self._buf[mine] = np.nan
            self._sts[mine] = 0.0
            self._buf[mine, :n] = vals[order]
            self._sts[mine, :n] = stamps[order]
            self._pos[mine] = n % self.buffer_size
            self._ts[mine] = max(float(self._ts[mine]), float(other._ts[row]))
            self._changed.add(mine)
            self.revision += n
        return len(other)

    def _samples(self, row: int) -> tuple[np.ndarray, np.ndarray]:
        """The samples of one row, oldest first: (values, stamps)."""
        order = (np.arange(self.buffer_size) + self._pos[row]) % self.buffer_size
        vals, stamps = self._buf[row, order], self._sts[row, order]
        held = ~np.isnan(vals)
        return vals[held], stamps[held]

    # -- views -----------------------------------------------------------

    def _rows(self) -> slice:
        return slice(0, len(self._index))

    def centres(self) -> np.ndarray:
        """Cell centres in feature units, one row per cell."""
        return (self._keys[self._rows()] + 0.5) * self.granularity

    def counts(self, threshold: float) -> tuple[np.ndarray, np.ndarray]:
        """Per cell: samples meeting ``threshold`` and samples held."""
        buf = self._buf[self._rows()]
        held = np.count_nonzero(~np.isnan(buf), axis=1)
        met = np.count_nonzero(buf <= threshold, axis=1)
        return met, held

    def met_fraction(self, threshold: float, now: float | None = None,
                     max_age: float = 0.0, half_life: float = 0.0
                     ) -> tuple[np.ndarray, np.ndarray]:
        """Per cell: (weighted) share of samples meeting ``threshold``, and
        the number of samples that count.

        Samples older than ``max_age`` (if > 0) do not count; with
        ``half_life`` > 0 a sample weighs 2^(-age / half_life), so a cell that
        holds old met samples and newer violated ones follows the newer ones.
        """
        rows = self._rows()
        buf, sts = self._buf[rows], self._sts[rows]
        valid = ~np.isnan(buf)
        if now is not None and max_age > 0:
            valid &= sts >= now - max_age
        if now is not None and half_life > 0:
            # age relative to the cell's newest sample: no underflow when the
            # whole cell is old, and only the relative weights matter here
            newest = np.where(valid, sts, -np.inf).max(axis=1, initial=-np.inf)
            newest = np.where(np.isfinite(newest), newest, 0.0)
            w = np.exp2(-np.maximum(newest[:, None] - sts, 0.0) / half_life) * valid
        else:
            w = valid.astype(np.float64)
        total = w.sum(axis=1)
        met = (w * (buf <= threshold)).sum(axis=1)
        frac = np.divide(met, total, out=np.zeros_like(met), where=total > 0)
        return frac, np.count_nonzero(valid, axis=1)

    def last_seen(self) -> np.ndarray:
        return self._ts[self._rows()]

    def keys(self) -> np.ndarray:
        return self._keys[self._rows()]

    def cell_values(self, key: Sequence[int]) -> list[float]:
        """The buffer of one cell, oldest first (for tests and the API)."""
        row = self._index[tuple(key)]
        pos = self._pos[row]
        vals = np.roll(self._buf[row], -pos)
        return [float(v) for v in vals if not np.isnan(v)]

    def labelled(self, threshold: float, confidence: float,
                 now: float | None = None, max_age: float = 0.0,
                 half_life: float = 0.0, weight_floor: float = 0.0,
                 prune: bool = True, keep_violated: bool = False
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Training set: centres, labels (+1 met / -1 violated), weights.

        A cell is met when at least ``confidence`` of its samples (weighted by
        recency, see :meth:`met_fraction`) meet the threshold. A cell weighs
        max(weight_floor, 2^(-age of its last sample / half_life)) (1 without
        a half-life); with ``keep_violated`` a violated cell weighs 1 whatever
        its age. With ``prune``, cells contradicted by newer ones are left
        out (:func:`prune_conflicts`).
        """
        frac, held = self.met_fraction(threshold, now, max_age, half_life)
        keep = held > 0
        labels = np.where(frac >= confidence - 1e-9, 1, -1)[keep]
        keys, seen = self.keys()[keep], self.last_seen()[keep]
        weights = _weights(seen, now, half_life, weight_floor)
        if keep_violated:
            weights = np.where(labels < 0, 1.0, weights)
        if prune:
            ok = prune_conflicts(keys, labels, seen)
            keys, labels, weights = keys[ok], labels[ok], weights[ok]
        return (keys + 0.5) * self.granularity, labels, weights

    # -- change tracking -------------------------------------------------

    @property
    def n_changed(self) -> int:
        """Cells changed since :meth:`mark_saved`."""
        return len(self._changed)

    def changed_cells(self) -> dict[str, bytes]:
        """Cells changed since :meth:`mark_saved`, as ``{cell name:
        encode_cell bytes}`` (:func:`cell_name` gives the names).
        """
        return {cell_name(self._keys[row]): self._encode(row)
                for row in sorted(self._changed)}

    def all_cells(self) -> dict[str, bytes]:
        """Every cell, encoded as :meth:`changed_cells` does."""
        return {cell_name(self._keys[row]): self._encode(row)
                for row in range(len(self._index))}

    def mark_saved(self) -> None:
        """The owner has stored every changed cell."""
        self._changed.clear()

    def mark_all_changed(self) -> None:
        self._changed.update(range(len(self._index)))

    def _encode(self, row: int) -> bytes:
        pos = self._pos[row]
        order = (np.arange(self.buffer_size) + pos) % self.buffer_size
        return encode_cell(self._buf[row, order], self._sts[row, order],
                           float(self._ts[row]))

    @classmethod
    def from_cells(cls, granularity: Sequence[float], buffer_size: int,
                   cells: Mapping[str, bytes], revision: int = 0
                   ) -> 'CellGrid':
        """A grid from cells stored one by one (:meth:`changed_cells`).

        A cell whose buffer was stored with another ``buffer_size`` keeps its
        newest values; a cell that does not decode raises ValueError.
        """
        grid = cls(granularity, buffer_size)
        for name, data in cells.items():
            key = parse_cell_name(name, grid.dims)
            values, stamps, last_seen = decode_cell(data)
            present = ~np.isnan(values)
            values, stamps = values[present], stamps[present]
            values, stamps = values[-grid.buffer_size:], stamps[-grid.buffer_size:]
            row = len(grid._index)
            if row == grid._keys.shape[0]:
                grid._grow()
            grid._index[key] = row
            grid._keys[row] = key
            grid._buf[row, :len(values)] = values
            grid._sts[row, :len(values)] = stamps
            grid._pos[row] = len(values) % grid.buffer_size
            grid._ts[row] = last_seen
        grid.revision = int(revision)
        return grid

    # -- serialisation ---------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        n = len(self._index)
        # rotate every ring so the oldest value comes first
        idx = (np.arange(self.buffer_size)[None, :] + self._pos[:n, None]) % self.buffer_size
        ordered = np.take_along_axis(self._buf[:n], idx, axis=1)
        stamps = np.take_along_axis(self._sts[:n], idx, axis=1)
        return {'granularity': self.granularity.tolist(),
                'buffer_size': self.buffer_size,
                'cells': n,
                'keys': _b64(self._keys[:n].astype('<i8')),
                'values': _b64(ordered.astype('<f4')),
                'stamps': _b64(stamps.astype('<f8')),
                'last_seen': _b64(self._ts[:n].astype('<f8'))}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'CellGrid':
        grid = cls(data['granularity'], int(data['buffer_size']))
        n = int(data['cells'])
        keys = _unb64(data['keys'], '<i8').reshape(n, grid.dims)
        values = _unb64(data['values'], '<f4').reshape(n, grid.buffer_size)
        ts = _unb64(data['last_seen'], '<f8').reshape(n)
        stamps = _unb64(data['stamps'], '<f8').reshape(n, grid.buffer_size)
        while grid._keys.shape[0] < n:
            grid._grow()
        grid._keys[:n], grid._ts[:n] = keys, ts
        # compact each ring: values first, NaN padding after, write position after values
        for row in range(n):
            present = ~np.isnan(values[row])
            vals = values[row][present]
            grid._buf[row, :len(vals)] = vals
            grid._sts[row, :len(vals)] = stamps[row][present]
            grid._pos[row] = len(vals) % grid.buffer_size
            grid._index[tuple(int(k) for k in keys[row])] = row
        return grid


_CELL_HEAD = struct.Struct('<HHd')     # format, buffer size, last seen
_CELL_FORMAT = 1


def cell_name(key: Sequence[int]) -> str:
    """A cell's name in the store: its integer coordinates, comma-separated."""
    return ','.join(str(int(k)) for k in key)


def parse_cell_name(name: str, dims: int) -> tuple[int, ...]:
    try:
        key = tuple(int(k) for k in name.split(','))
    except ValueError:
        raise ValueError('cell name %r is not integer coordinates' % (name,))
    if len(key) != dims:
        raise ValueError('cell %r has %d coordinates, the grid %d'
                         % (name, len(key), dims))
    return key


def encode_cell(values: np.ndarray, stamps: np.ndarray,
                last_seen: float) -> bytes:
    """One cell's buffer (oldest first, NaN where empty) and sample times."""
    return (_CELL_HEAD.pack(_CELL_FORMAT, len(values), last_seen)
            + np.asarray(values, dtype='<f4').tobytes()
            + np.asarray(stamps, dtype='<f8').tobytes())


def decode_cell(data: bytes) -> tuple[np.ndarray, np.ndarray, float]:
    """(values, stamps, last seen) of :func:`encode_cell` bytes."""
    if len(data) < _CELL_HEAD.size:
        raise ValueError('cell of %d bytes is truncated' % len(data))
    fmt, n, last_seen = _CELL_HEAD.unpack_from(data)
    if fmt != _CELL_FORMAT or len(data) != _CELL_HEAD.size + 12 * n:
        raise ValueError('cell of format %d and %d bytes does not decode'
                         % (fmt, len(data)))
    start = _CELL_HEAD.size
    values = np.frombuffer(data, '<f4', n, start).astype(np.float32)
    stamps = np.frombuffer(data, '<f8', n, start + 4 * n).astype(np.float64)
    return values, stamps, last_seen


def prune_conflicts(keys: np.ndarray, labels: np.ndarray,
                    last_seen: np.ndarray) -> np.ndarray:
    """Mask of the cells to keep once stale contradictions are removed.

    Load is monotone: a VM that meets the SLO at a point also meets it at every
    point with no more of any coordinate. A met cell that dominates a violated
    cell (>= in every coordinate) contradicts it; of such a pair the cell seen
    last wins and the older one is dropped. This is how the model forgets a
    region whose capacity changed (an interfering neighbour arrived or left)
    even where the walk does not come back to refill the very same cells.
    """
    keep = np.ones(len(labels), dtype=bool)
    met = np.flatnonzero(labels > 0)
    vio = np.flatnonzero(labels < 0)
    if not len(met) or not len(vio):
        return keep
    kv = [np.ascontiguousarray(keys[vio, d], dtype=np.int32)[None, :]
          for d in range(keys.shape[1])]
    chunk = max(1, 8_000_000 // len(vio))
    for start in range(0, len(met), chunk):
        m = met[start:start + chunk]
        dom = keys[m, 0].astype(np.int32)[:, None] >= kv[0]
        for d in range(1, keys.shape[1]):
            dom &= keys[m, d].astype(np.int32)[:, None] >= kv[d]
        if not dom.any():
            continue
        newer_v = last_seen[vio][None, :] > last_seen[m][:, None]
        keep[m[(dom & newer_v).any(axis=1)]] = False
        drop_v = (dom & ~newer_v).any(axis=0)
        keep[vio[drop_v]] = False
    return keep


def _weights(seen: np.ndarray, now: float | None, half_life: float,
             floor: float) -> np.ndarray:
    if now is None or half_life <= 0 or not len(seen):
        return np.ones(len(seen))
    # relative to the newest cell, so a VM silent for hours keeps usable weights
    return np.maximum(floor, np.exp2(-np.maximum(seen.max() - seen, 0.0) / half_life))


def pool(grids: Iterable[CellGrid], threshold: float, confidence: float,
         now: float | None = None, max_age: float = 0.0,
         half_life: float = 0.0, weight_floor: float = 0.0, prune: bool = True,
         keep_violated: bool = False
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training set of a flavour: the cells of several VMs merged by key.

    A pooled cell is met when the sample-weighted mean of the VMs' met
    fractions for it reaches ``confidence``; it was last seen when any VM
    last saw it.
    """
    met_by: dict[tuple[int, ...], list[float]] = {}
    gran = None
    for grid in grids:
        if gran is None:
            gran = grid.granularity
        frac, held = grid.met_fraction(threshold, now, max_age, half_life)
        keep = held > 0
        met = frac * held
        for key, m, h, t in zip(map(tuple, grid.keys()[keep].tolist()),
                                met[keep].tolist(), held[keep].tolist(),
                                grid.last_seen()[keep].tolist()):
            acc = met_by.setdefault(key, [0, 0, 0.0])
            acc[0] += m
            acc[1] += h
            acc[2] = max(acc[2], t)
    if not met_by:
        dims = 0 if gran is None else len(gran)
        return np.zeros((0, dims)), np.zeros(0, dtype=int), np.zeros(0)
    keys = np.array(list(met_by.keys()), dtype=np.int64)
    acc = np.array(list(met_by.values()), dtype=np.float64)
    labels = np.where(acc[:, 0] / acc[:, 1] >= confidence - 1e-9, 1, -1)
    weights = _weights(acc[:, 2], now, half_life, weight_floor)
    if keep_violated:
        weights = np.where(labels < 0, 1.0, weights)
    if prune:
        ok = prune_conflicts(keys, labels, acc[:, 2])
        keys, labels, weights = keys[ok], labels[ok], weights[ok]
    return (keys + 0.5) * gran, labels, weights


def _b64(arr: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(arr).tobytes()).decode('ascii')


def _unb64(text: str, dtype: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=dtype).copy()
