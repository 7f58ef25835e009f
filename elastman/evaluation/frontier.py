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
"""Frontiers of violation against cost, and how two of them compare.

A policy swept over its main knob gives points ``(VM-hours / oracle,
violation %)``. Its frontier is the Pareto-efficient subset (no other point
is both cheaper and violates less) joined by straight lines: what the policy
achieves at its best setting for each VM-hours level. Below its cheapest point
and above its dearest one the frontier is extended flat (a setting it was not
swept at is taken to do no better than its nearest swept one; the levels out
of a curve's range are reported).

:func:`compare` evaluates curves at common VM-hours levels (by default 1.05x
to 1.5x the oracle's); :func:`lies_below` says whether one curve has fewer
violations than another at every level.
"""
from __future__ import annotations

import dataclasses
from typing import Iterable, Mapping, Sequence

import numpy as np

#: The VM-hours range (relative to the oracle) the comparison covers.
LOW, HIGH = 1.05, 1.5
#: Levels compared (every 0.01x of the oracle's VM-hours by default).
LEVELS = 46

Point = tuple[float, float]


def pareto(points: Iterable[Point]) -> np.ndarray:
    """The Pareto-efficient points (cost, violation), sorted by cost: each
    one violates strictly less than every cheaper one.
    """
    pts = np.asarray(sorted((float(c), float(v)) for c, v in points), dtype=float)
    if not len(pts) or not np.isfinite(pts).all():
        raise ValueError('a frontier needs finite points, got %r' % (pts.tolist(),))
    keep, best = [], np.inf
    for c, v in pts:
        if v < best:
            keep.append((c, v))
            best = v
    return np.array(keep)


def interpolate(points: Iterable[Point], levels: Sequence[float]) -> np.ndarray:
    """Violation of the frontier of ``points`` at each cost level."""
    front = pareto(points)
    return np.interp(np.asarray(levels, dtype=float), front[:, 0], front[:, 1])


@dataclasses.dataclass
class Comparison:
    """Curves evaluated at common cost levels."""

    levels: np.ndarray
    values: dict[str, np.ndarray]
    #: per curve: the levels inside the range of costs it was swept over
    covered: dict[str, np.ndarray]

    def rows(self) -> list[dict]:
        out = []
        for i, x in enumerate(self.levels):
            row = {'vm_hours_vs_oracle': float(x)}
            for name, v in self.values.items():
                row[name] = float(v[i])
            out.append(row)
        return out


def compare(curves: Mapping[str, Iterable[Point]], low: float = LOW, high: float = HIGH,
            levels: int = LEVELS) -> Comparison:
    """Each curve's frontier at ``levels`` evenly spaced costs in [low, high]."""
    if not low < high or levels < 2:
        raise ValueError('need low < high and at least 2 levels, got %r, %r, %r'
                         % (low, high, levels))
    xs = np.linspace(low, high, levels)
    values, covered = {}, {}
    for name, pts in curves.items():
        front = pareto(pts)
        values[name] = np.interp(xs, front[:, 0], front[:, 1])
        covered[name] = (xs >= front[0, 0]) & (xs <= front[-1, 0])
    return Comparison(xs, values, covered)


def lies_below(lower: Iterable[Point], upper: Iterable[Point], low: float = LOW,
               high: float = HIGH, levels: int = LEVELS, strict: bool = True) -> bool:
    """Does the frontier of ``lower`` violate less than that of ``upper`` at
    every cost level in [low, high]? With ``strict=False``: no more at any
    level and less at one at least.
    """
    c = compare({'lower': lower, 'upper': upper}, low, high, levels)
    a, b = c.values['lower'], c.values['upper']
    if strict:
        return bool((a < b).all())
    return bool((a <= b).all() and (a < b).any())
