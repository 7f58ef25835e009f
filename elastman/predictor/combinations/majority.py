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
"""OnlineElastMan's weighted majority of the forecasters."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

import numpy as np

from elastman.predictor.combinations.base import answered
from elastman.predictor.combinations.base import Combination
from elastman.predictor.combinations.base import Combined
from elastman.predictor.combinations.base import relative_errors
from elastman.predictor.combinations.base import running_peak
from elastman.predictor.paths import Matured


class WeightedMajority:
    """Weights of a pool of forecasters for one series (Littlestone & Warmuth).

    :param names: forecaster names, in tie-break order.
    :param tolerance: relative error above which a forecast is a miss.
    :param penalty: factor ``m`` (0 <= m < 1) applied to a missing forecaster.
    :param floor: smallest weight relative to the heaviest one.
    :param smoothing: factor of the exponential average of relative errors
        (the tie-break).
    """

    def __init__(
        self,
        names: Sequence[str],
        tolerance: float = 0.05,
        penalty: float = 0.3,
        floor: float = 0.05,
        smoothing: float = 0.1,
    ) -> None:
        if not 0.0 <= penalty < 1.0:
            raise ValueError('penalty must be in [0, 1)')
        if tolerance < 0:
            raise ValueError('tolerance must be >= 0')
        self.names = list(names)
        self.tolerance = float(tolerance)
        self.penalty = float(penalty)
        self.floor = float(min(max(floor, 0.0), 1.0))
        self.smoothing = float(smoothing)
        self.weights: Dict[str, float] = {n: 1.0 for n in self.names}
        self.errors: Dict[str, Optional[float]] = {n: None for n in self.names}
        self.rounds = 0

    @staticmethod
    def relative_error(predicted: float, actual: float) -> float:
        return abs(predicted - actual) / max(abs(actual), 1e-9)

    def penalise(
        self, actual: float, predictions: Mapping[str, float]
    ) -> List[str]:
        """Score last round's one-step ``predictions``; return who missed."""
        return self.penalise_errors({
            name: self.relative_error(float(pred), float(actual))
            for name, pred in predictions.items()
        })

    def penalise_errors(self, errors: Mapping[str, float]) -> List[str]:
        """Score the forecasters by their relative ``errors``; return who
        missed.
        """
        missed = []
        known = [e for n, e in errors.items() if n in self.weights]
        # The paper's rule is "worse than the tolerance"; when every
        # forecaster is (after a step in the workload, all of them are for a
        # while) that rule penalises all alike and the ranking freezes. So a
        # forecaster within the tolerance of this round's best never misses.
        threshold = max(self.tolerance,
                        (1.0 + self.tolerance) * min(known, default=0.0))
        for name, err in errors.items():
            if name not in self.weights:
                continue
            old = self.errors.get(name)
            self.errors[name] = (
                err
                if old is None
                else ((1 - self.smoothing) * old + self.smoothing * err)
            )
            if err > threshold:
                self.weights[name] *= self.penalty
                missed.append(name)
        self._renormalise()
        self.rounds += 1
        return missed

    def _renormalise(self) -> None:
        top = max(self.weights.values(), default=0.0)
        if top <= 0.0:  # all zero (m == 0, e.g. a stored state): start again
            self.weights = {n: 1.0 for n in self.weights}
            return
        for n, w in self.weights.items():
            self.weights[n] = max(w / top, self.floor)

    def ranking(self, available: Iterable[str]) -> List[str]:
        """``available`` names, best first.

        Heaviest first, then lowest recent error, then configured order.
        """
        order = {n: i for i, n in enumerate(self.names)}

        def key(n: str) -> tuple:
            w = self.weights.get(n, self.floor)
            err = self.errors.get(n)
            return (
                -round(w, 12),
                float('inf') if err is None else err,
                order.get(n, len(order)),
            )

        return sorted(available, key=key)

    def choose(self, available: Iterable[str]) -> Optional[str]:
        ranked = self.ranking(available)
        return ranked[0] if ranked else None

    def average(self, predictions: Mapping[str, np.ndarray]) -> np.ndarray:
        """Weight-averaged forecast of the given forecasters."""
        names = list(predictions)
        w = np.array([self.weights.get(n, self.floor) for n in names])
        stack = np.vstack(
            [np.asarray(predictions[n], dtype=float) for n in names]
        )
        return (w[:, None] * stack).sum(axis=0) / w.sum()

    def to_dict(self) -> Dict[str, Any]:
        return {
            'names': list(self.names),
            'tolerance': self.tolerance,
            'penalty': self.penalty,
            'floor': self.floor,
            'smoothing': self.smoothing,
            'rounds': self.rounds,
            'weights': dict(self.weights),
            'errors': dict(self.errors),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'WeightedMajority':
        self = cls(
            data['names'],
            data.get('tolerance', 0.05),
            data.get('penalty', 0.3),
            data.get('floor', 0.05),
            data.get('smoothing', 0.1),
        )
        self.weights.update(
            {
                k: float(v)
                for k, v in data.get('weights', {}).items()
                if k in self.weights
            }
        )
        self.errors.update(
            {
                k: (None if v is None else float(v))
                for k, v in data.get('errors', {}).items()
                if k in self.errors
            }
        )
        self.rounds = int(data.get('rounds', 0))
        return self


class Majority(Combination):
    """OnlineElastMan's weighted majority (``average``: weight-averaged).

    A round scores every matured path of each forecaster: its relative
    errors, capped at :data:`MAX_ERROR`, the one made ``k`` rounds ago
    weighing ``1/k``; see doc/source/prediction.rst.
    """

    name = 'majority'

    def __init__(self, names: Sequence[str], tolerance: float = 0.05,
                 penalty: float = 0.3, weight_floor: float = 0.05,
                 average: bool = False, **_: Any) -> None:
        super().__init__(names)
        self.wm = WeightedMajority(names, tolerance, penalty, weight_floor)
        self.averaged = average
        if average:
            self.name = 'average'

    def learn(self, matured: Sequence[Matured]) -> List[str]:
        errors: Dict[str, List[float]] = {}
        weights: Dict[str, List[float]] = {}
        for m in matured:
            err = relative_errors(m.point, m.actual)
            for i, name in enumerate(self.names):
                if np.isfinite(err[i]):
                    errors.setdefault(name, []).append(float(err[i]))
                    weights.setdefault(name, []).append(1.0 / (m.lead + 1))
        if not errors:
            return []
        return self.wm.penalise_errors(
            {n: float(np.average(e, weights=weights[n]))
             for n, e in errors.items()})

    def combine(self, paths: np.ndarray) -> Combined:
        ok = answered(paths)
        preds = {n: paths[i] for i, n in enumerate(self.names) if ok[i]}
        chosen = self.wm.choose(preds)
        values = (self.wm.average(preds) if self.averaged
                  else np.asarray(preds[chosen], float))
        return Combined(values, running_peak(values), chosen,
                        dict(self.wm.weights))

    def to_dict(self) -> Dict[str, Any]:
        return {'selector': self.wm.to_dict()}

    def load(self, data: Mapping[str, Any]) -> None:
        sel = WeightedMajority.from_dict(data['selector'])
        # keep the configured pool; carry over what is known of it
        for n in self.wm.names:
            if n in sel.weights:
                self.wm.weights[n] = sel.weights[n]
                self.wm.errors[n] = sel.errors[n]
        self.wm.rounds = sel.rounds
