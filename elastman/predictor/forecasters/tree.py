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
"""Regression tree forecaster (scikit-learn ``DecisionTreeRegressor``).

The tree is grown by recursive partitioning on lagged features of the series.
A plain tree can only answer with values it has seen, so it cannot follow a
trend; this one therefore learns the next *change* of the series from the last
``lags`` changes and from how far the last value sits from the window mean,
and rolls forward one step at a time for longer horizons.
"""

import numpy as np
from sklearn.tree import DecisionTreeRegressor

from elastman.predictor.forecasters.base import Forecaster
from elastman.predictor.forecasters.base import ForecastError


class RegressionTreeForecaster(Forecaster):
    """Regression tree on lagged differences and level deviation."""

    default_window = 360

    def __init__(
        self,
        lags: int = 6,
        max_depth: int = 6,
        min_samples_leaf: int = 5,
        **kwargs: object
    ) -> None:
        super().__init__(**kwargs)
        self.lags = int(lags)
        self.max_depth = int(max_depth)
        self.min_samples_leaf = int(min_samples_leaf)
        self.min_history = self.lags + 2 * self.min_samples_leaf + 2
        self._tree = None
        self._y = np.empty(0)

    @property
    def name(self) -> str:
        return 'regression_tree'

    def _features(
        self, y: np.ndarray, mean: float, scale: float
    ) -> np.ndarray:
        """One row per target: ``lags`` previous differences, deviation."""
        d = np.diff(y) / scale
        n = d.size - self.lags
        cols = [d[i:i + n] for i in range(self.lags)]
        cols.append((y[self.lags:self.lags + n] - mean) / scale)
        return np.column_stack(cols)

    def _fit(self, y: np.ndarray) -> None:
        self._mean = float(np.mean(y))
        self._scale = float(np.std(y)) or 1.0
        x = self._features(y, self._mean, self._scale)
        target = np.diff(y)[self.lags:] / self._scale
        if target.size < 2:
            raise ForecastError('regression_tree: too few samples')
        # A fixed random_state: equal splits are broken the same way on
        # every run, so forecasts are reproducible.
        self._tree = DecisionTreeRegressor(
            max_depth=self.max_depth,
            min_samples_leaf=self.min_samples_leaf,
            random_state=0,
        )
        self._tree.fit(x, target)
        self._y = y

    def _refresh(self, y: np.ndarray) -> None:
        self._y = y

    def _predict(self, steps: int) -> np.ndarray:
        if self._tree is None:
            raise ForecastError('regression_tree is not fitted')
        hist = list(self._y[-(self.lags + 1):])
        out = []
        for _ in range(steps):
            h = np.asarray(hist[-(self.lags + 1):])
            row = np.append(
                np.diff(h) / self._scale, (h[-1] - self._mean) / self._scale
            )
            # The tree's own dtype and layout: its input checks skipped
            x = np.ascontiguousarray(row.reshape(1, -1), dtype=np.float32)
            nxt = (
                h[-1]
                + float(self._tree.predict(x, check_input=False)[0])
                * self._scale
            )
            hist.append(nxt)
            out.append(nxt)
        return np.asarray(out)
