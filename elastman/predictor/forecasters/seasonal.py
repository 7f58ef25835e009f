"""Holt-Winters exponential smoothing (statsmodels) with daily/weekly seasonality.

Real workloads repeat daily and weekly, which none of the paper's forecasters
model.  The season used is the longest configured period of which the history
holds at least two full cycles; with none, the forecaster degrades to Holt's
damped linear trend, which still follows ramps.
"""
from typing import Optional

import numpy as np
from statsmodels.tsa.holtwinters import ExponentialSmoothing

from elastman.predictor.forecasters.base import ForecastError
from elastman.predictor.forecasters.base import Forecaster


class HoltWintersForecaster(Forecaster):
    """Additive Holt-Winters with a damped additive trend."""

    default_window = None  # the whole history window kept by the caller
    min_history = 10

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self._res = None
        self._season: Optional[int] = None

    @property
    def name(self) -> str:
        return 'holt_winters'

    def _pick_season(self, n: int) -> Optional[int]:
        fitting = [p for p in self.seasonal_periods if 2 * p + 2 <= n]
        return max(fitting) if fitting else None

    def _model(self, y: np.ndarray, season: Optional[int], init: str) -> ExponentialSmoothing:
        return ExponentialSmoothing(
            y, trend='add', damped_trend=True,
            seasonal='add' if season else None,
            seasonal_periods=season, initialization_method=init)

    def _fit(self, y: np.ndarray) -> None:
        season = self._pick_season(y.size)
        # Estimating one initial value per season slot is slow for long
        # seasons; the heuristic start is good enough and bounded in cost.
        init = 'heuristic' if season else 'estimated'
        res = self._model(y, season, init).fit()
        if not np.all(np.isfinite(res.fittedvalues[-1:])):
            raise ForecastError('holt_winters: non-finite fit')
        self._res, self._season = res, season

    def _refresh(self, y: np.ndarray) -> None:
        if self._res is None or self._pick_season(y.size) != self._season:
            self._fit(y)
            return
        p = self._res.params
        self._res = self._model(y, self._season, 'heuristic').fit(
            smoothing_level=p['smoothing_level'], smoothing_trend=p['smoothing_trend'],
            smoothing_seasonal=p['smoothing_seasonal'] if self._season else None,
            damping_trend=p['damping_trend'], optimized=False)

    def _predict(self, steps: int) -> np.ndarray:
        if self._res is None:
            raise ForecastError('holt_winters is not fitted')
        return np.asarray(self._res.forecast(steps))
