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
"""elastman-predictor: forecasts each cluster's read and write intensity.

Every ``[predictor] period`` seconds, for every cluster whose lease it holds,
it reads the cluster's workload rows that are new since its last round from
the store (:mod:`elastman.predictor.window` keeps the rest of the history
window) and, once a bucket of ``[predictor] step`` seconds has closed since
its last forecast, averages them into those buckets, lets the ensemble
score the forecasters on the points that arrived since, forecasts the
horizon, and stores the forecast (in ``forecasts``, where the actuator reads
it) with the chosen forecaster and all weights. The selectors' weights and
the forecasters' estimated parameters are stored too (the large states,
e.g. Holt-Winters' season, after each of their full fits only), so a
restarted predictor keeps what it learnt and re-filters instead of
re-estimating.

A cluster's buckets lie on the grid of its planning phase
(:func:`elastman.common.schedule.phase_of` of the step, as the actuator
plans it) less one ``period``: each closes one round before the
actuator's planning loop, which so reads a forecast of control-period
means made a round or two before (:func:`bucket_end`). With ``step`` 0 a
point is one ``period``, each bucket ending at the round.
"""
from __future__ import annotations

import datetime
import json
import math
import threading
import time
from typing import Any

from oslo_log import log as logging

from elastman.common import exception
from elastman.common import schedule
from elastman.common import timestamps
from elastman.predictor import ensemble as ensemble_mod
from elastman.predictor.forecasters import base as forecaster_base
from elastman.predictor import history as history_mod
from elastman.predictor import window as window_mod
from elastman.store import sharing

LOG = logging.getLogger(__name__)

METRICS = ('reads_per_s', 'writes_per_s')
STATE_SCOPE = 'predictor-state'
FITTED_SCOPE = 'predictor-fitted'


class PredictorManager(sharing.SharedManager):
    """Forecasts from ``cluster_workload`` into ``forecasts``. No RPC
    API.
    """

    WORKER = 'predictor'

    def __init__(self, conf, store=None,
                 ensemble: ensemble_mod.Ensemble | None = None) -> None:
        super().__init__(conf, store)
        forecaster_base.limit_blas_threads(conf.predictor.blas_threads)
        self.ensemble = ensemble or ensemble_mod.Ensemble.from_conf(conf)
        self._last_bucket: dict[tuple[str, str], float] = {}
        #: each held cluster's workload rows, read incrementally
        self._windows: dict[str, window_mod.WorkloadWindow] = {}
        #: the version this worker last wrote, by (scope, series key)
        self._versions: dict[tuple[str, tuple[str, str]], int] = {}
        self._lock = threading.Lock()

    @property
    def lease_ttl(self) -> int:
        return 3 * self.conf.predictor.period + 1

    @property
    def horizon_steps(self) -> int:
        """Steps covering the next control period plus a node's join time,
        so the actuator can act before the load arrives, from a forecast
        read up to a step and a round after its newest bucket closed.
        """
        need = self.conf.actuator.control_period + \
            self.conf.actuator.join_timeout
        late = self.step + self.conf.predictor.period
        return max(self.conf.predictor.horizon,
                   math.ceil((need + late) / self.step))

    @property
    def step(self) -> float:
        """Seconds of one point of a forecast series."""
        return float(ensemble_mod.series_step(self.conf))

    def bucket_end(self, cluster_id: str, now: float) -> float:
        """Where the newest bucket of ``cluster_id`` that has closed by
        ``now`` ends.
        """
        if not self.conf.predictor.step:        # a point a round
            return schedule.grid_end(now, 0.0, self.step)
        return schedule.grid_end(now, schedule.phase_of(cluster_id, self.step),
                                 self.step, lead=float(self.conf.predictor.period))

    @property
    def round_budget(self) -> float:
        return self.conf.predictor.round_budget * self.conf.predictor.period

    def periodic_tasks(self):
        return [(self.predict_all, self.conf.predictor.period)]

    def describe(self) -> str:
        return 'forecasting with %s (%s selection)' % (
            ', '.join(self.ensemble.names), self.conf.predictor.selection)

    def predict_all(self, now: float | None = None) -> None:
        """One round over this predictor's share of the clusters (leases)."""
        clusters = self.store.clusters.all()
        mine = self.mine(clusters)
        for cluster in clusters:
            cluster_id = str(cluster['id'])
            if cluster_id not in mine:
                self._windows.pop(cluster_id, None)
                for metric in METRICS:
                    self.ensemble.forget((cluster_id, metric))
                    self._last_bucket.pop((cluster_id, metric), None)
                    for scope in (STATE_SCOPE, FITTED_SCOPE):
                        self._versions.pop((scope, (cluster_id, metric)), None)
        self.each_cluster(clusters, mine,
                          lambda c: self.predict_cluster(c, now), 'forecast')

    def predict_cluster(self, cluster: dict, now: float | None = None
                        ) -> dict[str, ensemble_mod.Forecast]:
        now = time.time() if now is None else now
        step = self.step
        cluster_id = str(cluster['id'])
        end = self.bucket_end(cluster_id, now)
        if all(self._last_bucket.get((cluster_id, m)) == end for m in METRICS):
            return {}                   # no bucket closed since the last
        stamps, values = self._workload(cluster, now)
        if not len(stamps):
            return {}
        forecasts = {}
        with self._lock:
            for metric in METRICS:
                key = (cluster_id, metric)
                series = history_mod.regularise(stamps, values[metric],
                                                step, end=end)
                self._load_state(key)
                last = self._last_bucket.get(key)
                advanced = 1 if last is None else max(
                    0, int(round((end - last) / step)))
                if advanced == 0:
                    continue
                forecast = self.ensemble.predict(key, series,
                                                 self.horizon_steps,
                                                 advanced=advanced)
                self._last_bucket[key] = end
                if not forecast.values:
                    continue
                forecasts[metric] = forecast
                made_at = datetime.datetime.fromtimestamp(
                    now, datetime.timezone.utc)
                starts_at = datetime.datetime.fromtimestamp(
                    end, datetime.timezone.utc)
                self.store.forecasts.add(cluster['id'], metric, made_at,
                                         int(step), forecast.values,
                                         forecast.chosen or 'none',
                                         forecast.weights,
                                         upper=forecast.upper,
                                         quantile=forecast.level,
                                         peak=forecast.peak,
                                         starts_at=starts_at)
                self._save(STATE_SCOPE, key, self.ensemble.state(key), end)
                fitted = self.ensemble.fitted_state(key)
                if fitted is not None:
                    self._save(FITTED_SCOPE, key, fitted, end)
        return forecasts

    def _workload(self, cluster: dict, now: float
                  ) -> tuple[Any, dict[str, Any]]:
        """The cluster's workload rows in the history window up to
        ``now``: timestamps (epoch s) and each metric's values. Only the
        rows since the last round's newest (less an overlap of three
        monitor or predictor periods, for rows written late) are read.
        """
        period = float(self.conf.predictor.period)
        start = now - self.conf.predictor.history_window * self.step
        cluster_id = str(cluster['id'])
        window = self._windows.get(cluster_id)
        if window is None or (len(window) and window.ts[-1] > now):
            # first round, or a clock that went back: read it all
            window = self._windows[cluster_id] = \
                window_mod.WorkloadWindow(METRICS)
        overlap = 3 * max(period, self.conf.monitor.sampling_interval)
        since = window.read_from(start, overlap)
        read = self.store.samples.cluster_workload(
            cluster['id'], datetime.datetime.fromtimestamp(
                since, datetime.timezone.utc))
        rows = [r for r in read if timestamps.epoch(r['ts']) <= now]
        window.merge(since, [timestamps.epoch(r['ts']) for r in rows], rows,
                     start)
        return window.ts, window.values

    def _save(self, scope: str, key: tuple[str, str], document: Any,
              end: float) -> None:
        """Store the next version of a series' document and drop the ones
        before the previous: a plain write and a delete, since this worker
        holds the cluster's lease and remembers the version it wrote last
        (read once per series and process).
        """
        name = '%s/%s' % key
        last = self._versions.get((scope, key))
        if last is None:
            last = self.store.models.latest_version(scope, name)
        version = self.store.models.put(scope, name, last + 1,
                                        json.dumps(document).encode(),
                                        params={'last_bucket': end,
                                                'step': self.step})
        self._versions[(scope, key)] = version
        self.store.models.prune(scope, name, 2, latest=version)

    def _load_state(self, key: tuple[str, str]) -> None:
        if key in self._last_bucket or key in self.ensemble.keys():
            return
        try:
            row = self.store.models.get(STATE_SCOPE, '%s/%s' % key)
        except exception.NotFound:
            return
        # a state learnt on another step (one stored before the option
        # was: a round's period) forecast other points: start again
        stored_step = float(row['params'].get('step')
                            or self.conf.predictor.period)
        if stored_step != self.step:
            LOG.info('predictor state of %s/%s was learnt on %g s steps, '
                     'not %g s: starting again', key[0], key[1],
                     stored_step, self.step)
            return
        fitted = None
        try:
            fitted = json.loads(self.store.models.get(
                FITTED_SCOPE, '%s/%s' % key)['payload'])
        except exception.NotFound:
            pass
        except ValueError as exc:   # the forecasters estimate again
            LOG.warning('Ignoring the stored fitted state of %s/%s: %s',
                        key[0], key[1], exc)
        self.ensemble.load_state(key, json.loads(row['payload']), fitted)
        self._last_bucket[key] = row['params'].get('last_bucket')
        LOG.info('predictor state of %s/%s restored', *key)
