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
"""The predictor worker against the real store."""
import datetime
import json

import numpy as np
import pytest

from elastman.common import schedule
from elastman.common import timestamps
from elastman.predictor import combinations
from elastman.predictor import manager as predictor_manager

T0 = datetime.datetime(2026, 11, 1, 0, 0, tzinfo=datetime.timezone.utc)


def test_forecasts_stored_with_weights_and_resumed(conf, store):
    conf.set_override('period', 60, 'predictor')
    conf.set_override('step', 0, 'predictor')       # a point per round
    try:
        cluster = store.clusters.create('p', 'c', spec={})
        rng = np.random.default_rng(0)
        minutes = 240
        for i in range(minutes):
            ts = T0 + datetime.timedelta(minutes=i)
            reads = 1000 + 10 * i + rng.normal(0, 10)   # a ramp
            store.samples.add_cluster_workload(cluster['id'], ts, reads,
                                               300.0, 3, 3)
        now = (T0 + datetime.timedelta(minutes=minutes)).timestamp()
        first = predictor_manager.PredictorManager(conf, store=store)
        forecasts = first.predict_cluster(cluster, now=now)
        assert set(forecasts) == {'reads_per_s', 'writes_per_s'}
        stored = store.forecasts.latest(cluster['id'], 'reads_per_s')
        assert len(stored['predicted']) == first.horizon_steps
        # the bound on the running peak: one per step, never below it
        assert len(stored['upper']) == first.horizon_steps
        assert stored['quantile'] == conf.predictor.quantile
        assert all(u >= p - 1e-6 for u, p in zip(
            stored['upper'], np.maximum.accumulate(stored['predicted'])))
        assert set(stored['weights']) == set(first.ensemble.names)
        # the ramp goes on: the first step predicts more than the last point
        assert stored['predicted'][0] > 1000 + 10 * (minutes - 5)
        assert abs(stored['predicted'][0] - (1000 + 10 * minutes)) < 100

        # five more minutes; a restarted predictor scores its forecasters
        for i in range(minutes, minutes + 5):
            store.samples.add_cluster_workload(
                cluster['id'], T0 + datetime.timedelta(minutes=i),
                1000 + 10 * i, 300.0, 3, 3)
        second = predictor_manager.PredictorManager(conf, store=store)
        later = second.predict_cluster(cluster, now=now + 300)
        weights = later['reads_per_s'].weights
        assert set(weights) == set(first.ensemble.names)
        # the answer follows a forecaster or one of their combinations
        assert later['reads_per_s'].chosen in (
            list(weights) + list(combinations.Select.EXTRA))
        # ... and takes up the estimates: only the tree (not persisted) and
        # forecasters whose refit fell due were estimated again
        key = (str(cluster['id']), 'reads_per_s')
        restored = {n: fc for n, fc in
                    second.ensemble.series(key).forecasters.items()}
        assert restored['holt_winters'].fits == 0
        assert restored['arima_110'].fits == 0
        assert restored['regression_tree'].fits == 1
        fitted = store.models.get(predictor_manager.FITTED_SCOPE,
                                  '%s/%s' % key)
        assert 'holt_winters' in json.loads(fitted['payload'])
        # the restarted worker went on from the version it took up
        assert store.models.latest_version(predictor_manager.STATE_SCOPE,
                                           '%s/%s' % key) == 2
        # nothing new: nothing forecast again
        assert second.predict_cluster(cluster, now=now + 300) == {}
    finally:
        conf.clear_override('period', 'predictor')
        conf.clear_override('step', 'predictor')


def test_forecasts_control_period_means_ending_a_round_before_planning(
        conf, store):
    """With the default step, a cluster's buckets end one predictor period
    before its planning phase of the control period, and a round forecasts
    it only once a new bucket has closed.
    """
    step, period = conf.predictor.step, conf.predictor.period
    assert (step, period) == (300, 60)
    cluster = store.clusters.create('p', 'grid', spec={})
    cluster_id = str(cluster['id'])
    for i in range(240):
        store.samples.add_cluster_workload(
            cluster['id'], T0 + datetime.timedelta(minutes=i),
            1000 + 10 * i, 100.0, 3, 3)
    phase = schedule.phase_of(cluster_id, step)
    end = schedule.grid_end(T0.timestamp() + 240 * 60, phase, step, period)
    # the planning phase the actuator uses lies one period after the end
    assert (end + period - phase) % step == pytest.approx(0.0)
    manager = predictor_manager.PredictorManager(conf, store=store)
    forecasts = manager.predict_cluster(cluster, now=end + 10)
    assert set(forecasts) == {'reads_per_s', 'writes_per_s'}
    row = store.forecasts.latest(cluster['id'], 'reads_per_s')
    assert row['step_s'] == step
    # made ten seconds after the bucket it forecasts from ended
    assert timestamps.epoch(row['starts_at']) == pytest.approx(end)
    assert timestamps.epoch(row['ts']) == pytest.approx(end + 10)
    # its newest point is the mean of the five minutes up to the end
    state = store.models.get(predictor_manager.STATE_SCOPE,
                             '%s/reads_per_s' % cluster_id)
    assert state['params'] == {'last_bucket': end, 'step': step}
    minutes = (end - T0.timestamp()) / 60
    assert forecasts['reads_per_s'].values[0] > 1000 + 10 * (minutes - 3)
    # within the same bucket nothing is forecast; at the next end, again
    assert manager.predict_cluster(cluster, now=end + step - 1) == {}
    assert set(manager.predict_cluster(cluster, now=end + step)) == {
        'reads_per_s', 'writes_per_s'}
    # a predictor set to another step does not take up this state
    conf.set_override('step', 0, 'predictor')
    try:
        other = predictor_manager.PredictorManager(conf, store=store)
        other._load_state((cluster_id, 'reads_per_s'))
        assert (cluster_id, 'reads_per_s') not in other._last_bucket
    finally:
        conf.clear_override('step', 'predictor')


def test_bad_history_gives_a_forecast_not_an_exception(conf, store):
    cluster = store.clusters.create('p', 'c', spec={})
    for i, value in enumerate([5.0, float('nan'), 5.0, 5.0]):
        store.samples.add_cluster_workload(
            cluster['id'], T0 + datetime.timedelta(minutes=i), value, 0.0,
            1, 1)
    manager = predictor_manager.PredictorManager(conf, store=store)
    forecasts = manager.predict_cluster(
        cluster, now=(T0 + datetime.timedelta(minutes=5)).timestamp())
    assert forecasts['reads_per_s'].values[0] == 5.0


def test_a_round_reads_only_the_rows_since_the_last_one(
        conf, store, monkeypatch):
    """The predictor keeps the history window between rounds: a round reads
    the new rows (and an overlap for rows written late), and holds the same
    rows as a predictor that reads the whole window.
    """
    conf.set_override('period', 60, 'predictor')
    conf.set_override('step', 0, 'predictor')
    try:
        cluster = store.clusters.create('p', 'c', spec={})
        rng = np.random.default_rng(1)

        def add(minute):
            store.samples.add_cluster_workload(
                cluster['id'], T0 + datetime.timedelta(minutes=minute),
                1000 + 5 * minute + rng.normal(0, 10), 300.0, 3, 3)

        for i in range(300):
            add(i)
        read = []
        workload = store.samples.cluster_workload

        def counted(cluster_id, since):
            rows = workload(cluster_id, since)
            read.append(len(rows))
            return rows
        monkeypatch.setattr(store.samples, 'cluster_workload', counted)
        now = (T0 + datetime.timedelta(minutes=300)).timestamp()
        kept = predictor_manager.PredictorManager(conf, store=store)
        kept.predict_cluster(cluster, now=now)
        assert read == [300]
        # two new minutes, and a row of minute 298 the monitor wrote late
        # (it replaces the one read before)
        for i in (298, 300, 301):
            add(i)
        forecasts = kept.predict_cluster(cluster, now=now + 120)
        assert read[1] <= 3 * 3 + 2        # the overlap and the new rows
        assert set(forecasts) == {'reads_per_s', 'writes_per_s'}
        # a new predictor reads the whole window (and forecasts nothing new:
        # the state stored by the other says where it stopped)
        whole = predictor_manager.PredictorManager(conf, store=store)
        whole.predict_cluster(cluster, now=now + 120)
        assert read[2] == 302
        key = (str(cluster['id']), 'reads_per_s')
        assert kept._windows[key[0]].ts.tolist() == \
            whole._windows[key[0]].ts.tolist()
        assert kept._windows[key[0]].values['reads_per_s'].tolist() == \
            whole._windows[key[0]].values['reads_per_s'].tolist()
    finally:
        conf.clear_override('period', 'predictor')
        conf.clear_override('step', 'predictor')
