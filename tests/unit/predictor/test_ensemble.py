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
"""Weighted majority: penalties, renormalisation, selection, state."""

import json

import numpy as np
import pytest

from elastman.common import exception
from elastman.predictor import ensemble as ens
from elastman.predictor.forecasters import arima
from elastman.predictor.forecasters import base


def test_weights_start_at_one_and_missers_are_penalised():
    wm = ens.WeightedMajority(
        ['a', 'b', 'c'], tolerance=0.1, penalty=0.5, floor=0.0
    )
    assert wm.weights == {'a': 1.0, 'b': 1.0, 'c': 1.0}
    missed = wm.penalise(100.0, {'a': 105.0, 'b': 120.0, 'c': 50.0})
    assert missed == ['b', 'c']
    assert wm.weights == {'a': 1.0, 'b': 0.5, 'c': 0.5}
    assert wm.choose(['a', 'b', 'c']) == 'a'
    assert wm.choose(['b', 'c']) == 'b'  # same weight: lower recent error wins


def test_renormalised_so_weights_never_underflow():
    wm = ens.WeightedMajority(
        ['a', 'b'], tolerance=0.01, penalty=0.1, floor=0.0
    )
    for _ in range(2000):
        wm.penalise(100.0, {'a': 200.0, 'b': 200.0})
    assert wm.weights == {'a': 1.0, 'b': 1.0}
    for _ in range(2000):
        wm.penalise(100.0, {'a': 100.0, 'b': 200.0})
    assert wm.weights['a'] == 1.0
    assert (
        wm.weights['b'] == 0.0
    )  # penalty**2000 underflows only with no floor


def test_floor_lets_a_forecaster_win_again():
    wm = ens.WeightedMajority(
        ['a', 'b'], tolerance=0.05, penalty=0.5, floor=0.01
    )
    for _ in range(100):
        wm.penalise(100.0, {'a': 100.0, 'b': 300.0})
    assert wm.weights['b'] == 0.01
    rounds = 0
    while wm.choose(['a', 'b']) == 'a':
        wm.penalise(100.0, {'a': 300.0, 'b': 100.0})
        rounds += 1
    assert rounds == 7  # 0.5**7 < 0.01


def test_when_everyone_misses_only_those_behind_the_best_are_penalised():
    # After a step every forecaster is outside the tolerance for a while;
    # the one closest to the new level (and any within the tolerance of it)
    # must keep its weight, or the ranking of before the step freezes.
    wm = ens.WeightedMajority(
        ['a', 'b', 'c'], tolerance=0.05, penalty=0.3, floor=0.0
    )
    wm.weights = {'a': 1.0, 'b': 0.3, 'c': 0.3}
    missed = wm.penalise(100.0, {'a': 300.0, 'b': 150.0, 'c': 152.0})
    assert missed == ['a']
    assert wm.weights == pytest.approx({'a': 1.0, 'b': 1.0, 'c': 1.0})
    wm.penalise(100.0, {'a': 300.0, 'b': 150.0, 'c': 200.0})
    assert wm.choose(['a', 'b', 'c']) == 'b'


def test_zero_penalty_keeps_the_best_of_a_round():
    wm = ens.WeightedMajority(['a', 'b'], tolerance=0.0, penalty=0.0,
                              floor=0.0)
    wm.penalise(1.0, {'a': 2.0, 'b': 3.0})
    assert wm.weights == {'a': 1.0, 'b': 0.0}


@pytest.mark.parametrize('penalty', [-0.1, 1.0, 1.5])
def test_penalty_out_of_range(penalty):
    with pytest.raises(ValueError):
        ens.WeightedMajority(['a'], penalty=penalty)


def test_average_is_weighted():
    wm = ens.WeightedMajority(['a', 'b'])
    wm.weights = {'a': 1.0, 'b': 0.25}
    out = wm.average(
        {'a': np.array([100.0, 200.0]), 'b': np.array([200.0, 400.0])}
    )
    assert out == pytest.approx([120.0, 240.0])


def test_state_round_trip_is_json():
    wm = ens.WeightedMajority(['a', 'b'], tolerance=0.1, penalty=0.3)
    wm.penalise(10.0, {'a': 10.0, 'b': 20.0})
    data = json.loads(json.dumps(wm.to_dict()))
    back = ens.WeightedMajority.from_dict(data)
    assert back.weights == wm.weights and back.errors == wm.errors
    assert back.penalty == 0.3 and back.tolerance == 0.1 and back.rounds == 1


class Fixed(base.Forecaster):
    """Forecasts ``value`` forever."""

    value = 0.0
    min_history = 1

    def _fit(self, y):
        pass

    def _predict(self, steps):
        return np.full(steps, self.value)


class Hundred(Fixed):
    value = 100.0


class Fifty(Fixed):
    value = 50.0


def test_series_round_scores_previous_forecast_and_selects_heaviest():
    e = ens.Ensemble(
        mode='majority',
        classes={'fifty': Fifty, 'hundred': Hundred},
        tolerance=0.1,
        penalty=0.5,
    )
    f = e.predict('c', [10.0, 20.0])
    assert f.chosen == 'fifty' and f.missed == []  # tie: configured order
    f = e.predict('c', [10.0, 20.0, 100.0])
    assert f.missed == ['fifty']
    assert f.chosen == 'hundred' and f.values == [100.0]
    assert f.weights == {'fifty': 0.5, 'hundred': 1.0}
    f = e.predict('c', [10.0, 20.0, 100.0, 100.0])
    assert f.weights == {'fifty': 0.25, 'hundred': 1.0}
    # advanced=0: the same history again scores nothing
    again = e.predict('c', [10.0, 20.0, 100.0, 100.0], advanced=0)
    assert again.missed == [] and again.weights == f.weights
    # the same weights, averaged
    avg = ens.Ensemble(classes={'fifty': Fifty, 'hundred': Hundred},
                       tolerance=0.1, penalty=0.5, mode='average')
    for t in (2, 3, 4):
        a = avg.predict('c', [10.0, 20.0, 100.0, 100.0][:t])
    assert a.values == pytest.approx([(0.25 * 50 + 100) / 1.25])
    assert a.mode == 'average' and a.peak == a.values


class Persist(base.Forecaster):
    """Repeats the last value: right at every horizon on a flat series."""

    min_history = 1

    def _fit(self, y):
        self._last = float(y[-1])

    def _refresh(self, y):
        self._last = float(y[-1])

    def _predict(self, steps):
        return np.full(steps, self._last)


class Drift(Persist):
    """Right about the next step, then climbs 50 per step."""

    def _predict(self, steps):
        return self._last + 50.0 * np.arange(steps)


def test_forecasters_are_scored_over_the_horizon():
    """The regression tree of a live run rolled a flat low load up to five
    times its level over the actuator's horizon while its next step was
    right; scoring the next step only kept choosing it.
    """
    y = [100.0, 101.0] * 10
    for horizon, chosen in ((1, 'drift'), (4, 'persist')):
        e = ens.Ensemble(mode='majority', classes={'drift': Drift, 'persist': Persist},
                         tolerance=0.1, penalty=0.5, horizon=horizon)
        for t in range(4, 14):
            f = e.predict('c', y[:t])
        assert f.chosen == chosen, (horizon, f.weights, f.missed)
    assert f.missed == ['drift'] and f.weights['persist'] == 1.0
    # a restart keeps the newest forecasts, and scores them next round
    state = json.loads(json.dumps(e.state('c')))
    fresh = ens.Ensemble(mode='majority', classes={'drift': Drift, 'persist': Persist},
                         tolerance=0.1, penalty=0.5, horizon=4)
    fresh.load_state('c', state)
    assert fresh.predict('c', y[:14]).missed == []  # one step: both right


def test_horizon_and_per_key_isolation():
    e = ens.Ensemble(mode='majority', classes={'arima_010': arima.Arima010}, horizon=4)
    f = e.predict(('c1', 'read'), np.arange(1.0, 30.0))
    assert len(f.values) == 4
    g = e.predict(('c1', 'write'), np.arange(1.0, 30.0), horizon=12)
    assert len(g.values) == 12
    assert set(e.keys()) == {('c1', 'read'), ('c1', 'write')}
    e.forget(('c1', 'read'))
    assert e.keys() == [('c1', 'write')]


def test_ensemble_state_survives_a_restart():
    classes = {'fifty': Fifty, 'hundred': Hundred}
    e = ens.Ensemble(mode='majority', classes=classes, tolerance=0.1)
    y = [
        100.0,
        101.0,
    ] * 5  # not constant: the constant shortcut would hide Fixed
    for t in range(3, 8):
        e.predict('c', y[:t])
    state = json.loads(json.dumps(e.state('c')))
    fresh = ens.Ensemble(mode='majority', classes=classes, tolerance=0.1)
    fresh.load_state('c', state)
    assert (fresh.state('c')['combination']['selector']['weights']
            == state['combination']['selector']['weights'])
    f = fresh.predict('c', y[:8])
    assert f.missed == ['fifty']  # the stored pending forecast was scored
    fresh.load_state('other', {'garbage': True})  # ignored, logged


def test_invalid_mode():
    with pytest.raises(ValueError):
        ens.Ensemble(classes={}, mode='nonsense')


def test_from_conf_uses_predictor_options():
    from oslo_config import cfg

    from elastman.conf import predictor as pconf

    conf = cfg.ConfigOpts()
    pconf.register_opts(conf)
    conf([], project='elastman')
    conf.set_override('period', 300, group='predictor')
    conf.set_override(
        'forecasters', ['arima_010', 'holt_winters'], group='predictor'
    )
    conf.set_override('selection', 'average', group='predictor')
    e = ens.Ensemble.from_conf(conf)
    assert e.names == ['arima_010', 'holt_winters']
    assert e.seasonal_periods == (288, 2016)
    assert e.mode == 'average' and e.horizon == conf.predictor.horizon
    assert e.tolerance == conf.predictor.tolerance


def test_the_configured_default_combination_is_the_ensemble_s():
    from oslo_config import cfg

    from elastman.conf import predictor as pconf

    conf = cfg.ConfigOpts()
    pconf.register_opts(conf)
    conf([], project='elastman')
    assert conf.predictor.selection == ens.DEFAULT_MODE == 'switch'
    assert ens.Ensemble.from_conf(conf).mode == 'switch'
    conf.set_override('switch_min_rounds', 12.5, group='predictor')
    switch = ens.Ensemble.from_conf(conf).make_combination()
    assert switch.point.min_rounds == 12.5 and switch.peak.min_rounds == 0


def test_no_loadable_forecaster_is_a_configuration_error():
    with pytest.raises(exception.ConfigurationError,
                       match=r"\[predictor\] forecasters: 'no_such_forecaster' cannot be "
                             r"loaded from the elastman.forecasters namespace"):
        ens.load_forecaster_classes(['no_such_forecaster'])
