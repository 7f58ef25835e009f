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
"""The five ARIMA models of OnlineElastMan, estimated with statsmodels.

ARIMA(1,0,0) first-order autoregressive, ARIMA(1,1,0) differenced first-order
autoregressive, ARIMA(0,1,1) simple exponential smoothing, ARIMA(2,0,0)
second-order autoregressive, ARIMA(0,1,0) random walk.  Models without
differencing carry a constant (the mean); differenced models carry a drift.
"""

from typing import Any, Dict, Optional, Tuple

import numpy as np
from statsmodels.tsa.arima.model import ARIMA

from elastman.predictor.forecasters.base import Forecaster
from elastman.predictor.forecasters.base import ForecastError


class ArimaForecaster(Forecaster):
    """ARIMA(p, d, q) on a sliding window, re-estimated every few rounds."""

    order: Tuple[int, int, int] = (1, 0, 0)
    default_window = 120

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        p, d, q = self.order
        self.min_history = max(4, 2 * (p + d + q) + 2)
        self._window: Optional[np.ndarray] = None
        self._params: Optional[np.ndarray] = None

    @property
    def name(self) -> str:
        return 'arima_%d%d%d' % self.order

    def _model(self, y: np.ndarray) -> ARIMA:
        trend = 'c' if self.order[1] == 0 else 't'
        return ARIMA(y, order=self.order, trend=trend)

    def _fit(self, y: np.ndarray) -> None:
        # Scale to unit level so the optimiser sees well-conditioned numbers.
        self._scale = float(np.mean(np.abs(y))) or 1.0
        model = self._model(y / self._scale)
        # Only the parameters: the results object would cost a Kalman
        # smoother pass that nothing reads.
        try:
            # Closed-form estimators: a few ms, where the default numerical
            # MLE can take 100 ms on a series with a level shift.
            params = model.fit(
                method='burg' if self.order[2] == 0 else 'hannan_rissanen',
                return_params=True,
            )
        except Exception:
            # e.g. a non-invertible first stage: fall back to MLE
            params = model.fit(return_params=True)
        params = np.asarray(params, dtype=float)
        if not np.all(np.isfinite(params)):
            raise ForecastError('%s: non-finite parameters' % self.name)
        self._params = params
        self._refresh(y)

    def _refresh(self, y: np.ndarray) -> None:
        if self._params is None:
            self._fit(y)
            return
        # Same parameters on the new window: :meth:`_predict` runs one Kalman
        # filter pass, no estimation.
        self._window = y / self._scale

    def _predict(self, steps: int) -> np.ndarray:
        if self._window is None:
            raise ForecastError('%s is not fitted' % self.name)
        # One filter pass over the window followed by ``steps`` missing
        # points: the filter's predictions of the missing points are the
        # multi-step forecast, what ``results.forecast(steps)`` answers,
        # without the second model it builds for the extension.  An
        # approximately diffuse start skips the stationary (Lyapunov)
        # initialisation, which dominates the cost near a unit root and only
        # affects the first few points of the window.
        model = self._model(np.r_[self._window, np.full(steps, np.nan)])
        model.ssm.initialize_approximate_diffuse()
        out = model.filter(self._params, return_ssm=True)  # no results
        return np.asarray(out.forecasts[0, -steps:]) * self._scale

    def release(self) -> None:
        self._window = None  # parameters are kept; refresh takes the window

    def _state(self) -> Optional[Dict[str, Any]]:
        if self._params is None:
            return None
        return {'params': [float(v) for v in self._params],
                'scale': self._scale}

    def _restore(self, fitted: Dict[str, Any]) -> None:
        params = np.asarray(fitted['params'], dtype=float)
        scale = float(fitted['scale'])
        p, _, q = self.order
        # AR and MA terms, the constant or drift, the innovation variance
        if params.shape != (p + q + 2,) or not np.all(np.isfinite(params)) \
                or not np.isfinite(scale) or scale <= 0:
            raise ValueError('%s: bad parameters' % self.name)
        self._params, self._scale, self._window = params, scale, None


class Arima100(ArimaForecaster):
    """First-order autoregressive: stationary, auto-correlated workloads."""

    order = (1, 0, 0)


class Arima110(ArimaForecaster):
    """Differenced first-order autoregressive: correlated random steps."""

    order = (1, 1, 0)


class Arima011(ArimaForecaster):
    """Simple exponential smoothing (with drift)."""

    order = (0, 1, 1)


class Arima200(ArimaForecaster):
    """Second-order autoregressive."""

    order = (2, 0, 0)


class Arima010(ArimaForecaster):
    """Random walk (with drift): non-stationary workloads."""

    order = (0, 1, 0)
