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
"""The forecast paths of earlier rounds, kept until every step has been seen.

A combination learns from how the forecasts it combined turned out, at each
lead: when a new point arrives, the forecast of it made one round ago (lead
0), the one made two rounds ago (lead 1), and so on over the horizon have
*matured*. :class:`PathBook` keeps each round's paths of every forecaster
until they have all matured, with the highest value seen since they were
made, so that a matured forecast comes with both the point it forecast and
the peak of the points up to it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Mapping, Optional, Sequence

import numpy as np


@dataclasses.dataclass
class Matured:
    """The forecasts of one new point made ``lead + 1`` rounds ago.

    ``point[i]`` is forecaster ``i``'s forecast of the point, ``peak[i]`` the
    highest value of its path up to it (NaN: it did not answer that round);
    ``own_peak`` is the combination's own peak forecast, if it made one, and
    ``own_upper`` the upper bound it gave with it.
    """

    lead: int
    point: np.ndarray
    peak: np.ndarray
    actual: float
    actual_peak: float
    own_peak: Optional[float] = None
    own_upper: Optional[float] = None


class _Entry:
    __slots__ = ('age', 'paths', 'peaks', 'own', 'upper', 'top')

    def __init__(self, paths: np.ndarray, own: Optional[np.ndarray],
                 upper: Optional[np.ndarray] = None) -> None:
        self.age = 0
        self.paths = paths                      # (forecasters, steps)
        self.peaks = np.fmax.accumulate(paths, axis=1) if paths.size else paths
        self.own = own                          # combination's peak path
        self.upper = upper                      # and its upper bound
        self.top = -np.inf                      # highest value seen since

    @property
    def steps(self) -> int:
        own = 0 if self.own is None else len(self.own)
        return max(self.paths.shape[1] if self.paths.ndim == 2 else 0, own)


class PathBook:
    """Paths of the last rounds of one series, newest first (float32)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self.entries: List[_Entry] = []

    def add(self, paths: Mapping[str, Sequence[float]],
            own_peak: Optional[Sequence[float]] = None,
            own_upper: Optional[Sequence[float]] = None) -> None:
        """Keep this round's forecaster ``paths``, combined peak path and
        its upper bound.
        """
        steps = max([len(p) for p in paths.values()] + [0])
        mat = np.full((len(self.names), steps), np.nan, dtype=np.float32)
        for i, name in enumerate(self.names):
            p = paths.get(name)
            if p is not None and len(p):
                mat[i, :len(p)] = np.asarray(p, dtype=np.float32)
        own = (np.asarray(own_peak, dtype=np.float32)
               if own_peak is not None and len(own_peak) else None)
        upper = (np.asarray(own_upper, dtype=np.float32)
                 if own is not None and own_upper is not None
                 and len(own_upper) else None)
        if steps or own is not None:
            self.entries.insert(0, _Entry(mat, own, upper))

    def advance(self, new_points: Sequence[float]) -> List[List[Matured]]:
        """Take in the new points, oldest first; return, per point, the
        forecasts that matured with it (one per lead).
        """
        out: List[List[Matured]] = []
        for value in new_points:
            value = float(value)
            matured = []
            for e in self.entries:
                e.age += 1
                e.top = max(e.top, value)
                lead = e.age - 1
                if lead >= e.steps:
                    continue
                if lead < e.paths.shape[1]:
                    point, peak = e.paths[:, lead], e.peaks[:, lead]
                else:
                    point = peak = np.full(len(self.names), np.nan,
                                           dtype=np.float32)
                own = (float(e.own[lead]) if e.own is not None
                       and lead < len(e.own) else None)
                up = (float(e.upper[lead]) if e.upper is not None
                      and lead < len(e.upper) else None)
                matured.append(Matured(lead, point.astype(float),
                                       peak.astype(float), value, e.top, own,
                                       up))
            out.append(matured)
            self.entries = [e for e in self.entries if e.age < e.steps]
        return out

    def pending(self) -> Dict[str, Any]:
        """The newest round's paths (what a restarted predictor scores
        first), as plain lists.
        """
        if not self.entries or self.entries[0].age:
            return {}
        e = self.entries[0]
        paths = {n: [float(v) for v in e.paths[i] if np.isfinite(v)]
                 for i, n in enumerate(self.names)
                 if e.paths.shape[1] and np.isfinite(e.paths[i, 0])}
        return {'paths': paths,
                'own_peak': [] if e.own is None else [float(v) for v in e.own],
                'own_upper': ([] if e.upper is None
                              else [float(v) for v in e.upper])}

    def load_pending(self, data: Mapping[str, Any]) -> None:
        self.entries = []
        paths = {n: p for n, p in dict(data.get('paths') or {}).items()
                 if n in self.names}
        self.add(paths, data.get('own_peak') or None,
                 data.get('own_upper') or None)
