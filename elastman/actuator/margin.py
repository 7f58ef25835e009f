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
"""A headroom that the cluster's own violations raise and time lowers.

The decision's headroom ``h`` (:mod:`elastman.actuator.decision`) is the
room each VM keeps below its capacity for what the forecast and the model
miss: load surges and VMs slowed by their neighbours. How much room that
takes depends on the load and the hosts, which a fixed ``h`` does not know.
With ``headroom_per_violation`` set, each minute in which the cluster's own
SLO metric was above the SLO raises the headroom by that much, and the rise
decays with the minute's age (time constant ``headroom_memory_s``)::

    h = min(headroom_max, headroom + per_violation * sum_i m_i exp(-a_i / memory))

(``m_i`` the minutes of a violated monitor round, ``a_i`` its age). A
cluster that holds its SLO works at the policy's ``headroom``; one that
keeps violating keeps more room. The planning loop and the guard of one
round use the same ``h``: :func:`adapted` gives them the policy with it.
"""
from __future__ import annotations

import math
from typing import Iterable

from elastman.actuator.policy import ScalingPolicy


def violated_minutes(rounds: Iterable[tuple[float, float | None]], slo_ms: float,
                     interval_s: float, after: float | None = None
                     ) -> list[tuple[float, float]]:
    """``(at, minutes)`` of each round whose cluster metric is above
    ``slo_ms``; ``rounds`` are ``(at, metric)``, oldest first, the metric
    ``None`` where the round has none. A round stands for the time since
    the one before it, at most ``interval_s`` (the first: ``interval_s``);
    rounds at or before ``after`` were read before: skipped, the first
    round after them stands for the time since ``after``.
    """
    out, last = [], after
    for at, metric in rounds:
        if after is not None and at <= after:
            continue
        span = interval_s if last is None else min(interval_s, max(0.0, at - last))
        last = at
        if metric is not None and metric > slo_ms:
            out.append((at, span / 60.0))
    return out


class ViolationMemory:
    """The sum of a cluster's violated minutes, each decayed with its age
    (time constant ``tau_s``); kept in one number, as the sum decays as a
    whole.
    """

    def __init__(self, tau_s: float) -> None:
        self.tau_s = float(tau_s)
        self.at: float | None = None
        self.total = 0.0

    def add(self, at: float, minutes: float) -> None:
        """A violated round ``at`` (not older than the newest added)."""
        self.total = self.weight(at) + minutes
        self.at = at if self.at is None else max(self.at, at)

    def weight(self, now: float) -> float:
        """The decayed sum at ``now``."""
        if self.at is None:
            return 0.0
        return self.total * math.exp(-max(0.0, now - self.at) / self.tau_s)


def memory_s(policy: ScalingPolicy) -> float:
    """How far back a violation still weighs 1% of a new one (seconds); 0
    where the headroom is fixed.
    """
    if not policy.headroom_per_violation:
        return 0.0
    return -math.log(0.01) * policy.headroom_memory_s


def headroom(policy: ScalingPolicy, weight: float) -> float:
    """The headroom that ``weight`` decayed violated minutes ask for."""
    if not policy.headroom_per_violation or weight <= 0:
        return policy.headroom
    raised = policy.headroom + policy.headroom_per_violation * weight
    return max(policy.headroom, min(policy.headroom_max, raised))


def adapted(policy: ScalingPolicy, weight: float) -> ScalingPolicy:
    """``policy`` with the headroom its cluster's violations ask for."""
    h = headroom(policy, weight)
    return policy if h == policy.headroom else policy.replace(headroom=h)
