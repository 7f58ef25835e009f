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
"""Done-when accuracy of issue 5: the ensemble against single forecasters."""

import numpy as np
import pytest

from elastman.predictor import ensemble as ens
from elastman.predictor import evaluate
from tests.unit.predictor import synthetic

# About 90 s of CPU in all; the wall-clock limit leaves room for a shared,
# busy machine (pytest.ini sets 900 s per test, fixture included).
pytestmark = pytest.mark.timeout(2400)

SEASON = 48  # the synthetic diurnal trace has 48 points a "day"


def _eval(values: np.ndarray) -> dict:
    return evaluate.evaluate_series(
        values, warmup=30, seasonal_periods=[SEASON]
    )


@pytest.fixture(scope='module')
def results() -> dict:
    traces = synthetic.all_traces()
    out = {name: _eval(y) for name, y in traces.items()}
    out['concatenation'] = _eval(np.concatenate(list(traces.values())))
    return out


def _best_single(res: dict) -> float:
    return min(e['mape'] for e in res['forecasters'].values())


@pytest.mark.parametrize(
    'trace',
    ['stationary_ar', 'random_walk', 'linear_ramp', 'diurnal', 'flash_crowd'],
)
def test_ensemble_within_10_percent_of_best_single(results, trace):
    res = results[trace]
    assert res['scored'] >= 200
    best = _best_single(res)
    assert res['majority']['mape'] <= 1.10 * best, (
        res['majority'],
        res['forecasters'],
    )


def test_ensemble_beats_every_single_forecaster_on_concatenation(results):
    res = results['concatenation']
    assert res['scored'] >= 1150
    for name, single in res['forecasters'].items():
        assert res['majority']['mape'] < single['mape'], name


def test_every_forecaster_scored_and_timeline_recorded(results):
    res = results['concatenation']
    assert len(res['forecasters']) == 7
    assert res['timeline'][0][0] >= 1
    # The selector really switches between forecasters as the shape changes.
    assert len(res['chosen_counts']) >= 3
    assert sum(res['chosen_counts'].values()) == res['points'] - 1


def test_seasonal_forecaster_wins_the_diurnal_trace(results):
    res = results['diurnal']
    assert _best_single(res) == res['forecasters']['holt_winters']['mape']


def test_paper_like_shape_mape_at_most_4_6_percent():
    y = synthetic.paper_shape()
    res = _eval(y)
    assert res['scored'] >= 100
    assert res['majority']['mape'] <= 4.6
    assert res['average']['mape'] <= 4.6
    assert 0 < res['majority']['smape'] <= 4.6


def _ramp_then_drop(seed: int) -> np.ndarray:
    """Issue 6's live ramp at 20 s steps: training levels, a rise to
    2,700 reads/s, a plateau, then a step down to 270 held for 7 minutes
    (3% noise).
    """
    rng = np.random.default_rng(seed)
    levels = [(2, 0), (1, 130), (1, 270), (1, 650), (2, 1080), (1, 1420)]
    levels += [(1, 1350 + 300 * i) for i in range(5)] + [(3, 2700), (7, 270)]
    return np.array([max(0.0, level * (1 + rng.normal(0, 0.03)))
                     for minutes, level in levels for _ in range(3 * minutes)])


@pytest.mark.parametrize('horizon, seed', [(9, 0), (9, 1), (9, 2), (9, 3), (24, 0), (24, 1)])
def test_forecast_peak_follows_a_step_down_within_five_minutes(horizon, seed):
    # The actuator sizes for the highest value over the horizon; after the
    # load falls every forecaster misses for a while, and the selection must
    # still move to one that follows the new level, or the cluster never
    # scales in (the second live ramp run, before this was fixed). At the
    # actuator's 24 steps (8 minutes at 20 s), scoring by the plain mean over
    # all the paths reaching a round let the paths made before the fall (off
    # by up to 10x) decide for 8 minutes; errors capped at 100% and paths
    # weighted by 1/age follow within 5.
    y = _ramp_then_drop(seed)
    drop = y.size - 21
    ensemble = ens.Ensemble(horizon=horizon)
    peaks = []
    for t in range(3, y.size + 1):
        forecast = ensemble.predict('reads', list(y[:t]))
        if t > drop:
            peaks.append(max(forecast.values))
    assert min(peaks[:15]) < 1.5 * 270, peaks
