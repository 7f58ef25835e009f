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
next ``k + 1`` steps.  It is the peak forecast times a factor learnt per lead
``k`` from how earlier peak forecasts at that lead turned out.

The factor is conformal: the score of a matured forecast is the log ratio of
the actual peak to the forecast peak (scale-free, so scores of a quiet
period hold for a busy one), and the factor is the exponential of the
split-conformal ``level`` quantile of the last ``window`` scores at that
lead: of ``n`` scores, the ``ceil((n + 1) * level)``-th smallest. While a
lead has too few scores for that rank (fewer than 9 at 0.9; a lead of ``k``
steps has its first score only ``k + 1`` rounds after the first forecast),
its factor is the largest score it has seen (before its first score, the
shorter lead's). Because
workloads change regime, the quantile's level is adapted online as in
Adaptive Conformal Inference (Gibbs and Candès, 2021): after each matured
forecast it moves up by ``gamma * level`` on a miss and down by
``gamma * (1 - level)`` otherwise, so that over a long stretch the bound is
exceeded in about ``1 - level`` of the rounds.  A miss is the actual peak
above the bound that was given with the forecast ``k + 1`` rounds earlier
(the bound that was relied on, after the clamps of :meth:`upper`), not
above the factor as it stands when the forecast matures: a factor learnt
since then has moved with the very scores that would be judged.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Mapping, Optional

import numpy as np

#: Peaks below this are clipped before taking logs (an idle series).
_TINY = 1e-6
#: Scores needed at a lead before its level is adapted.
MIN_SCORES = 10
#: Default level of the bound ([predictor]quantile).
LEVEL = 0.9
#: Default step of the level's adaptation ([predictor]quantile_gamma).
GAMMA = 0.02


def conformal_rank(n: int, level: float) -> Optional[int]:
    """Rank (1 = smallest) of the split-conformal ``level`` quantile of
    ``n`` scores: ``ceil((n + 1) * level)``, or None when that is above
    ``n`` (too few scores to bound at this level).

    With exchangeable scores, a new score is at or below the score of that
    rank with probability at least ``level``.
    """
    if n <= 0:
        return None
    rank = max(1, int(math.ceil((n + 1) * min(max(level, 0.0), 1.0)
                                - 1e-9)))
    return rank if rank <= n else None


class PeakQuantile:
    """Online ``level`` quantile of the forecast peak's error, per lead.

    :param level: the quantile (nominal coverage), in (0, 1).
    :param window: scores kept per lead.
    :param gamma: step of the adaptation of the quantile's level.
    :param initial: log factor used before any score (0.1: 10% above).
    """

    def __init__(self, level: float = LEVEL, window: int = 400,
                 gamma: float = GAMMA, initial: float = 0.1) -> None:
        if not 0.0 < level < 1.0:
            raise ValueError('level must be in (0, 1)')
        if window < MIN_SCORES:
            raise ValueError('window must be at least %d' % MIN_SCORES)
        self.level = float(level)
        self.window = int(window)
        self.gamma = float(gamma)
        self.initial = float(initial)
        self._scores = np.full((0, self.window), np.nan, dtype=np.float32)
        self._count = np.zeros(0, dtype=np.int64)   # scores ever seen
        self._alpha: List[float] = []               # adapted miss rate
        self._stored: List[float] = []              # factors of a restart
        self.misses: List[int] = []
        self._theta_cache: np.ndarray | None = None

    def _grow(self, leads: int) -> None:
        have = self._count.size
        if leads <= have:
            return
        extra = leads - have
        self._scores = np.vstack([self._scores, np.full(
            (extra, self.window), np.nan, dtype=np.float32)])
        self._count = np.r_[self._count, np.zeros(extra, dtype=np.int64)]
        self._alpha += [1.0 - self.level] * extra
        self.misses += [0] * extra

    def theta(self, leads: int) -> np.ndarray:
        """The log factor of each of ``leads`` leads."""
        self._grow(leads)
        if self._theta_cache is not None and self._theta_cache.size >= leads:
            return self._theta_cache[:leads]
        n = self._count.size
        out = np.empty(n)
        filled = np.minimum(self._count, self.window)
        ordered = np.sort(self._scores, axis=1)  # NaNs last
        shorter = self.initial
        for k in range(n):
            stored = self._stored[k] if k < len(self._stored) else None
            out[k] = self._lead_theta(ordered[k, :filled[k]],
                                      1.0 - self._alpha[k], stored, shorter)
            shorter = out[k]
        self._theta_cache = out
        return out[:leads]

    def _current(self, lead: int) -> float:
        """The log factor of one lead, sorting only its own scores (the
        others' are needed only while it has none).
        """
        if self._theta_cache is not None and self._theta_cache.size > lead:
            return float(self._theta_cache[lead])
        filled = min(int(self._count[lead]), self.window)
        if not filled:
            return float(self.theta(lead + 1)[lead])
        stored = self._stored[lead] if lead < len(self._stored) else None
        return self._lead_theta(np.sort(self._scores[lead, :filled]),
                                1.0 - self._alpha[lead], stored, 0.0)

    @staticmethod
    def _lead_theta(ordered: np.ndarray, level: float,
                    stored: Optional[float], shorter: float) -> float:
        """The factor of one lead from its sorted scores.

        With too few scores for the level: the factor a restarted predictor
        stored, else the largest score seen, else the shorter lead's factor.
        """
        rank = conformal_rank(ordered.size, level)
        if rank is not None:
            return float(ordered[rank - 1])
        if stored is not None:
            return stored
        return float(ordered[-1]) if ordered.size else shorter

    def learn(self, lead: int, predicted_peak: float, actual_peak: float,
              bound: Optional[float] = None) -> bool:
        """Score one matured peak forecast; return whether it was missed.

        ``bound`` is the upper bound given with the forecast; without one
        (e.g. the first forecasts after a restart) the miss is judged
        against the lead's current factor.
        """
        if not (math.isfinite(predicted_peak) and math.isfinite(actual_peak)):
            return False
        self._grow(lead + 1)
        score = math.log(max(actual_peak, _TINY) / max(predicted_peak, _TINY))
        if bound is not None and math.isfinite(bound):
            miss = actual_peak > bound
        else:
            miss = score > self._current(lead)
        if min(self._count[lead], self.window) >= MIN_SCORES:
            a = self._alpha[lead] + self.gamma * (
                (1.0 - self.level) - float(miss))
            self._alpha[lead] = min(max(a, -0.5), 1.0)
        self._scores[lead, self._count[lead] % self.window] = score
        self._count[lead] += 1
        self.misses[lead] += int(miss)
        self._theta_cache = None
        return miss

    def upper(self, path: Any) -> np.ndarray:
        """The bound on the running peak of the peak forecast ``path``."""
        p = np.maximum.accumulate(np.asarray(path, dtype=float))
        if p.size == 0:
            return p
        factor = np.exp(self.theta(p.size))
        # never below the forecast peak, and never lower for a longer lead
        # (the peak of more steps is no lower)
        return np.maximum.accumulate(np.maximum(p * factor, p))

    @property
    def seen(self) -> List[int]:
        return [int(c) for c in self._count]

    def to_dict(self) -> Dict[str, Any]:
        """The factors and levels (not the windows: after a restart the
        stored factors stand in until each lead has scores again).
        """
        n = self._count.size
        return {'level': self.level, 'window': self.window,
                'gamma': self.gamma,
                'theta': [round(float(v), 6) for v in self.theta(n)],
                'alpha': [round(v, 6) for v in self._alpha],
                'misses': list(self.misses), 'seen': self.seen}

    def load(self, data: Mapping[str, Any]) -> None:
        """Carry over the learnt factors of a stored state (same level)."""
        if float(data.get('level', self.level)) != self.level:
            return  # another quantile: start again
        theta = [float(v) for v in data.get('theta', [])]
        alpha = [float(v) for v in data.get('alpha', [])]
        if len(alpha) != len(theta) or not all(
                math.isfinite(v) for v in theta + alpha):
            raise ValueError('bad quantile state')
        self._grow(len(theta))
        self._stored = theta
        self._alpha[:len(alpha)] = alpha
        self._theta_cache = None
