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
"""Upper prediction bound of a series' peak, per lead time.

The actuator plans on the highest value a forecast reaches within its
horizon, so the bound that matters is on that peak: ``upper[k]`` is the
``level`` quantile of ``max(y[t], ..., y[t+k])``, the highest value among the
next ``k + 1`` steps.  It is the point forecast's running peak times a
learnt factor, one per lead ``k``.

The factor is tracked online on the log ratio of the actual peak to the
forecast peak (the quantile tracker of "Conformal PID Control", Angelopoulos,
Candès and Tibshirani, 2023): after each matured forecast the log factor goes
up by ``rate * scale * level`` on a miss (the actual peak above the bound) and
down by ``rate * scale * (1 - level)`` otherwise, ``scale`` being a running
mean of the scores' size. Over any long stretch the bound is then missed in
about ``1 - level`` of the rounds, whatever the forecast's own bias, and it
widens when the workload turns less predictable.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Mapping

import numpy as np

#: Peaks below this are clipped before taking logs (an idle series).
_TINY = 1e-6


class PeakQuantile:
    """Online ``level`` quantile of the forecast peak's error, per lead.

    :param level: the quantile (nominal coverage), in (0, 1).
    :param rate: step of the tracker, relative to the scores' scale.
    :param initial: starting log factor (0.1: 10% above the point peak).
    :param smoothing: weight of a new score in the running scale.
    """

    def __init__(self, level: float = 0.9, rate: float = 0.1,
                 initial: float = 0.1, smoothing: float = 0.05) -> None:
        if not 0.0 < level < 1.0:
            raise ValueError('level must be in (0, 1)')
        self.level = float(level)
        self.rate = float(rate)
        self.initial = float(initial)
        self.smoothing = float(smoothing)
        self.theta: List[float] = []
        self.scale: List[float] = []
        self.misses: List[int] = []
        self.seen: List[int] = []

    def _grow(self, leads: int) -> None:
        while len(self.theta) < leads:
            # a new lead starts from the longest one known: errors grow
            # with the lead, so that is the closer guess
            self.theta.append(self.theta[-1] if self.theta else self.initial)
            self.scale.append(self.scale[-1] if self.scale else
                              max(abs(self.initial), 0.01))
            self.misses.append(0)
            self.seen.append(0)

    def learn(self, lead: int, predicted_peak: float,
              actual_peak: float) -> bool:
        """Score one matured peak forecast; return whether it was missed."""
        if not (math.isfinite(predicted_peak) and math.isfinite(actual_peak)):
            return False
        self._grow(lead + 1)
        score = math.log(max(actual_peak, _TINY) / max(predicted_peak, _TINY))
        miss = score > self.theta[lead]
        a = self.smoothing
        self.scale[lead] = max((1 - a) * self.scale[lead] + a * abs(score),
                               1e-3)
        step = self.rate * self.scale[lead]
        self.theta[lead] += step * (self.level if miss else
                                    -(1.0 - self.level))
        self.seen[lead] += 1
        self.misses[lead] += int(miss)
        return miss

    def upper(self, path: Any) -> np.ndarray:
        """The bound on the running peak of the point forecast ``path``."""
        p = np.maximum.accumulate(np.asarray(path, dtype=float))
        if p.size == 0:
            return p
        self._grow(p.size)
        factor = np.exp(np.asarray(self.theta[:p.size]))
        # never below the point forecast's own peak, and never lower for a
        # longer lead (the peak of more steps is no lower)
        return np.maximum.accumulate(np.maximum(p * factor, p))

    def to_dict(self) -> Dict[str, Any]:
        return {'level': self.level, 'rate': self.rate,
                'initial': self.initial, 'smoothing': self.smoothing,
                'theta': [round(v, 6) for v in self.theta],
                'scale': [round(v, 6) for v in self.scale],
                'misses': list(self.misses), 'seen': list(self.seen)}

    def load(self, data: Mapping[str, Any]) -> None:
        """Carry over the learnt factors of a stored state (same level)."""
        if float(data.get('level', self.level)) != self.level:
            return  # another quantile: start again
        theta = [float(v) for v in data.get('theta', [])]
        scale = [float(v) for v in data.get('scale', [])]
        if len(theta) != len(scale) or not all(
                math.isfinite(v) for v in theta + scale):
            raise ValueError('bad quantile state')
        self.theta, self.scale = theta, scale
        n = len(theta)
        self.misses = ([int(v) for v in data.get('misses', [])] + [0] * n)[:n]
        self.seen = ([int(v) for v in data.get('seen', [])] + [0] * n)[:n]
