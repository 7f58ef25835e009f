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
"""A restarted ensemble takes up its forecasters' estimates: its first round
re-filters instead of estimating every forecaster again."""

import json

import numpy as np

from elastman.predictor import ensemble as ens
from tests.unit.predictor import synthetic

KEY = ('c1', 'reads_per_s')


def _ensemble():
    return ens.Ensemble(horizon=5, seasonal_periods=[24], refit_interval=4)


def _round_trip(e):
    fitted = e.fitted_state(KEY)
    return (json.loads(json.dumps(e.state(KEY))),
            None if fitted is None else json.loads(json.dumps(fitted)))


def test_restarted_ensemble_goes_on_without_estimating():
    y = synthetic.diurnal(24 * 12, period=24)
    e = _ensemble()
    for end in range(200, 206):
        e.predict(KEY, y[:end])
    state, fitted = _round_trip(e)
    assert set(fitted) == {'holt_winters'}
    assert 'holt_winters' not in state['forecasters']
    assert {'arima_100', 'arima_010'} <= set(state['forecasters'])
    again = _ensemble()
    again.load_state(KEY, state, fitted)
    # what the combination learnt is taken up (only the newest round's
    # paths are stored, so the next round's learning differs a little)
    assert json.dumps(again.series(KEY).combination.to_dict()) == \
        json.dumps(state['combination'])
    a = e.predict(KEY, y[:206])
    b = again.predict(KEY, y[:206])
    fits = {n: fc.fits for n, fc in again.series(KEY).forecasters.items()}
    # only the tree is grown again (it has no stored state)
    assert {n for n, k in fits.items() if k} == {'regression_tree'}
    for name in a.predictions:
        if name != 'regression_tree':
            np.testing.assert_allclose(a.predictions[name],
                                       b.predictions[name], rtol=1e-9)


def test_restarted_ensemble_refits_when_the_original_would():
    y = synthetic.diurnal(24 * 12, period=24)
    e = _ensemble()
    for end in range(200, 203):
        e.predict(KEY, y[:end])
    state, fitted = _round_trip(e)
    again = _ensemble()
    again.load_state(KEY, state, fitted)
    arima = {'arima_100', 'arima_110', 'arima_011', 'arima_200', 'arima_010'}

    def fits(ens_):
        return {n: fc.fits for n, fc in ens_.series(KEY).forecasters.items()
                if n in arima}

    base = [fits(e), fits(again)]
    for end in range(203, 212):  # two refit intervals of 4 rounds
        a = e.predict(KEY, y[:end])
        b = again.predict(KEY, y[:end])
        now = [fits(e), fits(again)]
        refitted = [{n for n in arima if now[i][n] > base[i][n]}
                    for i in (0, 1)]
        # the stored refit phase: the same rounds estimate, the others only
        # filter with the parameters kept in memory
        assert refitted[0] == refitted[1]
        assert refitted[0] in (set(), arima)
        base = now
        for name in arima | {'holt_winters'}:
            np.testing.assert_allclose(a.predictions[name],
                                       b.predictions[name], rtol=1e-9)
    assert all(k == 2 for k in fits(again).values())


def test_large_state_only_after_a_full_fit():
    y = synthetic.diurnal(24 * 12, period=24)
    e = _ensemble()
    e.predict(KEY, y[:200])
    assert e.fitted_state(KEY) is not None     # the first estimation
    hw = e.series(KEY).forecasters['holt_winters']
    saved = []
    for end in range(201, 201 + hw.refit_interval + 1):
        e.predict(KEY, y[:end])
        saved.append(e.fitted_state(KEY) is not None)
    # one refit of Holt-Winters in a refit interval: one save
    assert saved.count(True) == 1


def test_a_bad_forecaster_state_spoils_only_itself(caplog):
    y = synthetic.random_walk(200)
    e = _ensemble()
    for end in range(150, 153):
        e.predict(KEY, y[:end])
    state, fitted = _round_trip(e)
    state['forecasters']['arima_110']['fitted']['params'] = ['x']
    again = _ensemble()
    again.load_state(KEY, state, fitted)
    assert 'arima_110' in caplog.text
    # the combination and the other forecasters are taken up all the same
    assert again.series(KEY).combination.to_dict() == \
        e.series(KEY).combination.to_dict()
    again.predict(KEY, y[:153])
    fits = {n: fc.fits for n, fc in again.series(KEY).forecasters.items()}
    assert fits['arima_110'] == 1 and fits['arima_100'] == 0


def test_state_without_forecasters_still_loads():
    """A state saved before forecasters persisted: the combination only."""
    y = synthetic.random_walk(200)
    e = _ensemble()
    e.predict(KEY, y[:150])
    state, _ = _round_trip(e)
    del state['forecasters'], state['ages']
    again = _ensemble()
    again.load_state(KEY, state)
    forecast = again.predict(KEY, y[:151])
    assert forecast.values
    assert all(fc.fits == 1 for fc in again.series(KEY).forecasters.values()
               if fc.name in forecast.predictions)
