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
"""Weighted-majority selection over the forecasters, per cluster and metric.

Each series (one cluster, one metric) owns one instance of every enabled
forecaster and a :class:`WeightedMajority` selector.  A round:

1. the forecasts made in earlier rounds for the value just observed are
   compared with it: last round's one-step forecast, the two-step forecast
   of the round before, and so on over the horizon (a controller acts on the
   whole horizon, so a forecaster whose long roll-outs drift is a miss even
   when its next step is right); every forecaster whose mean relative error
   exceeded the tolerance, and the best error of the round by more than the
   tolerance, has its weight multiplied by the penalty ``m`` (0 <= m < 1);
   weights are renormalised so the largest is 1, and kept above a floor so a
   long-penalised forecaster can win again when the workload changes shape;
2. every forecaster updates on the history window and forecasts ``horizon``
   steps; one that fails is skipped for this round and logged;
3. ``majority`` mode returns the forecast of the heaviest forecaster (ties go
   to the lowest recent error), ``average`` mode the weight-averaged forecast.
"""

import dataclasses
import threading
import zlib
from typing import (
    Any,
    Dict,
    Hashable,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
)

import numpy as np
from oslo_log import log as logging

from elastman.common import loader
from elastman.predictor.forecasters.base import NotEnoughHistory
from elastman.predictor.forecasters import NAMESPACE
from elastman.predictor import history as history_mod
from elastman.predictor import intervals

LOG = logging.getLogger(__name__)

MODES = ('majority', 'average')
#: Name reported when no forecaster could run and the last value is repeated.
FALLBACK = 'last_value'


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
class Forecast:
    """One round's forecast of one series."""

    values: List[float]
    chosen: Optional[str]
    mode: str
    weights: Dict[str, float]
    predictions: Dict[str, List[float]]
    failed: Dict[str, str]
    missed: List[str]
    #: ``upper[k]``: the ``level`` quantile of the highest value among the
    #: next ``k + 1`` steps (:mod:`elastman.predictor.intervals`).
    upper: List[float] = dataclasses.field(default_factory=list)
    level: Optional[float] = None

    @property
    def value(self) -> Optional[float]:
        """The next-step forecast (``None`` without any history)."""
        return self.values[0] if self.values else None

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)


# A forecast off by more than this (relative) is a miss, however far off:
# after a step every path made before it is off by up to 10x, and uncapped
# those errors outweigh the new paths for a horizon's worth of rounds.
MAX_PATH_ERROR = 1.0


class SeriesPredictor:
    """Forecaster instances, selector and pending forecasts of one series."""

    def __init__(
        self,
        classes: Mapping[str, type],
        selector: WeightedMajority,
        forecaster_kwargs: Optional[Mapping[str, Any]] = None,
        quantile: Optional[intervals.PeakQuantile] = None,
    ) -> None:
        kwargs = dict(forecaster_kwargs or {})
        self.selector = selector
        self.quantile = quantile or intervals.PeakQuantile()
        self.forecasters = {n: cls(**kwargs) for n, cls in classes.items()}
        # forecast paths of earlier rounds, newest first: [steps since
        # made, {forecaster: path}, running peak of the answer, highest
        # value seen since] (float32: a few KB per series at the default
        # horizon; only the newest is persisted)
        self.past: List[List[Any]] = []
        self._failing: set = set()
        # full-fit count of each heavy-state forecaster when last saved
        self._heavy_saved: Dict[str, int] = {}

    @property
    def pending(self) -> Dict[str, List[float]]:
        """Last round's forecasts."""
        if not self.past:
            return {}
        return {n: [float(v) for v in p] for n, p in self.past[0][1].items()}

    def _score_peaks(self, history: np.ndarray, advanced: int) -> None:
        """Teach the quantile the peaks that matured with the new points."""
        new = history[-advanced:] if advanced <= history.size else history
        for entry in self.past:
            peak = entry[2]
            if peak is None:
                continue
            age = entry[0]
            for v in new:
                age += 1
                entry[3] = max(entry[3], float(v))
                if age <= len(peak):
                    self.quantile.learn(age - 1, float(peak[age - 1]),
                                        entry[3])

    def _score(self, history: np.ndarray, advanced: int) -> List[str]:
        if advanced < 1 or not self.past or history.size == 0:
            return []
        self._score_peaks(history, advanced)
        actual = float(history[-1])
        errors: Dict[str, List[float]] = {}
        ages: Dict[str, List[int]] = {}
        for entry in self.past:
            entry[0] += advanced
            age, paths = entry[0], entry[1]
            for name, path in paths.items():
                if len(path) >= age:
                    err = self.selector.relative_error(float(path[age - 1]),
                                                       actual)
                    errors.setdefault(name, []).append(min(err, MAX_PATH_ERROR))
                    ages.setdefault(name, []).append(age)
        self.past = [e for e in self.past
                     if any(len(p) > e[0] for p in e[1].values())
                     or (e[2] is not None and len(e[2]) > e[0])]
        if not errors:
            return []
        # a path made k rounds ago weighs 1/k: the one-step forecast counts
        # most, and after a change in the workload the paths made since
        # outweigh the older ones within a few rounds
        return self.selector.penalise_errors(
            {n: float(np.average(e, weights=1.0 / np.asarray(ages[n])))
             for n, e in errors.items()})

    def _run(
        self, name: str, fc: Any, history: np.ndarray, horizon: int
    ) -> np.ndarray:
        try:
            fc.update(history)
            return fc.predict(horizon)
        finally:
            fc.release()

    def step(
        self,
        history: Sequence[Optional[float]],
        horizon: int = 1,
        mode: str = 'majority',
        advanced: int = 1,
    ) -> Forecast:
        """Score last round, update every forecaster, forecast this round."""
        y = history_mod.clean(history)
        missed = self._score(y, advanced)
        preds: Dict[str, np.ndarray] = {}
        failed: Dict[str, str] = {}
        for name, fc in self.forecasters.items():
            try:
                preds[name] = self._run(name, fc, y, horizon)
                self._failing.discard(name)
            except NotEnoughHistory as exc:
                failed[name] = str(exc)
            except (
                Exception
            ) as exc:  # a broken forecaster never breaks the round
                failed[name] = '%s: %s' % (type(exc).__name__, exc)
                log = LOG.debug if name in self._failing else LOG.warning
                log('Forecaster %s skipped this round: %s', name, failed[name])
                self._failing.add(name)
        if preds:
            if mode == 'average':
                values, chosen = self.selector.average(
                    preds
                ), self.selector.choose(preds)
            else:
                chosen = self.selector.choose(preds)
                values = preds[chosen]
        elif y.size:
            values, chosen = np.full(horizon, float(y[-1])), FALLBACK
        else:
            values, chosen = np.empty(0), None
        values = np.asarray(values, dtype=float)
        peak = np.maximum.accumulate(values) if values.size else None
        self.past.insert(0, [0, {n: np.asarray(p, dtype=np.float32)
                                 for n, p in preds.items()},
                             None if peak is None else
                             peak.astype(np.float32), -np.inf])
        return Forecast(
            values=[float(v) for v in values],
            chosen=chosen,
            mode=mode,
            weights=dict(self.selector.weights),
            predictions={n: [float(v) for v in p] for n, p in preds.items()},
            failed=failed,
            missed=missed,
            upper=[float(v) for v in self.quantile.upper(values)],
            level=self.quantile.level,
        )

    def to_dict(self) -> Dict[str, Any]:
        """The state saved every round: selector, pending forecasts, peak
        quantiles, and the estimated parameters of the forecasters whose
        state is small (:meth:`heavy_state` has the others).
        """
        newest = self.past[0] if self.past else None
        fitted = {}
        for name, fc in self.forecasters.items():
            if not fc.heavy_state:
                state = fc.state()
                if state is not None:
                    fitted[name] = state
        return {
            'selector': self.selector.to_dict(),
            'pending': self.pending,
            'pending_peak': ([] if newest is None or newest[2] is None
                             else [float(v) for v in newest[2]]),
            'quantile': self.quantile.to_dict(),
            'forecasters': fitted,
            'ages': {n: fc.age for n, fc in self.forecasters.items()},
        }

    def heavy_state(self) -> Optional[Dict[str, Any]]:
        """The states of the heavy-state forecasters when one of them was
        re-estimated since the last call (``None`` otherwise): a large state
        is written once per full fit, not every round.
        """
        heavy = {n: fc for n, fc in self.forecasters.items()
                 if fc.heavy_state}
        if all(self._heavy_saved.get(n) == fc.fits
               for n, fc in heavy.items()):
            return None
        out = {}
        for name, fc in heavy.items():
            state = fc.state()
            if state is not None:
                out[name] = state
            self._heavy_saved[name] = fc.fits
        return out

    def _restore(self, states: Mapping[str, Any],
                 ages: Mapping[str, Any]) -> None:
        for name, state in states.items():
            fc = self.forecasters.get(name)
            if fc is None:
                continue
            try:
                fc.restore(state, ages.get(name))
            except ValueError as exc:
                # that forecaster estimates again on its first update
                LOG.warning('Ignoring the stored state of %s: %s', name, exc)
            self._heavy_saved[name] = fc.fits

    def load(self, data: Mapping[str, Any],
             heavy: Optional[Mapping[str, Any]] = None) -> None:
        """Take up a :meth:`to_dict` and a :meth:`heavy_state`."""
        sel = WeightedMajority.from_dict(data['selector'])
        # Keep the configured pool; carry over what is known of it.
        for n in self.selector.names:
            if n in sel.weights:
                self.selector.weights[n] = sel.weights[n]
                self.selector.errors[n] = sel.errors[n]
        self.selector.rounds = sel.rounds
        pending = {n: np.asarray(p, dtype=np.float32)
                   for n, p in data.get('pending', {}).items()
                   if n in self.forecasters}
        peak = np.asarray(data.get('pending_peak') or [], dtype=np.float32)
        self.past = ([[0, pending, peak if peak.size else None, -np.inf]]
                     if pending or peak.size else [])
        if data.get('quantile'):
            self.quantile.load(data['quantile'])
        ages = data.get('ages') or {}
        self._restore(data.get('forecasters') or {}, ages)
        self._restore(heavy or {}, ages)


def load_forecaster_classes(
    names: Optional[Sequence[str]] = None,
) -> Dict[str, type]:
    """Forecaster classes from the ``elastman.forecasters`` namespace: those
    of ``names`` in that order, or all of them (ConfigurationError for one
    that cannot be loaded).
    """
    return loader.classes(NAMESPACE, '[predictor] forecasters', names)


class Ensemble:
    """Forecasts many series: a :class:`SeriesPredictor` per key.

    A key is e.g. ``(cluster id, metric)``.

    The state of a key is :meth:`state` (saved every round),
    :meth:`fitted_state` (saved after a full fit of a forecaster with a large
    state) and :meth:`load_state`: a restarted predictor re-filters with the
    estimated parameters instead of estimating them again.
    """

    def __init__(
        self,
        names: Optional[Sequence[str]] = None,
        tolerance: float = 0.05,
        penalty: float = 0.3,
        mode: str = 'majority',
        horizon: int = 1,
        seasonal_periods: Sequence[int] = (),
        refit_interval: int = 10,
        weight_floor: float = 0.05,
        classes: Optional[Mapping[str, type]] = None,
        quantile: float = 0.9,
    ) -> None:
        if mode not in MODES:
            raise ValueError('mode must be one of %s' % (MODES,))
        self.classes = (
            dict(classes)
            if classes is not None
            else load_forecaster_classes(names)
        )
        self.tolerance, self.penalty, self.floor = (
            tolerance,
            penalty,
            weight_floor,
        )
        self.mode, self.horizon = mode, max(1, int(horizon))
        self.seasonal_periods = tuple(seasonal_periods)
        self.refit_interval = max(1, int(refit_interval))
        if not 0.0 < quantile < 1.0:
            raise ValueError('quantile must be in (0, 1)')
        self.quantile = float(quantile)
        self._series: Dict[Hashable, SeriesPredictor] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_conf(cls, conf: Any) -> 'Ensemble':
        """Build from the ``[predictor]`` option group."""
        p = conf.predictor
        period = float(p.period)
        seasons = [
            int(round(s / period))
            for s in p.seasonal_periods
            if s >= 2 * period
        ]
        return cls(
            names=p.forecasters,
            tolerance=p.tolerance,
            penalty=p.penalty,
            mode=p.selection,
            horizon=p.horizon,
            seasonal_periods=seasons,
            refit_interval=p.refit_interval,
            weight_floor=p.weight_floor,
            quantile=p.quantile,
        )

    @property
    def names(self) -> List[str]:
        return list(self.classes)

    def series(self, key: Hashable) -> SeriesPredictor:
        with self._lock:
            sp = self._series.get(key)
            if sp is None:
                offset = zlib.crc32(repr(key).encode()) % self.refit_interval
                sp = SeriesPredictor(
                    self.classes,
                    WeightedMajority(
                        self.names, self.tolerance, self.penalty, self.floor
                    ),
                    {
                        'refit_interval': self.refit_interval,
                        'refit_offset': offset,
                        'seasonal_periods': self.seasonal_periods,
                    },
                    intervals.PeakQuantile(self.quantile),
                )
                self._series[key] = sp
            return sp

    def predict(
        self,
        key: Hashable,
        history: Sequence[Optional[float]],
        horizon: Optional[int] = None,
        advanced: int = 1,
        mode: Optional[str] = None,
    ) -> Forecast:
        """Forecast ``horizon`` steps of series ``key`` from ``history``.

        ``advanced`` is how many new points the history holds since the last
        call for this key (0: nothing to score).  Never raises.
        """
        horizon = self.horizon if horizon is None else max(1, int(horizon))
        mode = mode or self.mode
        try:
            return self.series(key).step(history, horizon, mode, advanced)
        except Exception:  # the library must never take the worker down
            LOG.exception(
                'Forecast of %s failed; repeating the last value', key
            )
            y = history_mod.clean(history)
            values = [float(y[-1])] * horizon if y.size else []
            return Forecast(
                values, FALLBACK if values else None, mode, {}, {}, {}, []
            )

    def state(self, key: Hashable) -> Dict[str, Any]:
        """Serialisable state of ``key``: weights, smoothed errors, last
        round's pending forecasts, and the small forecaster states.
        """
        return self.series(key).to_dict()

    def fitted_state(self, key: Hashable) -> Optional[Dict[str, Any]]:
        """The large forecaster states of ``key`` when they changed since
        the last call (see :meth:`SeriesPredictor.heavy_state`), else
        ``None``.
        """
        return self.series(key).heavy_state()

    def load_state(self, key: Hashable, data: Mapping[str, Any],
                   fitted: Optional[Mapping[str, Any]] = None) -> None:
        try:
            self.series(key).load(data, fitted)
        except (KeyError, TypeError, ValueError) as exc:
            LOG.warning(
                'Ignoring bad stored predictor state of %s: %s', key, exc
            )

    def forget(self, key: Hashable) -> None:
        with self._lock:
            self._series.pop(key, None)

    def keys(self) -> List[Hashable]:
        return list(self._series)
