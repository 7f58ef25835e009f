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
"""The combination rules and the paths they learn from."""
import json

import numpy as np
import pytest

from elastman.predictor import combinations as cb
from elastman.predictor import ensemble as ens
from elastman.predictor import paths


def test_paths_mature_one_lead_per_point_with_the_peak_seen_since():
    book = paths.PathBook(['a', 'b'])
    book.add({'a': [10.0, 20.0, 30.0], 'b': [5.0, 1.0, 2.0]},
             own_peak=[11.0, 21.0, 31.0])
    book.add({'a': [40.0, 50.0, 60.0]}, own_peak=[41.0, 51.0, 61.0])
    (first,) = book.advance([12.0])
    # both paths were made before this first point: it is lead 0 of both
    assert [m.lead for m in first] == [0, 0]
    (second,) = book.advance([8.0])
    newest, oldest = second
    assert (newest.lead, oldest.lead) == (1, 1)
    assert oldest.point.tolist() == [20.0, 1.0]
    assert oldest.peak.tolist() == [20.0, 5.0]          # running peaks
    assert (oldest.actual, oldest.actual_peak) == (8.0, 12.0)
    assert newest.point[0] == 50.0 and np.isnan(newest.point[1])
    assert oldest.own_peak == 21.0
    (third,) = book.advance([9.0])
    assert [m.lead for m in third] == [2, 2]
    assert book.advance([1.0]) == [[]] and book.entries == []


def test_paths_pending_round_trip():
    book = paths.PathBook(['a', 'b'])
    book.add({'a': [1.0, 2.0]}, own_peak=[1.0, 2.0])
    data = json.loads(json.dumps(book.pending()))
    other = paths.PathBook(['a', 'b'])
    other.load_pending(data)
    (matured,) = other.advance([3.0])
    assert matured[0].point[0] == 1.0 and np.isnan(matured[0].point[1])
    assert matured[0].own_peak == 1.0


def _feed(rule, paths_of, actuals, **opts):
    """Run a combination: each round's forecaster paths, then the point."""
    names = list(paths_of(0))
    comb = ens.Combiner(names, cb.make(rule, names, **opts))
    out = []
    for t, actual in enumerate(actuals):
        preds = {n: np.asarray(p, float) for n, p in paths_of(t).items()}
        c, upper = comb.answer(preds, len(next(iter(preds.values()))),
                               actual)
        out.append(c)
        comb.observe([actual])
    return out


def test_select_follows_the_best_candidate_per_lead():
    # 'near' is right about the next point, 'far' about the one after: the
    # point path takes each where it is right; the mean of the two is never
    # right, the median of two is the mean
    def paths_of(t):
        return {'near': [100.0, 130.0], 'far': [130.0, 100.0]}

    out = _feed('select', paths_of, [100.0] * 30, scope='lead')
    last = out[-1]
    assert last.values.tolist() == [100.0, 100.0]
    # the peak of the next two points is 100: 'near' reaches 130 within two
    # steps, so does 'far'; the best peak candidate is the one closest
    assert last.peak.tolist() == [100.0, 130.0]
    assert last.chosen in ('near', 'far', 'mean', 'median')
    assert sum(last.weights.values()) == pytest.approx(1.0)
    # pooled over the leads, one candidate serves every lead
    pooled = _feed('select', paths_of, [100.0] * 30, scope='pooled',
                   point_scope='pooled')[-1]
    assert pooled.values.tolist() in ([100.0, 130.0], [130.0, 100.0],
                                      [115.0, 115.0])


def test_by_default_the_point_per_lead_and_the_peak_pooled():
    # 'near' is right about the next point, 'far' about the one after; the
    # peak of the next two points is 100, which 'near' overshoots at lead 1
    # and 'far' at lead 0
    def paths_of(t):
        return {'near': [100.0, 130.0], 'far': [130.0, 100.0]}

    for rule in ('select', 'hedge'):
        last = _feed(rule, paths_of, [100.0] * 30)[-1]
        # the point: each lead from the candidate right at that lead
        assert last.values.tolist() == pytest.approx([100.0, 100.0],
                                                     abs=0.5), rule
        # the peak: one candidate (or mix) for every lead, so the peak path
        # is that of a single candidate, not 100 at both leads
        assert last.peak[1] > 110.0, rule
        # and no point above the peak of the steps up to it
        assert np.all(last.values <= last.peak), rule


def test_select_prefers_the_mean_when_errors_cancel():
    rng = np.random.default_rng(0)
    actual = 100.0 + rng.normal(0, 1, 200)
    noise = rng.normal(0, 5, (200, 2))

    def paths_of(t):
        # two forecasters, unbiased but noisy in opposite directions
        return {'a': [actual[t] + 10 + noise[t, 0]],
                'b': [actual[t] - 10 + noise[t, 1]]}

    out = _feed('select', paths_of, actual)
    assert [c.chosen for c in out[-50:]].count('mean') >= 45


def test_hedge_weights_by_recent_error_and_forgets():
    def paths_of(t):
        return {'good': [100.0], 'bad': [150.0]}

    out = _feed('hedge', paths_of, [100.0] * 40, eta=20.0, discount=0.9)
    assert out[-1].values[0] == pytest.approx(100.0, abs=1.0)
    assert out[-1].weights['good'] > 0.9
    # the workload moves to 'bad': within a few memory spans it follows
    out = _feed('hedge', paths_of, [100.0] * 40 + [150.0] * 40, eta=20.0,
                discount=0.9)
    assert out[-1].values[0] == pytest.approx(150.0, abs=2.0)


def test_relative_eta_weights_do_not_depend_on_the_errors_scale():
    """Two candidates 0.2% and 0.4% off a flat series: eta 20 per unit of
    error barely tells them apart, relative_eta weighs the better one as
    it weighs one 20% off against one 40% off.
    """
    def run(scale, **options):
        def paths_of(t):
            return {'good': [100.0 * (1 + scale)],
                    'bad': [100.0 * (1 + 2 * scale)]}
        return _feed('hedge', paths_of, [100.0] * 30, discount=0.8,
                     **options)[-1].weights
    small = run(0.002, eta=20.0)
    assert small['good'] == pytest.approx(small['bad'], abs=0.1)
    rel_small = run(0.002, relative_eta=5.0)
    rel_large = run(0.2, relative_eta=5.0)
    assert rel_small['good'] > 0.9
    assert rel_small['good'] == pytest.approx(rel_large['good'], abs=1e-3)


def test_mean_and_median_of_those_that_answered():
    comb = cb.make('median', ['a', 'b', 'c'])
    res = comb.combine(np.array([[1.0, 5.0], [2.0, 1.0], [np.nan, np.nan]]))
    assert res.values.tolist() == [1.5, 3.0]
    assert res.peak.tolist() == [1.5, 3.5]            # median of running peaks
    assert res.weights == {'a': 0.5, 'b': 0.5}
    mean = cb.make('mean', ['a', 'b'])
    assert mean.combine(np.array([[1.0], [3.0]])).values.tolist() == [2.0]


def _trained(rule):
    """A combiner of two forecasters after ten rounds, and its JSON state."""
    comb = ens.Combiner(['a', 'b'], cb.make(rule, ['a', 'b']))
    for t in range(10):
        comb.observe([100.0])
        comb.answer({'a': np.array([100.0, 101.0]),
                     'b': np.array([90.0, 95.0])}, 2, 100.0)
    return comb, json.loads(json.dumps(comb.to_dict()))


def test_state_round_trip_and_a_changed_pool():
    comb, data = _trained('select')
    again = ens.Combiner(['a', 'b'], cb.make('select', ['a', 'b']))
    again.load(data)
    assert again.combination.point.loss.size > 0
    assert np.allclose(again.combination.point.loss,
                       comb.combination.point.loss, atol=1e-4)
    assert np.allclose(again.combination.peak_all.loss,
                       comb.combination.peak_all.loss, atol=1e-4)
    # another pool of forecasters: what was learnt does not apply
    other = ens.Combiner(['a', 'c'], cb.make('select', ['a', 'c']))
    other.load(data)
    assert other.combination.point.loss.size == 0
    # another scope: neither
    lead = ens.Combiner(['a', 'b'], cb.make('select', ['a', 'b'],
                                            scope='lead'))
    lead.load(data)
    assert lead.combination.peak_all.loss.size == 0
    point = ens.Combiner(['a', 'b'], cb.make('select', ['a', 'b'],
                                             point_scope='both'))
    point.load(data)
    assert point.combination.point.loss.size == 0
    assert point.combination.peak_all.loss.size == 0
    with pytest.raises(ValueError):
        again.combination.load({'candidates': again.combination.candidates,
                                'scope': again.combination.scope,
                                'point_scope': again.combination.point_scope,
                                'point': {'loss': [[1.0]], 'count': [1.0]},
                                'peak': {'loss': [[1.0]], 'count': [1.0]}})


def test_unknown_rule_and_bad_options():
    with pytest.raises(ValueError, match='unknown combination'):
        cb.make('best', ['a'])
    with pytest.raises(ValueError, match='discount'):
        cb.make('select', ['a'], discount=0.0)
    with pytest.raises(ValueError, match='scope'):
        cb.make('hedge', ['a'], scope='everywhere')
    with pytest.raises(ValueError, match='scope'):
        cb.make('select', ['a'], point_scope='everywhere')


def test_switch_answers_with_hedge_until_a_forecaster_is_better_for_long():
    # 'good' is 0.2% off a flat series, 'bad' 0.4%: hedge (eta 20) mixes
    # them about evenly, so its error stays near 0.3%; switch starts with
    # hedge and then answers with 'good' alone
    def paths_of(t):
        return {'good': [100.2, 100.2], 'bad': [100.4, 100.4]}

    hedge = _feed('hedge', paths_of, [100.0] * 200)
    out = _feed('switch', paths_of, [100.0] * 200, switch_discount=0.99)
    assert out[0].values.tolist() == pytest.approx(hedge[0].values.tolist())
    assert out[0].chosen == hedge[0].chosen
    assert hedge[-1].values[0] > 100.25
    last = out[-1]
    assert last.values.tolist() == pytest.approx([100.2, 100.2])
    assert last.peak.tolist() == pytest.approx([100.2, 100.2])
    assert last.chosen == 'good' and last.weights['good'] == 1.0


def test_switch_point_waits_for_min_rounds_its_peak_does_not():
    # 'good' is 0.2% under a flat series, 'bad' 0.4%: hedge's point stays
    # near 99.7. The point follows 'good' only once it has been scored
    # for switch_min_rounds discounted rounds (36 rounds at 0.99); the
    # peak follows it from the second round whatever the minimum
    def paths_of(t):
        return {'good': [99.8, 99.8], 'bad': [99.6, 99.6]}

    actual = [100.0] * 60
    hedge = [c.values[0] for c in _feed('hedge', paths_of, actual)]
    waited = _feed('switch', paths_of, actual, switch_min_rounds=30)
    eager = _feed('switch', paths_of, actual, switch_min_rounds=0)
    assert [c.values[0] for c in waited[:36]] == pytest.approx(hedge[:36])
    assert max(hedge[1:36]) < 99.71
    assert [c.values[0] for c in waited[37:]] == pytest.approx([99.8] * 23)
    assert [c.values[0] for c in eager[1:]] == pytest.approx([99.8] * 59)
    for run in (waited, eager):
        assert [c.peak[0] for c in run[1:]] == pytest.approx([99.8] * 59)
    with pytest.raises(ValueError, match='switch_min_rounds'):
        cb.make('switch', ['a'], switch_min_rounds=-1)


def test_switch_keeps_hedge_where_hedge_is_the_better():
    # the best forecaster changes every 20 points: hedge follows within a
    # few points, every single forecaster is wrong half of the time
    def paths_of(t):
        return {'a': [100.0], 'b': [150.0]}

    actual = ([100.0] * 20 + [150.0] * 20) * 8
    out = _feed('switch', paths_of, actual, switch_discount=0.99)
    errors = [abs(c.values[0] - y) / y for c, y in zip(out, actual)]
    single = np.mean([abs(100.0 - y) / y for y in actual])
    assert np.mean(errors[60:]) < 0.5 * single


def test_switch_state_round_trip():
    comb, data = _trained('switch')
    again = ens.Combiner(['a', 'b'], cb.make('switch', ['a', 'b']))
    again.load(data)
    assert again.combination.point.loss.size > 0
    assert np.allclose(again.combination.point.loss,
                       comb.combination.point.loss, atol=1e-4)
    assert np.allclose(again.combination.inner.peak_all.loss,
                       comb.combination.inner.peak_all.loss, atol=1e-4)
    other = ens.Combiner(['a', 'c'], cb.make('switch', ['a', 'c']))
    other.load(data)
    assert other.combination.point.loss.size == 0
    with pytest.raises(ValueError, match='switch_discount'):
        cb.make('switch', ['a'], switch_discount=0.0)
