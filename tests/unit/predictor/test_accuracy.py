"""Done-when accuracy of issue 5: the ensemble against single forecasters."""

import numpy as np
import pytest

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
