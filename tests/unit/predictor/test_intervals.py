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
"""The upper bound of the forecast peak: coverage, shape, state."""
import json

import numpy as np
import pytest

from elastman.predictor import ensemble as ens
from elastman.predictor import intervals


def test_bound_reaches_its_nominal_coverage_whatever_the_bias():
    rng = np.random.default_rng(3)
    for bias in (0.7, 1.0, 1.3):  # forecasts 30% low, right, 30% high
        q = intervals.PeakQuantile(0.9)
        misses = []
        for _ in range(3000):
            actual = 100.0 * np.exp(rng.normal(0.0, 0.1))
            misses.append(q.learn(0, 100.0 * bias, actual))
        rate = np.mean(misses[500:])
        assert rate == pytest.approx(0.1, abs=0.02), (bias, rate)


def test_upper_bounds_the_running_peak_and_grows_with_the_lead():
    q = intervals.PeakQuantile(0.9)
    rng = np.random.default_rng(0)
    for _ in range(500):
        for lead in range(3):
            noise = rng.normal(0.0, 0.05 * (lead + 1))
            q.learn(lead, 100.0, 100.0 * np.exp(abs(noise)))
    up = q.upper([100.0, 90.0, 95.0, 80.0])
    assert len(up) == 4
    assert np.all(np.diff(up) >= 0)
    assert up[0] > 100.0 and up[2] > up[0]
    # a lead never scored takes the longest learnt one's factor
    assert up[3] == pytest.approx(up[2])
    assert q.upper([]).size == 0


def test_level_adapts_when_misses_come_in_bursts():
    # a workload that steps up every 20 rounds: the last window's quantile
    # alone is exceeded more often than 10%; the adapted level brings the
    # miss rate back
    q = intervals.PeakQuantile(0.9, window=100)
    rng = np.random.default_rng(5)
    misses = []
    for t in range(4000):
        jump = 1.5 if (t // 20) % 10 == 0 else 1.0
        misses.append(q.learn(0, 100.0, 100.0 * jump
                              * np.exp(rng.normal(0.0, 0.05))))
    assert np.mean(misses[1000:]) == pytest.approx(0.1, abs=0.025)


def test_state_round_trip_and_bad_state():
    q = intervals.PeakQuantile(0.8)
    rng = np.random.default_rng(2)
    for _ in range(50):
        q.learn(0, 10.0, 10.0 * np.exp(rng.normal(0.1, 0.1)))
        q.learn(1, 10.0, 10.0 * np.exp(rng.normal(0.2, 0.1)))
    again = intervals.PeakQuantile(0.8)
    again.load(json.loads(json.dumps(q.to_dict())))
    # the windows are not stored: the stored factors stand in for them
    assert again.upper([10.0, 10.0]) == pytest.approx(q.upper([10.0, 10.0]),
                                                      rel=1e-5)
    other = intervals.PeakQuantile(0.95)
    other.load(q.to_dict())  # another level: not carried over
    assert other.upper([10.0]) == pytest.approx([10.0 * np.exp(0.1)])
    with pytest.raises(ValueError):
        again.load({'level': 0.8, 'theta': [0.1, float('nan')],
                    'alpha': [0.1, 0.1]})
    with pytest.raises(ValueError):
        intervals.PeakQuantile(1.0)


def test_ensemble_forecasts_carry_a_calibrated_bound():
    # a noisy random walk, forecast 6 steps ahead: the bound on the peak of
    # the next 6 points holds in about 90% of the rounds
    rng = np.random.default_rng(1)
    y = 1000.0 * np.exp(np.cumsum(rng.normal(0.0, 0.02, 700)))
    e = ens.Ensemble(names=['arima_010', 'arima_100'], horizon=6)
    hits = []
    for t in range(40, len(y) - 6):
        f = e.predict('k', y[:t])
        assert len(f.upper) == 6 and f.level == 0.9
        assert np.all(np.diff(f.upper) >= 0)
        assert np.all(np.asarray(f.upper)
                      >= np.maximum.accumulate(f.values) - 1e-9)
        if t >= 200:
            hits.append(max(y[t:t + 6]) <= f.upper[-1])
    assert np.mean(hits) == pytest.approx(0.9, abs=0.05)
    # the learnt bound survives a restart with the selector state
    state = json.loads(json.dumps(e.state('k')))
    again = ens.Ensemble(names=['arima_010', 'arima_100'], horizon=6)
    again.load_state('k', state)
    assert again.series('k').quantile.theta(6) == pytest.approx(
        e.series('k').quantile.theta(6), abs=1e-5)


def test_conformal_rank_covers_exchangeable_draws():
    # of n + 1 exchangeable scores, the last is at or below the first n's
    # score of that rank in at least `level` of the draws (exactly
    # rank / (n + 1) in expectation)
    rng = np.random.default_rng(7)
    for n in (9, 19, 50):
        rank = intervals.conformal_rank(n, 0.9)
        draws = rng.lognormal(0.0, 0.5, size=(20000, n + 1))
        bound = np.sort(draws[:, :n], axis=1)[:, rank - 1]
        cover = np.mean(draws[:, n] <= bound)
        assert cover >= 0.9 - 0.005, (n, cover)
        assert cover == pytest.approx(rank / (n + 1), abs=0.01)
    assert intervals.conformal_rank(8, 0.9) is None
    assert intervals.conformal_rank(9, 0.9) == 9
    assert intervals.conformal_rank(0, 0.5) is None


def test_few_scores_use_the_largest_seen_then_the_rank():
    q = intervals.PeakQuantile(0.9, gamma=0.0)
    for score in (0.05, 0.2, 0.1):  # 3 scores: too few for rank 0.9
        q.learn(0, 100.0, 100.0 * np.exp(score))
    assert q.theta(1)[0] == pytest.approx(0.2, abs=1e-6)
    # a longer lead with one small score: its own largest, but its bound
    # is not below the shorter lead's (the peak of more steps is no lower)
    q.learn(1, 100.0, 100.0 * np.exp(0.01))
    assert q.theta(2)[1] == pytest.approx(0.01, abs=1e-6)
    up = q.upper([100.0, 100.0])
    assert up[1] == pytest.approx(up[0]) == pytest.approx(100 * np.exp(0.2))
    # with 20 scores the lead's own rank: the 19th smallest (ceil(21 x 0.9))
    scores = np.r_[0.01, np.linspace(0.0, 0.018, 19)]
    for score in scores[1:]:
        q.learn(1, 100.0, 100.0 * np.exp(score))
    assert q.theta(2)[1] == pytest.approx(np.sort(scores)[18], abs=1e-6)


def test_a_miss_is_judged_on_the_bound_given_with_the_forecast():
    q = intervals.PeakQuantile(0.9)
    for _ in range(20):
        q.learn(0, 100.0, 100.0 * np.exp(0.3))
    # the factor learnt since covers this peak, the bound given did not
    assert q.theta(1)[0] == pytest.approx(0.3, abs=1e-6)
    before = q.misses[0]
    assert q.learn(0, 100.0, 120.0, bound=110.0)
    assert not q.learn(0, 100.0, 120.0, bound=125.0)
    # without a bound (after a restart), the current factor judges
    assert not q.learn(0, 100.0, 120.0)
    assert q.misses == [before + 1]


def test_level_reacts_within_a_few_rounds_when_the_forecast_turns_low():
    # a full window of small scores, then the peak forecasts turn 30% low:
    # the window's 90% quantile alone moves only after 40 new scores; the
    # adapted level (quantile_gamma 0.02) covers again within 8 rounds
    q = intervals.PeakQuantile(0.9, window=400)
    rng = np.random.default_rng(11)
    for _ in range(400):
        q.learn(0, 100.0, 100.0 * np.exp(rng.normal(0.0, 0.02)))
    rounds = None
    for t in range(40):
        bound = float(q.upper([100.0])[0])
        actual = 130.0 * np.exp(rng.normal(0.0, 0.02))
        q.learn(0, 100.0, actual, bound=bound)
        if rounds is None and actual <= bound:
            rounds = t
    assert rounds is not None and rounds <= 8, rounds


def test_the_bound_given_rides_with_the_pending_paths():
    e = ens.Ensemble(names=['arima_010'], horizon=3)
    rng = np.random.default_rng(4)
    y = 100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.02, 60)))
    f = e.predict('k', y[:50])
    book = e.series('k').combiner.book
    assert book.entries[0].upper == pytest.approx(f.upper, rel=1e-6)
    state = json.loads(json.dumps(e.state('k')))
    again = ens.Ensemble(names=['arima_010'], horizon=3)
    again.load_state('k', state)
    entry = again.series('k').combiner.book.entries[0]
    assert entry.upper == pytest.approx(f.upper, rel=1e-6)
    matured = again.series('k').combiner.book.advance([y[50]])[0]
    assert matured[0].own_upper == pytest.approx(f.upper[0], rel=1e-6)
