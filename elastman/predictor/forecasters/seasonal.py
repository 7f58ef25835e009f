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
"""Holt-Winters exponential smoothing (statsmodels), daily/weekly seasons.

Real workloads repeat daily and weekly, which none of the paper's forecasters
model.  The season used is the longest configured period of which the history
holds at least two full cycles; with none, the forecaster degrades to Holt's
damped linear trend, which still follows ramps.

A full fit (smoothing parameters estimated on the whole window) is costly on a
two-week window, so it happens only every ``refit_interval * refit_factor``
rounds.  In between, the smoothing recursion is carried forward over the new
points only, from the states where the previous round stopped: O(new points),
not O(window).

The persisted state is the smoothing parameters with the states where the
recursion stopped (a season of them), so a restarted predictor carries the
recursion on over the points that arrived since it was saved.
"""

from typing import Any, Dict, Optional

import numpy as np
from statsmodels.tsa.holtwinters import ExponentialSmoothing

from elastman.predictor.forecasters import base
from elastman.predictor.forecasters.base import Forecaster
from elastman.predictor.forecasters.base import ForecastError

_ALIGN = 8  # values remembered to find the new points in the next window
_MAX_NEW = 64  # more new points than this: re-filter the whole window
_PARAMS = ('smoothing_level', 'smoothing_trend', 'smoothing_seasonal',
           'damping_trend')


class HoltWintersForecaster(Forecaster):
    """Additive Holt-Winters with a damped additive trend."""

    default_window = None  # the whole history window kept by the caller
    min_history = 10
    #: Full fits are this many times rarer than for the other forecasters.
    refit_factor = 6
    heavy_state = True

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.refit_interval *= self.refit_factor
        self._age %= self.refit_interval
        self._res = None
        self._season: Optional[int] = None
        self._params: Dict[str, Optional[float]] = {}
        self._last = np.empty(0)
        self._level = self._trend = self._seasons = None

    @property
    def name(self) -> str:
        return 'holt_winters'

    def _pick_season(self, n: int) -> Optional[int]:
        fitting = [p for p in self.seasonal_periods if 2 * p <= n]
        return max(fitting) if fitting else None

    def _model(
        self, y: np.ndarray, init: str, **initial: Any
    ) -> ExponentialSmoothing:
        return ExponentialSmoothing(
            y,
            trend='add',
            damped_trend=True,
            seasonal='add' if self._season else None,
            seasonal_periods=self._season,
            initialization_method=init,
            **initial
        )

    def _fixed(self, model: ExponentialSmoothing) -> Any:
        p = self._params
        return model.fit(
            smoothing_level=p['smoothing_level'],
            smoothing_trend=p['smoothing_trend'],
            smoothing_seasonal=(
                p['smoothing_seasonal'] if self._season else None
            ),
            damping_trend=p['damping_trend'],
            optimized=False,
        )

    def _keep(self, res: Any, y: np.ndarray, before: Any = None) -> None:
        """Keep the last three states (to restart two points back).

        ``before`` are the (level, trend, seasons) that preceded a short
        continuation run, so that three states are known after it.
        """
        if not np.isfinite(res.level[-1]):
            raise ForecastError('holt_winters: non-finite state')
        self._res = res
        level = np.asarray(res.level, dtype=float)
        trend = np.asarray(res.trend, dtype=float)
        season = np.asarray(res.season, dtype=float) if self._season else None
        if before is not None:
            level = np.r_[before[0], level]
            trend = np.r_[before[1], trend]
            if self._season:
                season = np.r_[before[2], season]
        self._level, self._trend = level[-3:], trend[-3:]
        if self._season:
            self._seasons = season[-(self._season + 2):]
        self._last = y[-_ALIGN:].copy()

    def _fit(self, y: np.ndarray) -> None:
        self._season = self._pick_season(y.size)
        # Estimating one initial value per season slot is slow for long
        # seasons; the heuristic start is good enough and bounded in cost.
        # No brute-force grid start: 5-10x faster, same fit on workload
        # series.
        init = 'heuristic' if self._season else 'estimated'
        res = self._model(y, init).fit(use_brute=False)
        self._params = {k: res.params.get(k) for k in _PARAMS}
        self._keep(res, y)
        # Continue over the last two points from the saved states: the
        # same forecast, but the kept results no longer hold the whole
        # window (a full fit's results are ~1 MB on a two-week window).
        self._continue(y, 0)

    def _new_points(self, y: np.ndarray) -> Optional[int]:
        m = self._last.size
        for k in range(0, min(_MAX_NEW, y.size - m) + 1):
            if np.array_equal(y[y.size - k - m:y.size - k], self._last):
                return k
        return None

    def _continue(self, y: np.ndarray, k: int) -> None:
        """Run the recursion over the ``k`` new points (and the two before).

        statsmodels needs two observations at least, so the run restarts two
        points back from the states saved there; it continues the recursion
        exactly.
        """
        initial = {
            'initial_level': self._level[0],
            'initial_trend': self._trend[0],
        }
        before = [self._level[:1], self._trend[:1], None]
        if self._season:
            initial['initial_seasonal'] = self._seasons[:-2]
            before[2] = self._seasons[:-2]
        res = self._fixed(self._model(y[-(k + 2):], 'known', **initial))
        self._keep(res, y, before)

    def _refresh(self, y: np.ndarray) -> None:
        if not self._params or self._pick_season(y.size) != self._season:
            self._fit(y)
            return
        k = self._new_points(y) if self._level is not None else None
        if k is None:
            # History rewritten (e.g. a gap filled in): re-filter all of it.
            self._keep(self._fixed(self._model(y, 'heuristic')), y)
            self._continue(y, 0)
            return
        self._continue(y, k)

    def release(self) -> None:
        self._res = None  # states and parameters are kept

    def _state(self) -> Optional[Dict[str, Any]]:
        if not self._params or self._level is None:
            return None
        return {
            'params': {k: (None if v is None else float(v))
                       for k, v in self._params.items()},
            'season': self._season,
            'level': base.pack(self._level),
            'trend': base.pack(self._trend),
            'seasons': (base.pack(self._seasons) if self._season
                        else None),
            'last': base.pack(self._last),
        }

    def _restore(self, fitted: Dict[str, Any]) -> None:
        params = {k: fitted['params'].get(k) for k in _PARAMS}
        params = {k: None if v is None else float(v)
                  for k, v in params.items()}
        season = fitted['season']
        season = None if season is None else int(season)
        level = base.unpack(fitted['level'])
        trend = base.unpack(fitted['trend'])
        seasons = (base.unpack(fitted['seasons']) if season else None)
        last = base.unpack(fitted['last'])
        arrays = [level, trend, last] + ([seasons] if season else [])
        if (any(params[k] is None for k in _PARAMS if k != 'smoothing_seasonal')
                or (season and params['smoothing_seasonal'] is None)
                or level.size != 3 or trend.size != 3
                or (season and seasons.size != season + 2)
                or not all(np.all(np.isfinite(a)) for a in arrays)):
            raise ValueError('holt_winters: bad state')
        self._params, self._season = params, season
        self._level, self._trend, self._seasons = level, trend, seasons
        self._last, self._res = last, None

    def _predict(self, steps: int) -> np.ndarray:
        if self._res is None:
            raise ForecastError('holt_winters is not fitted')
        # The recursion from the last states with every error zero is the
        # point forecast (``results.forecast``), without the second pass of
        # the model over the window (and its table of a season of initial
        # values) that ``forecast`` makes: a tenth of the cost.
        path = self._res.simulate(steps, repetitions=1, error='add',
                                  random_errors=np.zeros((steps, 1)))
        return np.asarray(path, dtype=float).reshape(-1)
