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
"""The one interface every forecaster implements.

A forecaster is owned by one series (one cluster, one metric).  Each round the
caller hands it the current, already cleaned history window with
:meth:`Forecaster.update` and asks for ``steps`` values with
:meth:`Forecaster.predict`.  A forecaster keeps its cost bounded: it only looks
at the last ``window`` points, and re-estimates its parameters only every
``refit_interval`` rounds; in between it re-runs its filter with the parameters
it already has.
"""

import abc
import contextlib
import warnings
from typing import Iterator, Optional, Sequence

import numpy as np


class ForecastError(Exception):
    """A forecaster could not produce a forecast this round."""


class NotEnoughHistory(ForecastError):
    """The history is shorter than the forecaster needs."""


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Silence the numerical warnings of statsmodels/scikit-learn."""
    with warnings.catch_warnings(), np.errstate(all='ignore'):
        warnings.simplefilter('ignore')
        yield


class Forecaster(abc.ABC):
    """Base class: fit/update on a history window, predict ``steps`` ahead.

    Parameters are re-estimated every ``refit_interval`` rounds, and whenever
    the window has doubled since the last estimation.

    :param window: most recent points used (``None``: the whole history).
    :param refit_interval: rounds between two full estimations (>= 1).
    :param refit_offset: initial phase of the refit counter, to spread the
        refits of many series over the rounds.
    :param seasonal_periods: candidate season lengths in steps (used by
        seasonal forecasters).
    """

    #: Fewest points :meth:`update` accepts.
    min_history: int = 3
    #: Default for ``window``.
    default_window: Optional[int] = 240

    def __init__(
        self,
        window: Optional[int] = None,
        refit_interval: int = 10,
        refit_offset: int = 0,
        seasonal_periods: Sequence[int] = (),
        **_: object
    ) -> None:
        self.window = window if window is not None else self.default_window
        self.refit_interval = max(1, int(refit_interval))
        self._age = int(refit_offset) % self.refit_interval
        self.seasonal_periods = tuple(
            int(p) for p in seasonal_periods if int(p) > 1
        )
        self._fitted = False
        self._fit_size = 0
        self._constant: Optional[float] = None

    @property
    def name(self) -> str:
        return type(self).__name__

    def _tail(self, history: np.ndarray) -> np.ndarray:
        y = np.asarray(history, dtype=float)
        if self.window is not None and self.window > 0:
            y = y[-self.window:]
        if y.size and not np.all(np.isfinite(y)):
            raise ForecastError('history contains non-finite values')
        if y.size < self.min_history:
            raise NotEnoughHistory(
                '%s needs %d points, got %d'
                % (self.name, self.min_history, y.size)
            )
        return y

    def fit(self, history: np.ndarray) -> None:
        """Estimate the parameters on the history window (a full fit)."""
        y = self._tail(history)
        if np.ptp(y) <= 1e-9 * max(1.0, abs(float(y[-1]))):
            # A constant series: every sensible model forecasts the constant.
            self._constant = float(y[-1])
        else:
            self._constant = None
            with quiet():
                self._fit(y)
        self._fitted = True
        self._fit_size = y.size
        self._age = 0

    def update(self, history: np.ndarray) -> None:
        """Take in the latest window: refit when due, else only re-filter."""
        self._age += 1
        if (
            not self._fitted
            or self._constant is not None
            or self._age >= self.refit_interval
        ):
            self.fit(history)
            return
        y = self._tail(history)
        if (
            np.ptp(y) <= 1e-9 * max(1.0, abs(float(y[-1])))
            or y.size >= 2 * self._fit_size
        ):
            # Constant, or the window has doubled since the last fit (a young
            # series): estimate again, which costs little while it is short.
            self.fit(y)
            return
        with quiet():
            self._refresh(y)

    def predict(self, steps: int = 1) -> np.ndarray:
        """Forecast the next ``steps`` values (non-negative, finite)."""
        if not self._fitted:
            raise ForecastError('%s is not fitted' % self.name)
        steps = max(1, int(steps))
        if self._constant is not None:
            return np.full(steps, self._constant)
        with quiet():
            out = np.asarray(self._predict(steps), dtype=float).reshape(-1)[
                :steps
            ]
        if out.size != steps or not np.all(np.isfinite(out)):
            raise ForecastError(
                '%s produced a non-finite forecast' % self.name
            )
        return np.maximum(out, 0.0)

    def release(self) -> None:
        """Drop what only :meth:`predict` needs until the next update.

        Called by the ensemble after each round to keep the memory per series
        small; :meth:`update` rebuilds it.
        """

    @abc.abstractmethod
    def _fit(self, y: np.ndarray) -> None:
        """Estimate parameters on ``y`` (non-constant, finite, long enough)."""

    def _refresh(self, y: np.ndarray) -> None:
        """Re-filter ``y`` with the current parameters; default: a full fit."""
        self._fit(y)

    @abc.abstractmethod
    def _predict(self, steps: int) -> np.ndarray:
        """Forecast ``steps`` values after the last window given."""
