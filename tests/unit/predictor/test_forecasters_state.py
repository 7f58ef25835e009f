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
"""A forecaster's estimated state survives a JSON round trip, and the
restored copy re-filters to the same forecast without estimating again."""

import json

import numpy as np
import pytest

from elastman.predictor.forecasters import arima
from elastman.predictor.forecasters import base
from elastman.predictor.forecasters import seasonal
from elastman.predictor.forecasters import tree
from tests.unit.predictor import synthetic

ARIMAS = [arima.Arima100, arima.Arima110, arima.Arima011, arima.Arima200,
          arima.Arima010]


def _restored(fc, cls, **kwargs):
    copy = cls(**kwargs)
    copy.restore(json.loads(json.dumps(fc.state())))
    return copy


def _same_next_round(fc, copy, y):
    """Both take one more point; the copy must not estimate."""
    fc.update(y)
    copy.update(y)
    assert copy.fits == 0
    return fc.predict(10), copy.predict(10)


@pytest.mark.parametrize('cls', ARIMAS)
def test_arima_restored_forecasts_as_the_original(cls):
    y = synthetic.stationary_ar(200)
    fc = cls(refit_interval=10)
    fc.fit(y[:-1])
    copy = _restored(fc, cls, refit_interval=10)
    a, b = _same_next_round(fc, copy, y)
    np.testing.assert_allclose(a, b, rtol=1e-9)


@pytest.mark.parametrize('season', [None, 24])
def test_holt_winters_restored_continues_its_recursion(season):
    y = synthetic.diurnal(24 * 10, period=24) if season else synthetic.linear_ramp(200)
    kwargs = {'seasonal_periods': [24] if season else []}
    fc = seasonal.HoltWintersForecaster(**kwargs)
    fc.fit(y[:-3])
    fc.update(y[:-2])
    state = fc.state()
    assert state['fitted']['season'] == season
    copy = _restored(fc, seasonal.HoltWintersForecaster, **kwargs)
    # two points arrived since the state was saved
    a, b = _same_next_round(fc, copy, y)
    np.testing.assert_allclose(a, b, rtol=1e-9)


def test_holt_winters_restored_on_a_rewritten_history_refilters():
    y = synthetic.linear_ramp(200)
    fc = seasonal.HoltWintersForecaster()
    fc.fit(y[:-1])
    copy = _restored(fc, seasonal.HoltWintersForecaster)
    other = y * 1.1      # no point of the saved tail is found again
    copy.update(other)
    assert copy.fits == 0
    assert copy.predict(1)[0] > other[-5]


def test_age_and_window_size_carry_over():
    y = synthetic.random_walk(200)
    fc = arima.Arima110(refit_interval=5)
    fc.fit(y[:150])
    for k in range(151, 154):
        fc.update(y[:k])
    copy = _restored(fc, arima.Arima110, refit_interval=5)
    assert copy.age == fc.age == 3
    copy.update(y[:154])
    assert copy.fits == 0
    copy.update(y[:155])        # the fifth round: re-estimated as scheduled
    assert copy.fits == 1
    # the age given by the caller (saved each round) wins
    later = arima.Arima110(refit_interval=5)
    later.restore(fc.state(), age=1)
    assert later.age == 1


def test_constant_series_state():
    fc = arima.Arima100()
    fc.fit(np.full(50, 7.0))
    copy = _restored(fc, arima.Arima100)
    assert copy.predict(3).tolist() == [7.0, 7.0, 7.0]


def test_unfitted_and_tree_have_no_state():
    assert arima.Arima100().state() is None
    fc = tree.RegressionTreeForecaster()
    fc.fit(synthetic.linear_ramp(200))
    assert fc.state() is None      # the tree is cheap to grow again
    with pytest.raises(ValueError):
        fc.restore({'name': 'regression_tree', 'age': 0, 'fit_size': 9,
                    'constant': None, 'fitted': {}})


@pytest.mark.parametrize('mutate', [
    lambda s: s.update(name='arima_010'),
    lambda s: s['fitted'].update(params=[0.1]),
    lambda s: s['fitted'].update(params=[0.1, float('nan'), 1.0]),
    lambda s: s['fitted'].update(scale=0.0),
    lambda s: s.pop('fit_size'),
    lambda s: s.update(fitted=None),
])
def test_bad_arima_state_is_refused_and_changes_nothing(mutate):
    fc = arima.Arima100()
    fc.fit(synthetic.stationary_ar(100))
    state = json.loads(json.dumps(fc.state()))
    mutate(state)
    fresh = arima.Arima100()
    with pytest.raises(ValueError):
        fresh.restore(state)
    assert fresh.state() is None
    fresh.update(synthetic.stationary_ar(100))
    assert fresh.fits == 1


@pytest.mark.parametrize('mutate', [
    lambda f: f.update(level=base.pack([1.0, 2.0])),
    lambda f: f.update(seasons=base.pack(np.zeros(5))),
    lambda f: f.update(last='not base64!'),
    lambda f: f['params'].update(smoothing_level=None),
    lambda f: f.update(trend=base.pack([1.0, float('inf'), 2.0])),
])
def test_bad_holt_winters_state_is_refused(mutate):
    fc = seasonal.HoltWintersForecaster(seasonal_periods=[24])
    fc.fit(synthetic.diurnal(24 * 10, period=24))
    state = json.loads(json.dumps(fc.state()))
    mutate(state['fitted'])
    fresh = seasonal.HoltWintersForecaster(seasonal_periods=[24])
    with pytest.raises(ValueError):
        fresh.restore(state)
    assert fresh.state() is None


def test_pack_round_trip_is_exact():
    values = np.array([1.0 / 3, -2.5e300, 0.0])
    assert base.unpack(base.pack(values)).tolist() == values.tolist()
    with pytest.raises(ValueError):
        base.unpack(base.pack(values)[:-4])
