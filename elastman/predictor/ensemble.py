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
"""The forecasters of each series and their online combination.

Each series (one cluster, one metric) owns one instance of every enabled
forecaster and a :class:`Combiner`.  A round:

1. the points that arrived since the last round mature the forecasts made
   for them in earlier rounds (:mod:`elastman.predictor.paths`); the
   combination learns from them at every lead, and so does the upper bound
   of the peak (:mod:`elastman.predictor.intervals`);
2. every forecaster updates on the history window and forecasts ``horizon``
   steps; one that fails is skipped for this round and logged;
3. the combination (:mod:`elastman.predictor.combinations`) answers with a
   point path and a peak path, and the bound is put on the peak.
"""

import dataclasses
import threading
import zlib
from typing import (
    Any,
    Dict,
    Hashable,
    List,
    Mapping,
    Optional,
    Sequence,
)

import numpy as np
from oslo_log import log as logging

from elastman.common import loader
from elastman.conf import predictor as predictor_conf
from elastman.predictor import combinations
from elastman.predictor.combinations import WeightedMajority  # noqa: F401
from elastman.predictor.forecasters.base import NotEnoughHistory
from elastman.predictor.forecasters import NAMESPACE
from elastman.predictor import history as history_mod
from elastman.predictor import intervals
from elastman.predictor import paths as paths_mod

LOG = logging.getLogger(__name__)

#: The combination rules ``[predictor]selection`` may name.
MODES = tuple(combinations.COMBINATIONS)
#: The default rule, ``[predictor]selection``'s.
DEFAULT_MODE = predictor_conf.DEFAULT_SELECTION
#: Name reported when no forecaster could run and the last value is repeated.
FALLBACK = 'last_value'


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
    #: ``peak[k]``: the forecast of the highest value among the next
    #: ``k + 1`` steps (what the actuator plans on).
    peak: List[float] = dataclasses.field(default_factory=list)

    @property
    def value(self) -> Optional[float]:
        """The next-step forecast (``None`` without any history)."""
        return self.values[0] if self.values else None

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)


class Combiner:
    """A combination with the paths it learns from and its peak bound.

    :param names: the forecasters, in a fixed order.
    """

    def __init__(self, names: Sequence[str],
                 combination: combinations.Combination,
                 quantile: Optional[intervals.PeakQuantile] = None) -> None:
        self.names = list(names)
        self.combination = combination
        self.quantile = quantile or intervals.PeakQuantile()
        self.book = paths_mod.PathBook(self.names)

    def observe(self, new_points: Sequence[float]) -> List[str]:
        """Learn from the forecasts the new points matured; return who
        missed (rules with such a notion), over all the new points.
        """
        missed: List[str] = []
        for matured in self.book.advance(new_points):
            for m in matured:
                if m.own_peak is not None:
                    self.quantile.learn(m.lead, m.own_peak, m.actual_peak,
                                        m.own_upper)
            for name in self.combination.learn(matured):
                if name not in missed:
                    missed.append(name)
        return missed

    def answer(self, predictions: Mapping[str, np.ndarray], horizon: int,
               last: Optional[float]) -> tuple:
        """(combined, upper) for this round's forecaster ``predictions``;
        the last value repeated when no forecaster answered.
        """
        if predictions:
            mat = np.full((len(self.names), horizon), np.nan)
            for i, n in enumerate(self.names):
                if n in predictions:
                    mat[i] = np.asarray(predictions[n], dtype=float)[:horizon]
            combined = self.combination.combine(mat)
        elif last is not None:
            flat = np.full(horizon, float(last))
            combined = combinations.Combined(flat, flat.copy(), FALLBACK, {})
        else:
            empty = np.empty(0)
            return combinations.Combined(empty, empty, None, {}), empty
        upper = self.quantile.upper(combined.peak)
        self.book.add(predictions, combined.peak, upper)
        return combined, upper

    def to_dict(self) -> Dict[str, Any]:
        return {'rule': self.combination.name,
                'combination': self.combination.to_dict(),
                'pending': self.book.pending(),
                'quantile': self.quantile.to_dict()}

    def load(self, data: Mapping[str, Any]) -> None:
        if data.get('rule') == self.combination.name:
            self.combination.load(data.get('combination') or {})
        self.book.load_pending(data.get('pending') or {})
        if data.get('quantile'):
            self.quantile.load(data['quantile'])


class SeriesPredictor:
    """Forecaster instances and the combiner of one series."""

    def __init__(
        self,
        classes: Mapping[str, type],
        combiner: Combiner,
        forecaster_kwargs: Optional[Mapping[str, Any]] = None,
    ) -> None:
        kwargs = dict(forecaster_kwargs or {})
        self.combiner = combiner
        self.forecasters = {n: cls(**kwargs) for n, cls in classes.items()}
        self._failing: set = set()
        # full-fit count of each heavy-state forecaster when last saved
        self._heavy_saved: Dict[str, int] = {}

    @property
    def combination(self) -> combinations.Combination:
        return self.combiner.combination

    @property
    def quantile(self) -> intervals.PeakQuantile:
        return self.combiner.quantile

    def _run(
        self, name: str, fc: Any, history: np.ndarray, horizon: int
    ) -> np.ndarray:
        try:
            fc.update(history)
            return fc.predict(horizon)
        finally:
            fc.release()

    def forecast_all(self, y: np.ndarray, horizon: int
                     ) -> tuple[Dict[str, np.ndarray], Dict[str, str]]:
        """Every forecaster's path (those that answered) and the failures."""
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
        return preds, failed

    def step(
        self,
        history: Sequence[Optional[float]],
        horizon: int = 1,
        advanced: int = 1,
    ) -> Forecast:
        """Learn from the new points, update every forecaster, forecast."""
        y = history_mod.clean(history)
        new = y[max(0, y.size - advanced):] if advanced > 0 else y[:0]
        missed = self.combiner.observe(new)
        preds, failed = self.forecast_all(y, horizon)
        combined, upper = self.combiner.answer(
            preds, horizon, float(y[-1]) if y.size else None)
        return Forecast(
            values=[float(v) for v in combined.values],
            chosen=combined.chosen,
            mode=self.combination.name,
            weights=dict(combined.weights),
            predictions={n: [float(v) for v in p] for n, p in preds.items()},
            failed=failed,
            missed=missed,
            upper=[float(v) for v in upper],
            level=self.quantile.level,
            peak=[float(v) for v in combined.peak],
        )

    def to_dict(self) -> Dict[str, Any]:
        """The state saved every round: the combination's, and the
        estimated parameters of the forecasters whose state is small
        (:meth:`heavy_state` has the others).
        """
        data = dict(self.combiner.to_dict())
        fitted = {}
        for name, fc in self.forecasters.items():
            if not fc.heavy_state:
                state = fc.state()
                if state is not None:
                    fitted[name] = state
        data['forecasters'] = fitted
        data['ages'] = {n: fc.age for n, fc in self.forecasters.items()}
        return data

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
        self.combiner.load(data)
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


def series_step(conf: Any) -> int:
    """Seconds of one point of a forecast series: ``[predictor] step``, or
    with 0 the round's ``[predictor] period``.
    """
    return int(conf.predictor.step or conf.predictor.period)


class Ensemble:
    """Forecasts many series: a :class:`SeriesPredictor` per key.

    A key is e.g. ``(cluster id, metric)``.

    The state of a key is :meth:`state` (saved every round: what the
    combination learnt, the pending paths, the peak bound, the small
    forecaster states), :meth:`fitted_state` (saved after a full fit of a
    forecaster with a large state) and :meth:`load_state`: a restarted
    predictor re-filters with the estimated parameters instead of
    estimating them again.

    :param mode: the combination rule (:data:`MODES`).
    :param combination_options: options of the rule (``discount``, ``eta``,
        ``relative_eta``, ``switch_discount``, ``switch_min_rounds``).
    :param quantile: level of the forecasts' upper bound.
    :param quantile_gamma: step of the adaptation of the bound's level.
    """

    def __init__(
        self,
        names: Optional[Sequence[str]] = None,
        tolerance: float = 0.05,
        penalty: float = 0.3,
        mode: str = DEFAULT_MODE,
        horizon: int = 1,
        seasonal_periods: Sequence[int] = (),
        refit_interval: int = 10,
        weight_floor: float = 0.05,
        classes: Optional[Mapping[str, type]] = None,
        quantile: float = intervals.LEVEL,
        quantile_gamma: float = intervals.GAMMA,
        combination_options: Optional[Mapping[str, Any]] = None,
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
        if not 0.0 <= quantile_gamma < 1.0:
            raise ValueError('quantile_gamma must be in [0, 1)')
        self.quantile_gamma = float(quantile_gamma)
        self.combination_options = dict(combination_options or {})
        self.make_combination()  # bad options fail here, not per series
        self._series: Dict[Hashable, SeriesPredictor] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_conf(cls, conf: Any) -> 'Ensemble':
        """Build from the ``[predictor]`` option group (the seasons in
        steps of :func:`series_step`).
        """
        p = conf.predictor
        step = float(series_step(conf))
        seasons = [
            int(round(s / step))
            for s in p.seasonal_periods
            if s >= 2 * step
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
            quantile_gamma=p.quantile_gamma,
            combination_options={name: getattr(p, name)
                                 for name in combinations.OPTIONS},
        )

    @property
    def names(self) -> List[str]:
        return list(self.classes)

    def make_combination(self, mode: Optional[str] = None
                         ) -> combinations.Combination:
        """A fresh combination of the configured rule (or ``mode``)."""
        return combinations.make(
            mode or self.mode, self.names, tolerance=self.tolerance,
            penalty=self.penalty, weight_floor=self.floor,
            **self.combination_options)

    def make_combiner(self, mode: Optional[str] = None) -> Combiner:
        return Combiner(self.names, self.make_combination(mode),
                        intervals.PeakQuantile(self.quantile,
                                               gamma=self.quantile_gamma))

    def series(self, key: Hashable) -> SeriesPredictor:
        with self._lock:
            sp = self._series.get(key)
            if sp is None:
                offset = zlib.crc32(repr(key).encode()) % self.refit_interval
                sp = SeriesPredictor(
                    self.classes,
                    self.make_combiner(),
                    {
                        'refit_interval': self.refit_interval,
                        'refit_offset': offset,
                        'seasonal_periods': self.seasonal_periods,
                    },
                )
                self._series[key] = sp
            return sp

    def predict(
        self,
        key: Hashable,
        history: Sequence[Optional[float]],
        horizon: Optional[int] = None,
        advanced: int = 1,
    ) -> Forecast:
        """Forecast ``horizon`` steps of series ``key`` from ``history``.

        ``advanced`` is how many new points the history holds since the last
        call for this key (0: nothing to learn from).  Never raises.
        """
        horizon = self.horizon if horizon is None else max(1, int(horizon))
        try:
            return self.series(key).step(history, horizon, advanced)
        except Exception:  # the library must never take the worker down
            LOG.exception(
                'Forecast of %s failed; repeating the last value', key
            )
            y = history_mod.clean(history)
            values = [float(y[-1])] * horizon if y.size else []
            return Forecast(
                values, FALLBACK if values else None, self.mode, {}, {}, {},
                [], upper=list(values), peak=list(values)
            )

    def state(self, key: Hashable) -> Dict[str, Any]:
        """Serialisable state of ``key``'s combination: what it learnt,
        last round's paths and the peak bound.
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
