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
import base64
import contextlib
import warnings
from typing import Any, Dict, Iterator, Optional, Sequence

import numpy as np
import threadpoolctl


class ForecastError(Exception):
    """A forecaster could not produce a forecast this round."""


class NotEnoughHistory(ForecastError):
    """The history is shorter than the forecaster needs."""


def pack(values: Any) -> str:
    """A float array as base64 text (exact, about half the size of JSON)."""
    return base64.b64encode(
        np.ascontiguousarray(values, dtype='<f8').tobytes()).decode('ascii')


def unpack(text: str) -> np.ndarray:
    """The array of :func:`pack` (ValueError if it is not one)."""
    raw = base64.b64decode(text.encode('ascii'), validate=True)
    if len(raw) % 8:
        raise ValueError('not a packed float array')
    return np.frombuffer(raw, dtype='<f8').copy()


def limit_blas_threads(threads: int) -> None:
    """Cap the BLAS thread pools of this process at ``threads`` (0: leave
    the library's default, a thread per core).

    The forecasters' linear algebra is on small matrices: extra BLAS threads
    only spin between calls, which more than doubles the CPU time of a full
    estimation when the cores are shared.
    """
    if threads > 0:
        threadpoolctl.threadpool_limits(limits=threads, user_api='blas')


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

    A forecaster that implements :meth:`_state` and :meth:`_restore` persists
    what it estimated (:meth:`state`, :meth:`restore`), so that a restarted
    predictor goes on re-filtering instead of re-estimating every series.

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
    #: The persisted state is large (e.g. a season of states) and changes
    #: every round: it is saved after a full fit only, not every round.
    heavy_state: bool = False

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
        #: Full estimations since this instance was built or restored.
        self.fits = 0

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
        self.fits += 1

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

    @property
    def age(self) -> int:
        """Rounds since the last full estimation (the refit phase)."""
        return self._age

    def state(self) -> Optional[Dict[str, Any]]:
        """What this forecaster estimated, as JSON-able data, or ``None``
        when it has nothing to persist (not fitted, or not supported).
        """
        if not self._fitted:
            return None
        if self._constant is not None:
            fitted: Optional[Dict[str, Any]] = {}
        else:
            fitted = self._state()
            if fitted is None:
                return None
        return {'name': self.name, 'age': self._age,
                'fit_size': self._fit_size, 'constant': self._constant,
                'fitted': fitted}

    def restore(self, state: Dict[str, Any],
                age: Optional[int] = None) -> None:
        """Take up a :meth:`state`: the next :meth:`update` re-filters with
        the restored parameters unless a refit is due.

        ``age`` (rounds since the estimation) overrides the stored one.
        ValueError (nothing changed) when ``state`` is not this forecaster's.
        """
        try:
            if state['name'] != self.name:
                raise ValueError('state of %s, not of %s'
                                 % (state['name'], self.name))
            constant = state.get('constant')
            constant = None if constant is None else float(constant)
            fit_size = int(state['fit_size'])
            age = int(state['age'] if age is None else age)
            if constant is None:
                self._restore(state['fitted'])
        except (KeyError, TypeError) as exc:
            raise ValueError('bad %s state: %s' % (self.name, exc))
        self._constant = constant
        self._fit_size = fit_size
        self._age = age % self.refit_interval
        self._fitted = True

    def _state(self) -> Optional[Dict[str, Any]]:
        """The estimated parameters (JSON-able); ``None``: not persisted."""
        return None

    def _restore(self, fitted: Dict[str, Any]) -> None:
        """Set the parameters of :meth:`_state` (raise on bad data before
        changing anything).
        """
        raise ValueError('%s does not restore a state' % self.name)

    @abc.abstractmethod
    def _fit(self, y: np.ndarray) -> None:
        """Estimate parameters on ``y`` (non-constant, finite, long enough)."""

    def _refresh(self, y: np.ndarray) -> None:
        """Re-filter ``y`` with the current parameters; default: a full fit."""
        self._fit(y)

    @abc.abstractmethod
    def _predict(self, steps: int) -> np.ndarray:
        """Forecast ``steps`` values after the last window given."""
