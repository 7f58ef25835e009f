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
"""Checking a monitor sample before it may touch a model."""
from __future__ import annotations

import math
from typing import Any, Container, Mapping, Sequence

from elastman.capacity.features import Feature


class InvalidSample(ValueError):
    """A sample that must not reach a model; ``reason`` says why."""

    def __init__(self, reason: str, node_id: Any = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.node_id = node_id


def check_sample(sample: Any, features: Sequence[Feature], slo_metric: str,
                 known_nodes: Container[str] | None = None,
                 cluster_id: str | None = None) -> tuple[list[float], float, float]:
    """Return (point, SLO-metric value, timestamp) or raise InvalidSample.

    Rejected: not a mapping, wrong cluster, unknown node, node down, missing or
    non-finite timestamp, NaN/infinite/negative feature values, and a missing,
    NaN or negative SLO metric.
    """
    if not isinstance(sample, Mapping):
        raise InvalidSample('sample is not a mapping')
    node = sample.get('node_id')
    if not node:
        raise InvalidSample('sample has no node_id')
    if cluster_id is not None and sample.get('cluster_id') != cluster_id:
        raise InvalidSample('sample of cluster %r, expected %r'
                            % (sample.get('cluster_id'), cluster_id), node)
    if known_nodes is not None and node not in known_nodes:
        raise InvalidSample('unknown node %r' % (node,), node)
    if sample.get('up') is False:
        raise InvalidSample('node is down', node)
    ts = _finite(sample.get('ts'))
    if ts is None:
        raise InvalidSample('timestamp missing or not finite', node)
    point = []
    for feat in features:
        try:
            value = feat.extract(sample)
        except Exception as exc:  # a plug-in must not break the trainer
            raise InvalidSample('feature %s failed: %s' % (feat.name, exc), node)
        if value is None or not math.isfinite(value):
            raise InvalidSample('feature %s is missing or not finite' % feat.name, node)
        if value < 0:
            raise InvalidSample('feature %s is negative (%r)' % (feat.name, value), node)
        point.append(float(value))
    metric = _finite(sample.get(slo_metric))
    if metric is None:
        raise InvalidSample('SLO metric %s missing or not finite' % slo_metric, node)
    if metric < 0:
        raise InvalidSample('SLO metric %s is negative (%r)' % (slo_metric, metric), node)
    return point, metric, ts


def _finite(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None
