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
"""``switch``: per lead, hedge's answer or the candidate with the lowest
long-run error."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Sequence

import numpy as np

from elastman.predictor.combinations.base import borrow_unscored
from elastman.predictor.combinations.base import Combination
from elastman.predictor.combinations.base import Combined
from elastman.predictor.combinations.base import MAX_ERROR
from elastman.predictor.combinations.base import relative_errors
from elastman.predictor.combinations.base import running_peak
from elastman.predictor.combinations.select import Hedge
from elastman.predictor.combinations.select import Select
from elastman.predictor.paths import Matured


class _MeanLosses:
    """Discounted mean error of each candidate at each lead, over the
    rounds it answered.

    :param min_rounds: the discounted number of scored rounds a candidate
        other than the first (the reference, which is never left out) needs
        at a lead before it is judged there.
    """

    def __init__(self, candidates: int, discount: float,
                 min_rounds: float = 0.0) -> None:
        self.discount = discount
        self.min_rounds = float(min_rounds)
        self.loss = np.zeros((candidates, 0))
        self.weight = np.zeros((candidates, 0))

    def _grow(self, leads: int) -> None:
        if leads > self.loss.shape[1]:
            extra = np.zeros((self.loss.shape[0],
                              leads - self.loss.shape[1]))
            self.loss = np.hstack([self.loss, extra])
            self.weight = np.hstack([self.weight, extra])

    def age(self) -> None:
        self.loss *= self.discount
        self.weight *= self.discount

    def add(self, lead: int, errors: np.ndarray) -> None:
        self._grow(lead + 1)
        ok = np.isfinite(errors)
        self.loss[ok, lead] += errors[ok]
        self.weight[ok, lead] += 1.0

    def at(self, leads: int) -> np.ndarray:
        """Mean loss per candidate and lead for ``leads`` leads: infinite
        for a candidate with less than half the evidence of the one with
        the most (a forecaster that started late is not judged on
        a few lucky rounds) or, but for the first, less than
        ``min_rounds``; a lead never scored borrows the longest scored
        one; all zero before any scoring.
        """
        self._grow(leads)
        w = self.weight[:, :leads]
        enough = w >= 0.5 * w.max(axis=0, keepdims=True)
        enough[1:] &= w[1:] >= self.min_rounds
        mean = np.where(enough & (w > 0),
                        self.loss[:, :leads] / np.maximum(w, 1e-12), np.inf)
        scored = w.max(axis=0) > 0
        if not scored.any():
            return np.zeros_like(mean)
        return borrow_unscored(mean, scored)

    def to_dict(self) -> Dict[str, Any]:
        return {'loss': np.round(self.loss, 6).tolist(),
                'weight': np.round(self.weight, 5).tolist()}

    def load(self, data: Mapping[str, Any]) -> None:
        loss = np.asarray(data['loss'], dtype=float)
        weight = np.asarray(data['weight'], dtype=float)
        if loss.ndim != 2 or loss.shape[0] != self.loss.shape[0] or \
                weight.shape != loss.shape or \
                not np.all(np.isfinite(loss)) or \
                not np.all(np.isfinite(weight)):
            raise ValueError('bad combination state')
        self.loss, self.weight = loss, weight


class Switch(Combination):
    """Follow, per lead, whichever of Hedge, the forecasters, their mean
    and their median has the lowest long-run error, separately for the
    point and the peak.

    Hedge (:class:`Hedge`, with the options given) forgets in a few points,
    so it follows a change quickly but stays close to an average of its
    candidates where one forecaster is the best all along; over that
    forecaster, every switch back costs its lag. This rule judges Hedge's
    own answers beside every single candidate's, each at its own lead, on
    a memory of about ``1 / (1 - switch_discount)`` points, and answers
    with the lowest: Hedge until one candidate has been better for long.
    A peak candidate worse than Hedge on the recent errors pooled over the
    leads gives way to Hedge, since a long lead's errors arrive a horizon
    after a change. A point candidate is followed only once it has been
    scored at its lead for ``switch_min_rounds`` (discounted) rounds:
    until then Hedge answers, so that a series' first rounds do not follow
    whichever candidate was lucky on a few points. The peak has no such
    minimum: its long leads are scored a horizon late, and Hedge's peak
    would stand for that long.

    :param switch_discount: factor applied to the long-run errors at each
        new point.
    :param switch_min_rounds: the discounted number of scored rounds a
        point candidate needs at a lead before it may replace Hedge there.
    """

    name = 'switch'

    def __init__(self, names: Sequence[str], switch_discount: float = 0.99,
                 switch_min_rounds: float = 30.0, **options: Any) -> None:
        super().__init__(names)
        if not 0.0 < switch_discount <= 1.0:
            raise ValueError('switch_discount must be in (0, 1]')
        if switch_min_rounds < 0:
            raise ValueError('switch_min_rounds must be >= 0')
        self.inner = Hedge(names, **options)
        self.candidates = ['hedge'] + self.inner.candidates
        self.point = _MeanLosses(len(self.candidates), switch_discount,
                                 switch_min_rounds)
        self.peak = _MeanLosses(len(self.candidates), switch_discount)
        # the peaks' recent errors, pooled over the leads as Hedge's are:
        # a candidate better in the long run but not lately gives way to
        # Hedge (after a change, a long lead's errors are known late)
        self.recent = _MeanLosses(len(self.candidates),
                                  self.inner.peak_all.discount)
        # (age, point paths, peak paths) of the candidates, newest first
        self._pending: List[List[Any]] = []

    def learn(self, matured: Sequence[Matured]) -> List[str]:
        self.inner.learn(matured)
        by_lead = {m.lead: m for m in matured}
        self.point.age()
        self.peak.age()
        pooled, weights = [], []
        for entry in self._pending:
            entry[0] += 1
            lead = entry[0] - 1
            m = by_lead.get(lead)
            if m is None or lead >= entry[1].shape[1]:
                continue
            self.point.add(lead, relative_errors(entry[1][:, lead], m.actual))
            err = relative_errors(entry[2][:, lead], m.actual_peak)
            self.peak.add(lead, err)
            pooled.append(np.where(np.isfinite(err), err, MAX_ERROR))
            weights.append(1.0 / (lead + 1))
        if pooled:
            self.recent.age()
            self.recent.add(0, np.average(pooled, axis=0, weights=weights))
        self._pending = [e for e in self._pending if e[0] < e[1].shape[1]]
        return []

    def combine(self, paths: np.ndarray) -> Combined:
        steps = paths.shape[1]
        inner = self.inner.combine(paths)
        pc = np.vstack([inner.values, Select._extend(paths)])
        kc = np.vstack([inner.peak, Select._extend(running_peak(paths))])
        self._pending.insert(0, [0, pc.astype(np.float32),
                                 kc.astype(np.float32)])
        cols = np.arange(steps)
        # Hedge is candidate 0, so it wins a tie (and every lead before
        # any scoring)
        point_pick = Select._pick(pc, self.point.at(steps))
        peak_pick = Select._pick(kc, self.peak.at(steps))
        recent = self.recent.at(1)[:, 0]
        peak_pick[recent[peak_pick] > recent[0]] = 0
        peak = np.fmax.accumulate(kc[peak_pick, cols])
        values = np.fmin(pc[point_pick, cols], peak)
        last = int(peak_pick[-1])
        if last == 0:
            chosen, weights = inner.chosen, inner.weights
        else:
            w = np.zeros(len(self.candidates) - 1)
            w[last - 1] = 1.0
            chosen = self.candidates[last]
            weights = self.inner.forecaster_weights(w, paths)
        return Combined(values, peak, chosen, weights)

    def to_dict(self) -> Dict[str, Any]:
        return {'candidates': self.candidates, 'inner': self.inner.to_dict(),
                'point': self.point.to_dict(), 'peak': self.peak.to_dict(),
                'recent': self.recent.to_dict()}

    def load(self, data: Mapping[str, Any]) -> None:
        if list(data.get('candidates', [])) != self.candidates:
            return  # another pool: start again
        self.inner.load(data.get('inner') or {})
        self.point.load(data['point'])
        self.peak.load(data['peak'])
        self.recent.load(data['recent'])
