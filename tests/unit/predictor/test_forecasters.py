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
"""Each forecaster on the shape it is meant for, and the plug-in wiring."""

import numpy as np
import pytest
from stevedore import extension
import threadpoolctl

from elastman.common import exception
from elastman.conf import predictor as predictor_conf
from elastman.predictor import ensemble as ens
from elastman.predictor.forecasters import arima
from elastman.predictor.forecasters import base
from elastman.predictor.forecasters import seasonal
from elastman.predictor.forecasters import tree
from tests.unit.predictor import synthetic

#: every forecaster elastman ships: the ensemble's default
ALL = predictor_conf.FORECASTERS


def test_entry_points_load_every_forecaster():
    mgr = extension.ExtensionManager(
        'elastman.forecasters', invoke_on_load=False
    )
    assert set(ALL) <= set(mgr.names())
    classes = ens.load_forecaster_classes()
    for name in ALL:
        assert classes[name]().name == name


def test_named_subset_keeps_order_and_refuses_unknown():
    classes = ens.load_forecaster_classes(['arima_010', 'regression_tree'])
    assert list(classes) == ['arima_010', 'regression_tree']
    with pytest.raises(exception.ConfigurationError, match="'no_such'"):
        ens.load_forecaster_classes(['arima_010', 'no_such'])


def test_random_walk_forecast_is_last_value_plus_drift():
    y = np.r_[np.arange(100.0, 200.0)]
    fc = arima.Arima010()
    fc.update(y)
    assert fc.predict(3) == pytest.approx([200.0, 201.0, 202.0], rel=1e-3)


def test_ar1_reverts_to_mean():
    y = synthetic.stationary_ar(n=200, sd=10.0)
    fc = arima.Arima100()
    fc.update(np.r_[y, 1200.0])
    out = fc.predict(30)
    assert out[0] < 1200.0 and abs(out[-1] - np.mean(y)) < 60


def test_tree_extrapolates_a_ramp():
    y = np.linspace(100.0, 400.0, 301)
    fc = tree.RegressionTreeForecaster()
    fc.update(y)
    assert fc.predict(5) == pytest.approx([401, 402, 403, 404, 405], rel=1e-3)


def test_holt_winters_learns_the_season():
    y = synthetic.diurnal(n=200, period=24, noise=0.0)
    fc = seasonal.HoltWintersForecaster(seasonal_periods=[24, 168])
    fc.update(y[:192])
    assert fc._season == 24  # 168 does not fit twice
    assert fc.predict(8) == pytest.approx(y[192:200], rel=0.02)


def test_holt_winters_without_season_is_damped_trend():
    fc = seasonal.HoltWintersForecaster(seasonal_periods=[1440])
    fc.update(np.linspace(10.0, 100.0, 60))
    assert fc._season is None
    assert fc.predict(1)[0] == pytest.approx(101.5, rel=0.02)


def test_refits_are_bounded():
    calls = {'fit': 0, 'refresh': 0}
    fc = arima.Arima100(refit_interval=5)
    real_fit, real_refresh = fc._fit, fc._refresh

    def fit(y):
        calls['fit'] += 1
        real_fit(y)

    def refresh(y):
        calls['refresh'] += 1
        assert y.size <= fc.window  # sliding window: cost does not grow
        real_refresh(y)

    fc._fit, fc._refresh = fit, refresh
    y = synthetic.random_walk(n=400)
    for t in range(200, 400):
        fc.update(y[:t])
        fc.predict(1)
    # every fit ends by taking up the window its forecast filters
    assert calls['fit'] == 40 and calls['refresh'] == 160 + 40


ARIMAS = [arima.Arima100, arima.Arima110, arima.Arima011, arima.Arima200,
          arima.Arima010]


@pytest.mark.parametrize('cls', ARIMAS)
def test_arima_forecast_is_statsmodels_forecast_of_the_window(cls):
    y = synthetic.random_walk(n=300)
    fc = cls(refit_interval=10)
    fc.update(y[:250])
    fc.update(y[:251])  # a steady round: the parameters of the fit
    model = fc._model(y[251 - fc.window:251] / fc._scale)
    model.ssm.initialize_approximate_diffuse()
    want = model.filter(fc._params).forecast(10) * fc._scale
    np.testing.assert_allclose(fc.predict(10), np.maximum(want, 0),
                               rtol=1e-9)


@pytest.mark.parametrize('cls', ARIMAS)
def test_arima_steady_round_filters_once_and_estimates_nothing(
        cls, monkeypatch):
    built, fitted = [], []

    class Counted(arima.ARIMA):
        # every statsmodels model, the clones a forecast makes included
        def __init__(self, *args, **kwargs):
            built.append(1)
            super().__init__(*args, **kwargs)

        def fit(self, **kwargs):
            fitted.append(kwargs)
            return super().fit(**kwargs)

    monkeypatch.setattr(arima, 'ARIMA', Counted)
    fc = cls(refit_interval=3)
    y = synthetic.stationary_ar(n=300)
    for t in range(200, 206):
        before = len(built), len(fitted), fc.fits
        fc.update(y[:t])
        fc.predict(10)
        fc.release()
        models = len(built) - before[0]
        fits = len(fitted) - before[1]
        if fc.fits > before[2]:  # rounds 0 and 3: estimate, then filter
            assert fits >= 1 and models == fits + 1
            assert all(f['return_params'] for f in fitted[before[1]:])
        else:  # one model: one filter pass, the forecast included
            assert (models, fits) == (1, 0)
    assert fc.fits == 2


@pytest.mark.parametrize('season', [None, 24])
def test_holt_winters_forecast_is_statsmodels_forecast(season):
    y = (synthetic.diurnal(n=24 * 10, period=24) if season
         else synthetic.linear_ramp(200))
    fc = seasonal.HoltWintersForecaster(seasonal_periods=[season or 500])
    fc.update(y[:-2])
    fc.update(y[:-1])  # a steady round: the recursion carried on
    assert fc._season == season
    np.testing.assert_allclose(fc.predict(10),
                               np.maximum(fc._res.forecast(10), 0),
                               rtol=1e-12)


def test_tree_forecast_is_the_checked_predict():
    y = synthetic.random_walk(n=400)
    fc = tree.RegressionTreeForecaster()
    fc.update(y)
    hist = list(y[-(fc.lags + 1):])
    for _ in range(5):
        h = np.asarray(hist[-(fc.lags + 1):])
        row = np.append(np.diff(h) / fc._scale, (h[-1] - fc._mean) / fc._scale)
        hist.append(h[-1] + fc._tree.predict(row.reshape(1, -1))[0]
                    * fc._scale)
    np.testing.assert_allclose(fc.predict(5), np.maximum(hist[-5:], 0),
                               rtol=1e-12)


def test_refit_offsets_spread_over_series():
    e = ens.Ensemble(classes={'arima_100': arima.Arima100}, refit_interval=10)
    ages = {
        e.series(('c%d' % i, 'read')).forecasters['arima_100']._age
        for i in range(50)
    }
    assert len(ages) > 5


def _blas_threads():
    return {i['num_threads'] for i in threadpoolctl.threadpool_info()
            if i['user_api'] == 'blas'}


def test_blas_threads_capped_and_0_leaves_them():
    before = _blas_threads()
    try:
        base.limit_blas_threads(0)
        assert _blas_threads() == before
        base.limit_blas_threads(1)
        assert _blas_threads() == {1}
    finally:
        if before:
            threadpoolctl.threadpool_limits(limits=max(before),
                                            user_api='blas')
