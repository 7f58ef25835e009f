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
"""Bad history never raises out of the ensemble; capable forecasters answer."""

import numpy as np
import pytest

from elastman.predictor import ensemble as ens
from elastman.predictor.forecasters import arima
from elastman.predictor.forecasters import base
from elastman.predictor.forecasters import seasonal
from elastman.predictor.forecasters import tree


@pytest.fixture
def ensemble() -> ens.Ensemble:
    return ens.Ensemble(horizon=3, seasonal_periods=[24])


def _noisy(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return 1000 + np.cumsum(rng.normal(0, 20, n))


def test_empty_history_gives_empty_forecast(ensemble):
    f = ensemble.predict('c1', [])
    assert f.values == [] and f.chosen is None and f.value is None


def test_all_nan_history(ensemble):
    f = ensemble.predict('c1', [np.nan, None, float('inf')])
    assert f.values == [] and f.chosen is None


def test_single_point_repeats_it(ensemble):
    f = ensemble.predict('c1', [42.0])
    assert f.values == [42.0, 42.0, 42.0]
    assert f.chosen == ens.FALLBACK
    assert set(f.failed) == set(ensemble.names)


def test_few_points_only_capable_forecasters_answer(ensemble):
    f = ensemble.predict('c1', [100.0, 110.0, 120.0, 130.0, 140.0])
    # a forecaster, or the mean or median of those that answered
    assert f.chosen in list(f.predictions) + ['mean', 'median']
    assert 'arima_010' in f.predictions  # needs 4 points
    assert 'regression_tree' in f.failed  # needs more lags
    assert 'holt_winters' in f.failed
    assert len(f.values) == 3 and all(np.isfinite(f.values))
    # nothing learnt yet: within the range of those that answered
    firsts = [p[0] for p in f.predictions.values()]
    assert min(firsts) <= f.values[0] <= max(firsts)
    assert f.predictions['arima_010'][0] == pytest.approx(150.0, rel=0.05)


def test_constant_series_forecasts_the_constant(ensemble):
    f = ensemble.predict('c1', [500.0] * 100)
    assert f.failed == {}
    assert f.values == pytest.approx([500.0, 500.0, 500.0])
    for p in f.predictions.values():
        assert p == [500.0, 500.0, 500.0]


def test_all_zero_series(ensemble):
    f = ensemble.predict('c1', [0.0] * 50)
    assert f.values == [0.0, 0.0, 0.0]


def test_gaps_and_nan_are_filled(ensemble):
    y = list(_noisy(200))
    for i in (5, 50, 51, 52, 53, 120, 199):
        y[i] = np.nan
    y[60] = None
    y[70] = float('-inf')
    f = ensemble.predict('c1', y)
    assert f.failed == {}
    assert len(f.predictions) == len(ensemble.names)
    assert all(np.isfinite(f.values)) and min(f.values) >= 0
    # The trailing gap repeats the last good value, the forecast stays near it.
    assert f.values[0] == pytest.approx(y[198], rel=0.1)


def test_negative_rates_are_clipped(ensemble):
    f = ensemble.predict('c1', [-5.0] * 10 + [10.0, 12.0, 11.0, 13.0] * 10)
    assert min(f.values) >= 0


class Exploding(base.Forecaster):
    """A plug-in that always fails."""

    def _fit(self, y):
        raise RuntimeError('boom')

    def _predict(self, steps):
        raise RuntimeError('boom')


class Garbage(base.Forecaster):
    """A plug-in that returns NaN."""

    def _fit(self, y):
        pass

    def _predict(self, steps):
        return np.full(steps, np.nan)


def test_failing_forecaster_is_skipped_and_logged(caplog):
    classes = {
        'exploding': Exploding,
        'garbage': Garbage,
        'arima_010': arima.Arima010,
    }
    e = ens.Ensemble(classes=classes)
    y = _noisy(60)
    for t in range(40, 60):
        f = e.predict('c', y[:t])
        # the only candidate left: itself (or the mean / median of it alone)
        assert f.values == pytest.approx(f.predictions['arima_010'])
        assert set(f.failed) == {'exploding', 'garbage'}
    assert 'boom' in f.failed['exploding']
    # Logged once when it starts failing, not every round.
    assert sum('exploding' in r.getMessage() for r in caplog.records) == 1


def test_only_failing_forecasters_fall_back_to_last_value():
    e = ens.Ensemble(classes={'exploding': Exploding})
    f = e.predict('c', [1.0, 2.0, 3.0, 4.0], horizon=2)
    assert f.values == [4.0, 4.0] and f.chosen == ens.FALLBACK


def test_unexpected_error_inside_round_never_escapes(monkeypatch):
    e = ens.Ensemble(classes={'arima_010': arima.Arima010})

    def broken(*a, **k):
        raise MemoryError('no')

    monkeypatch.setattr(ens.SeriesPredictor, 'step', broken)
    f = e.predict('c', [1.0, 2.0, 3.0])
    assert f.values == [3.0] and f.chosen == ens.FALLBACK


FORECASTERS = [
    tree.RegressionTreeForecaster,
    arima.Arima100,
    arima.Arima110,
    arima.Arima011,
    arima.Arima200,
    arima.Arima010,
    seasonal.HoltWintersForecaster,
]


@pytest.mark.parametrize('cls', FORECASTERS)
def test_each_forecaster_rejects_short_history(cls):
    fc = cls()
    with pytest.raises(base.NotEnoughHistory):
        fc.update(np.array([1.0, 2.0]))
    with pytest.raises(base.ForecastError):
        fc.predict(1)


@pytest.mark.parametrize('cls', FORECASTERS)
def test_each_forecaster_handles_a_level_shift(cls):
    y = np.r_[np.full(50, 100.0), np.full(50, 1000.0)] + np.tile(
        [0.0, 1.0], 50
    )
    fc = cls()
    fc.update(y)
    out = fc.predict(5)
    assert out.shape == (5,) and np.all(np.isfinite(out)) and np.all(out >= 0)
