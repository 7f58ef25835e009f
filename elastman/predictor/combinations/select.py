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
"""Follow the leader (``select``) and exponentially weighted averaging
(``hedge``) over the forecasters and their mean and median, per lead."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Sequence

import numpy as np

from elastman.predictor.combinations.base import answered
from elastman.predictor.combinations.base import borrow_unscored
from elastman.predictor.combinations.base import Combination
from elastman.predictor.combinations.base import Combined
from elastman.predictor.combinations.base import MAX_ERROR
from elastman.predictor.combinations.base import relative_errors
from elastman.predictor.combinations.base import running_peak
from elastman.predictor.combinations.base import SCOPES
from elastman.predictor.paths import Matured


class _LeadLosses:
    """Discounted errors of each candidate at each lead."""

    def __init__(self, candidates: int, discount: float) -> None:
        self.discount = discount
        self.loss = np.zeros((candidates, 0))
        self.count = np.zeros(0)

    def _grow(self, leads: int) -> None:
        if leads > self.loss.shape[1]:
            extra = leads - self.loss.shape[1]
            self.loss = np.hstack([self.loss,
                                   np.zeros((self.loss.shape[0], extra))])
            self.count = np.r_[self.count, np.zeros(extra)]

    def age(self) -> None:
        self.loss *= self.discount
        self.count *= self.discount

    def add(self, lead: int, errors: np.ndarray) -> None:
        self._grow(lead + 1)
        ok = np.isfinite(errors)
        # a candidate that did not answer is charged the largest error
        self.loss[:, lead] += np.where(ok, errors, MAX_ERROR)
        self.count[lead] += 1

    def at(self, leads: int) -> np.ndarray:
        """Loss per candidate and lead for ``leads`` leads; a lead never
        scored borrows the longest scored one.
        """
        self._grow(leads)
        return borrow_unscored(self.loss[:, :leads].copy(),
                               self.count[:leads] > 0)

    def to_dict(self) -> Dict[str, Any]:
        return {'loss': np.round(self.loss, 5).tolist(),
                'count': np.round(self.count, 5).tolist()}

    def load(self, data: Mapping[str, Any]) -> None:
        loss = np.asarray(data['loss'], dtype=float)
        count = np.asarray(data['count'], dtype=float)
        if loss.ndim != 2 or loss.shape[0] != self.loss.shape[0] or \
                count.shape != (loss.shape[1],) or \
                not np.all(np.isfinite(loss)):
            raise ValueError('bad combination state')
        self.loss, self.count = loss, count


class Select(Combination):
    """Follow the leader, per lead, over the forecasters, their mean and
    their median, separately for the point and the peak.

    :param discount: factor applied to the errors at each new point (the
        memory is about ``1 / (1 - discount)`` points).
    :param scope: how the peak's candidates are judged (:data:`SCOPES`).
    :param point_scope: how the point's candidates are judged.
    """

    name = 'select'
    EXTRA = ('mean', 'median')

    def __init__(self, names: Sequence[str], discount: float = 0.8,
                 scope: str = 'pooled', point_scope: str = 'lead',
                 **_: Any) -> None:
        super().__init__(names)
        if not 0.0 < discount <= 1.0:
            raise ValueError('discount must be in (0, 1]')
        if scope not in SCOPES or point_scope not in SCOPES:
            raise ValueError('scope must be one of %s' % (SCOPES,))
        self.scope = scope
        self.point_scope = point_scope
        self.candidates = list(self.EXTRA) + self.names
        self.point = _LeadLosses(len(self.candidates), discount)
        self.peak = _LeadLosses(len(self.candidates), discount)
        self.point_all = _LeadLosses(len(self.candidates), discount)
        self.peak_all = _LeadLosses(len(self.candidates), discount)

    @staticmethod
    def _extend(rows: np.ndarray) -> np.ndarray:
        """Candidates' forecasts: mean, median, then each forecaster (rows
        of forecasters, or one value per forecaster).
        """
        ok = np.isfinite(rows if rows.ndim == 1 else rows[:, 0])
        if ok.any():
            mean = np.mean(rows[ok], axis=0)
            median = np.median(rows[ok], axis=0)
        else:
            mean = median = np.full(rows.shape[1:], np.nan)
        if rows.ndim == 1:
            return np.r_[mean, median, rows]
        return np.vstack([mean, median, rows])

    def learn(self, matured: Sequence[Matured]) -> List[str]:
        if not matured:
            return []
        self._learn(matured, 'point', 'actual', self.point_scope,
                    self.point, self.point_all)
        self._learn(matured, 'peak', 'actual_peak', self.scope,
                    self.peak, self.peak_all)
        return []

    def _learn(self, matured: Sequence[Matured], key: str, actual: str,
               scope: str, lead: _LeadLosses, pooled: _LeadLosses) -> None:
        """Add the matured forecasts' errors of ``key`` (point or peak)
        against ``actual`` to the tables its ``scope`` uses.
        """
        err = np.array([relative_errors(self._extend(getattr(m, key)),
                                        getattr(m, actual))
                        for m in matured])
        if scope != 'lead':
            # one loss for every lead: the errors of all the forecasts the
            # point matured, the one made k rounds ago weighing 1/k (after
            # a change the short leads tell first)
            w = np.array([1.0 / (m.lead + 1) for m in matured])
            pooled.age()
            pooled.add(0, np.average(np.where(np.isfinite(err), err,
                                              MAX_ERROR), axis=0, weights=w))
        if scope != 'pooled':
            lead.age()
            for m, e in zip(matured, err):
                lead.add(m.lead, e)

    @staticmethod
    def _loss(lead: _LeadLosses, pooled: _LeadLosses, steps: int,
              scope: str) -> np.ndarray:
        if scope == 'lead':
            return lead.at(steps)
        if scope == 'pooled':
            return pooled.at(steps)
        return lead.at(steps) + pooled.at(steps)

    @staticmethod
    def _pick(cands: np.ndarray, loss: np.ndarray) -> np.ndarray:
        """Per lead, the candidate with the lowest loss among those that
        answered (the first on a tie).
        """
        masked = np.where(np.isfinite(cands), loss, np.inf)
        return np.argmin(masked, axis=0)

    def _mix(self, cands: np.ndarray, loss: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
        """Combined path and the weights of the candidates at each lead."""
        pick = self._pick(cands, loss)
        w = np.zeros_like(cands)
        w[pick, np.arange(cands.shape[1])] = 1.0
        return cands[pick, np.arange(cands.shape[1])], w

    def combine(self, paths: np.ndarray) -> Combined:
        steps = paths.shape[1]
        pc = self._extend(paths)
        kc = self._extend(running_peak(paths))
        values, _ = self._mix(pc, self._loss(self.point, self.point_all,
                                             steps, self.point_scope))
        peak, w = self._mix(kc, self._loss(self.peak, self.peak_all, steps,
                                           self.scope))
        last = w[:, -1]
        chosen = self.candidates[int(np.argmax(last))]
        peak = np.fmax.accumulate(peak)
        # a point is no higher than the peak of the steps up to it
        values = np.fmin(values, peak)
        return Combined(values, peak, chosen,
                        self.forecaster_weights(last, paths))

    def forecaster_weights(self, w: np.ndarray, paths: np.ndarray
                           ) -> Dict[str, float]:
        """Weight of each forecaster in the horizon's peak (the mean's and
        the median's shares spread over the forecasters that answered).
        """
        ok = answered(paths)
        spread = (w[0] + w[1]) / max(int(ok.sum()), 1)
        return {n: float(w[2 + i] + (spread if ok[i] else 0.0))
                for i, n in enumerate(self.names)}

    def to_dict(self) -> Dict[str, Any]:
        return {'candidates': self.candidates, 'scope': self.scope,
                'point_scope': self.point_scope,
                'point': self.point.to_dict(), 'peak': self.peak.to_dict(),
                'point_all': self.point_all.to_dict(),
                'peak_all': self.peak_all.to_dict()}

    def load(self, data: Mapping[str, Any]) -> None:
        if list(data.get('candidates', [])) != self.candidates or \
                data.get('scope', 'lead') != self.scope or \
                data.get('point_scope', self.scope) != self.point_scope:
            return  # another pool or scope: start again
        self.point.load(data['point'])
        self.peak.load(data['peak'])
        self.point_all.load(data['point_all'])
        self.peak_all.load(data['peak_all'])


#: A best loss below this counts as this much (a perfect candidate).
_TINY_LOSS = 1e-9


class Hedge(Select):
    """Exponentially weighted averaging (Hedge), per lead, over the same
    candidates as :class:`Select`: weights ``exp(-eta * loss)``.

    :param eta: learning rate (per unit of discounted relative error).
    :param relative_eta: when above 0, the learning rate per unit of excess
        loss over the best candidate's, relative to the best's, in place of
        ``eta``: the weights then do not depend on the scale of the errors
        (a noiseless series' candidates differ by tenths of a percent,
        a bursty one's by whole percents).
    """

    name = 'hedge'

    def __init__(self, names: Sequence[str], discount: float = 0.8,
                 eta: float = 20.0, scope: str = 'pooled',
                 point_scope: str = 'lead', relative_eta: float = 0.0,
                 **kwargs: Any) -> None:
        super().__init__(names, discount, scope, point_scope, **kwargs)
        self.eta = float(eta)
        self.relative_eta = float(relative_eta)

    def _mix(self, cands: np.ndarray, loss: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
        ok = np.isfinite(cands)
        masked = np.where(ok, loss, np.inf)
        best = masked.min(axis=0)
        rate = (self.relative_eta / np.maximum(best, _TINY_LOSS)
                if self.relative_eta > 0 else self.eta)
        w = np.where(ok, np.exp(-rate * (masked - best)), 0.0)
        w /= w.sum(axis=0)
        return np.sum(w * np.where(ok, cands, 0.0), axis=0), w
