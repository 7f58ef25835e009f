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
"""Workload forecasts per cluster and metric, with forecaster weights.

``predicted`` is the point forecast, one value per step of ``step_s``, the
first beginning at ``starts_at`` (the end of the newest bucket the forecast
had; null in rows written before it existed: then ``ts``, when it was
made);
``peak[k]`` the forecast of the highest value among the first ``k + 1``
steps, and ``upper[k]`` its ``quantile`` upper bound (both empty for rows
written before they existed).
"""
from __future__ import annotations

import datetime
import uuid

from elastman.common import exception
from elastman.store import base


class ForecastRepository(base.Repository):

    def add(self, cluster_id: uuid.UUID, metric: str, ts: datetime.datetime,
            step_s: int, predicted: list[float], forecaster: str,
            weights: dict[str, float], upper: list[float] | None = None,
            quantile: float | None = None,
            peak: list[float] | None = None,
            starts_at: datetime.datetime | None = None) -> None:
        self._execute(
            'INSERT INTO forecasts (cluster_id, metric, ts, horizon_s, step_s,'
            ' predicted, forecaster, weights, peak, upper, quantile,'
            ' starts_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'
            ' USING TTL ?',
            (cluster_id, metric, ts, step_s * len(predicted), step_s,
             [float(v) for v in predicted], forecaster,
             {k: float(v) for k, v in weights.items()},
             [float(v) for v in peak or []],
             [float(v) for v in upper or []],
             None if quantile is None else float(quantile),
             starts_at or ts, self._conf.store.forecast_ttl))

    def latest(self, cluster_id: uuid.UUID, metric: str) -> dict:
        row = self._one('SELECT * FROM forecasts WHERE cluster_id = ? AND '
                        'metric = ? LIMIT 1', (cluster_id, metric))
        if row is None:
            raise exception.NotFound(kind='forecast',
                                     id='%s/%s' % (cluster_id, metric))
        return row

    def list(self, cluster_id: uuid.UUID, metric: str, limit: int = 100,
             marker: str | None = None) -> base.Page:
        return self._page('SELECT * FROM forecasts WHERE cluster_id = ? AND '
                          'metric = ?', (cluster_id, metric), limit, marker)
