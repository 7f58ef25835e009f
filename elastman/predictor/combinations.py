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
"""Online combinations of the forecasters of one series.

Every round each forecaster gives a path over the horizon; a combination
turns them into one answer with two parts:

``values``
    the point forecast of each step;
``peak``
    ``peak[k]``, the forecast of the highest value among the first ``k + 1``
    steps, which is what the actuator plans on.

It learns from the forecasts that matured (:class:`~elastman.predictor.paths.
Matured`): at each lead, how far each forecaster's point and peak were from
what happened. The combinations:

``majority`` / ``average``
    OnlineElastMan's weighted majority (:class:`WeightedMajority`): the
    forecast of the heaviest forecaster, or the weight-averaged forecast; the
    peak is the running peak of that path.
``mean`` / ``median``
    the plain mean or median of the forecasters that answered, step by step
    (the peak: of their running peaks).
``select``
    per lead, and separately for the point and the peak, the candidate with
    the lowest discounted absolute relative error, the candidates being every
    forecaster, the mean and the median (follow the leader over forecasters
    and their combinations).
``hedge``
    per lead, exponentially weighted averaging (Hedge) over the same
    candidates: weight ``exp(-eta * discounted error)``.
``switch``
    per lead, hedge's own answer or the candidate with the lowest long-run
    error (follow the leader over hedge and its candidates).

For ``select`` and ``hedge`` the point's candidates are judged by default
on their errors at each lead (``point_scope``), the peak's on one loss
pooled over the leads (``scope``: after a change the short leads tell
first); a point is never above the peak of the steps up to it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

import numpy as np

from elastman.predictor.paths import Matured

#: How :class:`Select` and :class:`Hedge` judge a candidate at a lead: by
#: its errors at that lead (``lead``), by one loss for every lead from all
#: the matured forecasts (``pooled``), or by the sum of both (``both``).
SCOPES = ('both', 'pooled', 'lead')

#: A relative error above this counts as this much (a forecast ten times
#: the actual is no more of a miss than one twice it).
MAX_ERROR = 1.0

#: The ``[predictor]`` options of the combination rules (each rule takes
#: those it knows).
OPTIONS = ('discount', 'eta', 'relative_eta', 'switch_discount',
           'switch_min_rounds')


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


@dataclasses.dataclass
class Combined:
    """A combination's answer for one round."""

    values: np.ndarray
    peak: np.ndarray
    chosen: Optional[str]
    weights: Dict[str, float]
    missed: List[str] = dataclasses.field(default_factory=list)


def relative_errors(predicted: np.ndarray, actual: float) -> np.ndarray:
    """Capped relative errors; a missing forecast (NaN) stays NaN."""
    err = np.abs(np.asarray(predicted, float) - actual) / max(abs(actual),
                                                              1e-9)
    return np.minimum(err, MAX_ERROR)


class Combination:
    """Base class: learn from matured forecasts, combine this round's paths.

    :param names: the forecasters, in the order of the rows of the paths.
    """

    name = 'combination'

    def __init__(self, names: Sequence[str], **_: Any) -> None:
        self.names = list(names)

    def learn(self, matured: Sequence[Matured]) -> List[str]:
        """Take in the forecasts that matured with one new point; return the
        forecasters this round counts as having missed (if the rule has
        such a notion).
        """
        return []

    def combine(self, paths: np.ndarray) -> Combined:
        """Combine ``paths`` (forecasters x steps, NaN rows: no answer)."""
        raise NotImplementedError

    def to_dict(self) -> Dict[str, Any]:
        return {}

    def load(self, data: Mapping[str, Any]) -> None:
        """Carry over a stored state (of the same rule)."""


def _running_peak(paths: np.ndarray) -> np.ndarray:
    return np.fmax.accumulate(paths, axis=-1)


def _answered(paths: np.ndarray) -> np.ndarray:
    return np.isfinite(paths[:, 0]) if paths.size else np.zeros(0, bool)


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
        ok = _answered(paths)
        preds = {n: paths[i] for i, n in enumerate(self.names) if ok[i]}
        chosen = self.wm.choose(preds)
        values = (self.wm.average(preds) if self.averaged
                  else np.asarray(preds[chosen], float))
        return Combined(values, _running_peak(values), chosen,
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


class Mean(Combination):
    """The plain mean (``median``: median) of the forecasters that answered."""

    name = 'mean'
    reduce = staticmethod(np.mean)

    def combine(self, paths: np.ndarray) -> Combined:
        ok = _answered(paths)
        use = paths[ok]
        values = self.reduce(use, axis=0)
        peak = self.reduce(_running_peak(use), axis=0)
        share = 1.0 / max(int(ok.sum()), 1)
        return Combined(values, np.fmax.accumulate(peak), self.name,
                        {n: share for i, n in enumerate(self.names) if ok[i]})


class Median(Mean):
    name = 'median'
    reduce = staticmethod(np.median)


def _borrow_unscored(table: np.ndarray, scored: np.ndarray) -> np.ndarray:
    """``table`` (candidates x leads) with each column not ``scored`` taken
    from the next scored lead, or the last scored one beyond it.
    """
    idx = np.flatnonzero(scored)
    if idx.size:
        for k in np.flatnonzero(~scored):
            later = idx[idx >= k]
            table[:, k] = table[:, later[0] if later.size else idx[-1]]
    return table


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
        return _borrow_unscored(self.loss[:, :leads].copy(),
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
        kc = self._extend(_running_peak(paths))
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
        ok = _answered(paths)
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
        return _borrow_unscored(mean, scored)

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
        kc = np.vstack([inner.peak, Select._extend(_running_peak(paths))])
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


#: Combination rules by name.
COMBINATIONS = {
    'majority': lambda names, **kw: Majority(names, average=False, **kw),
    'average': lambda names, **kw: Majority(names, average=True, **kw),
    'mean': Mean,
    'median': Median,
    'select': Select,
    'hedge': Hedge,
    'switch': Switch,
}


def make(rule: str, names: Sequence[str], **options: Any) -> Combination:
    """A combination by rule name (:data:`COMBINATIONS`)."""
    try:
        factory = COMBINATIONS[rule]
    except KeyError:
        raise ValueError('unknown combination %r (one of %s)'
                         % (rule, ', '.join(COMBINATIONS)))
    return factory(names, **options)
