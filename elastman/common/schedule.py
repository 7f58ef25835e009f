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
"""Periodic work spread over the period, one phase per cluster.

A worker that holds many clusters and does a costly step for each once a
period (the trainer's refit, the actuator's planning) would do every
cluster's step in the same round when the clusters came at once: after a
deployment, a restart or a take-over. Giving each cluster its own phase of
the period spreads those steps over the worker's rounds.
"""
from __future__ import annotations

import math
import zlib


def phase_of(key: str, period: float) -> float:
    """Where in each ``period`` (s) the step of ``key`` falls: a stable
    spread of keys over ``[0, period)``.
    """
    return zlib.crc32(key.encode()) / 2 ** 32 * period


def is_due(now: float, last: float | None, period: float,
           phase: float | None = None) -> bool:
    """Whether a step last done at ``last`` is due at ``now``; always
    before the first one.

    Without ``phase``: ``period`` s after ``last``. With it (s): once
    ``now`` is in a later slot of the grid ``phase + k * period`` than
    ``last`` and at least half a period after it. Called once a period or
    more often, steps are then one period apart, each in the first call of
    its slot once the first two steps have settled on the grid, and keys
    with different phases fall in different rounds.
    """
    if last is None:
        return True
    if phase is None:
        return now - last >= period
    return now - last >= period / 2 and \
        math.floor((now - phase) / period) > math.floor((last - phase) / period)


def grid_end(now: float, phase: float, step: float, lead: float = 0.0) -> float:
    """The newest point at or before ``now`` of the grid
    ``phase - lead + k * step``: where a bucket of ``step`` s ends so that
    it closes ``lead`` s before the step of ``phase`` (e.g. a forecast of
    control-period means made one round before the planning it feeds).
    """
    origin = phase - lead
    return origin + math.floor((now - origin) / step) * step
