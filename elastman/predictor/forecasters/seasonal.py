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
"""

from typing import Any, Dict, Optional

import numpy as np
from statsmodels.tsa.holtwinters import ExponentialSmoothing

from elastman.predictor.forecasters.base import ForecastError
from elastman.predictor.forecasters.base import Forecaster

_ALIGN = 8  # values remembered to find the new points in the next window
_MAX_NEW = 64  # more new points than this: re-filter the whole window


class HoltWintersForecaster(Forecaster):
    """Additive Holt-Winters with a damped additive trend."""

    default_window = None  # the whole history window kept by the caller
    min_history = 10
    #: Full fits are this many times rarer than for the other forecasters.
    refit_factor = 6

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.refit_interval *= self.refit_factor
        self._age %= self.refit_interval
        self._res = None
        self._season: Optional[int] = None
        self._params: Dict[str, Optional[float]] = {}
        self._last = np.empty(0)

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

    def _keep(
        self, res: Any, y: np.ndarray, season_before: Optional[np.ndarray]
    ) -> None:
        """Keep the last two states (to restart one point back), the tail."""
        if not np.isfinite(res.level[-1]):
            raise ForecastError('holt_winters: non-finite state')
        self._res = res
        self._level = np.asarray(res.level[-2:], dtype=float)
        self._trend = np.asarray(res.trend[-2:], dtype=float)
        if self._season:
            hist = np.asarray(res.season, dtype=float)
            if season_before is not None:
                hist = np.r_[season_before, hist]
            self._seasons = hist[-(self._season + 1):]
        self._last = y[-_ALIGN:].copy()

    def _fit(self, y: np.ndarray) -> None:
        self._season = self._pick_season(y.size)
        # Estimating one initial value per season slot is slow for long
        # seasons; the heuristic start is good enough and bounded in cost.
        # No brute-force grid start: 5-10x faster, same fit on workload series.
        res = self._model(y, 'heuristic' if self._season else 'estimated').fit(
            use_brute=False
        )
        self._params = {
            k: res.params.get(k)
            for k in (
                'smoothing_level',
                'smoothing_trend',
                'smoothing_seasonal',
                'damping_trend',
            )
        }
        self._keep(res, y, None)

    def _new_points(self, y: np.ndarray) -> Optional[int]:
        m = self._last.size
        for k in range(0, min(_MAX_NEW, y.size - m) + 1):
            if np.array_equal(y[y.size - k - m:y.size - k], self._last):
                return k
        return None

    def _refresh(self, y: np.ndarray) -> None:
        if self._res is None or self._pick_season(y.size) != self._season:
            self._fit(y)
            return
        k = self._new_points(y)
        if (
            k is None
        ):  # history rewritten (e.g. a gap filled in): re-filter all of it
            self._keep(self._fixed(self._model(y, 'heuristic')), y, None)
            return
        if k == 0:
            return
        # Restart one point back (statsmodels needs two observations) from
        # the states saved there; the result continues the recursion exactly.
        initial = {
            'initial_level': self._level[0],
            'initial_trend': self._trend[0],
        }
        before = None
        if self._season:
            before = self._seasons[:-1]
            initial['initial_seasonal'] = before
        res = self._fixed(self._model(y[-(k + 1):], 'known', **initial))
        self._keep(res, y, before)

    def _predict(self, steps: int) -> np.ndarray:
        if self._res is None:
            raise ForecastError('holt_winters is not fitted')
        return np.asarray(self._res.forecast(steps))
