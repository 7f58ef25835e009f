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
"""The baselines elastman is measured against.

* ``static``: provisioned once for the trace's peak (an operator's capacity plan).
* ``reactive``: threshold alarms on mean CPU with cool-down, as Heat + Aodh or a
  Senlin scaling policy do (+-10% of the cluster per alarm).
* ``target``: target tracking like the Kubernetes HPA (CPU target, 10%
  tolerance, 5-minute scale-down stabilisation).
"""
from __future__ import annotations

import collections
import math

from elastman.evaluation.policies.base import MIN_SIZE
from elastman.evaluation.policies.base import needed_vms
from elastman.evaluation.policies.base import Policy
from elastman.evaluation.simulator import Action
from elastman.evaluation.simulator import JOINING
from elastman.evaluation import traces as tr


class Static(Policy):
    """Sized once for the trace's peak at the trace's planning utilisation."""

    name = 'static'

    def initial_size(self, trace, cfg, flavors):
        return {flavors[0].name: needed_vms(trace, cfg, flavors[0], tr.PEAK_UTILISATION)}

    def describe(self) -> str:
        return 'static: sized for the peak at %d%% utilisation' % (tr.PEAK_UTILISATION * 100)


class Reactive(Policy):
    """CPU alarms (period mean over serving VMs) with a cool-down, serialised."""

    name = 'reactive'
    #: the scale-out threshold; the sweep keeps the scale-in threshold at
    #: the same fraction of it (half, by default)
    knob = 'high'
    sweep = (50.0, 60.0, 70.0, 80.0, 90.0)
    knob_range = (1.0, 100.0)
    knob_unit = 'a CPU percentage'
    #: the scale-in threshold as a fraction of the scale-out one
    hysteresis = 'low_ratio'
    hysteresis_sweep = (0.33, 0.5, 0.67)

    def __init__(self, high: float = 70.0, low: float = 35.0, step: float = 0.10,
                 cooldown_s: float = 300.0) -> None:
        self.high, self.low, self.step, self.cooldown_s = high, low, step, cooldown_s

    @property
    def low_ratio(self) -> float:
        return self.low / self.high

    @low_ratio.setter
    def low_ratio(self, value: float) -> None:
        self.low = self.high * value

    def set_knob(self, value: float) -> None:
        ratio = self.low_ratio
        self.high = value
        self.low_ratio = ratio

    def control(self, sim):
        if sim.in_flight or (sim.last_action_done is not None
                             and sim.t - sim.last_action_done < self.cooldown_s):
            return None
        m = sim.period_means()
        if not len(m['slots']):
            return None
        cpu, n = float(m['cpu'].mean()), len(m['slots'])
        if cpu > self.high:
            k = max(1, int(math.ceil(self.step * n)))
            return Action(add=k, flavor=self.flavor,
                          reason='mean CPU %.0f%% > %.0f%%' % (cpu, self.high))
        if cpu < self.low and n > MIN_SIZE:
            k = min(max(1, int(self.step * n)), n - MIN_SIZE)
            return Action(remove=self.youngest(sim, k),
                          reason='mean CPU %.0f%% < %.0f%%' % (cpu, self.low))
        return None

    def describe(self) -> str:
        return ('reactive: CPU > %.0f%% adds, < %.0f%% removes %.0f%% of the VMs, '
                'cool-down %.0f s' % (self.high, self.low, self.step * 100, self.cooldown_s))


class TargetTracking(Policy):
    """HPA: desired = ceil(n * cpu / target) outside a 10% tolerance;
    scale-down takes the highest recommendation of the last 5 minutes.
    """

    name = 'target'
    period_s = 60.0
    knob = 'target'
    sweep = (30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0)
    knob_range = (1.0, 100.0)
    knob_unit = 'a CPU percentage'
    #: HPA's scale-down stabilisation window (seconds)
    hysteresis = 'stabilisation_s'
    hysteresis_sweep = (300.0, 900.0, 1800.0)

    def __init__(self, target: float = 60.0, tolerance: float = 0.10,
                 stabilisation_s: float = 300.0) -> None:
        self.target, self.tolerance, self.stabilisation_s = target, tolerance, stabilisation_s
        self.recent: collections.deque = collections.deque()

    def control(self, sim):
        slots = sim.serving_slots()
        if not len(slots):
            return None
        n, pending = len(slots), sim.count(JOINING)
        ratio = float(sim.obs_cpu[slots].mean()) / self.target
        desired = n if abs(ratio - 1) <= self.tolerance else int(math.ceil(n * ratio))
        desired = max(MIN_SIZE, desired)
        self.recent.append((sim.t, desired))
        while self.recent and self.recent[0][0] <= sim.t - self.stabilisation_s:
            self.recent.popleft()
        if desired > n + pending:
            return Action(add=desired - n - pending, flavor=self.flavor, serialised=False,
                          reason='CPU at %.0f%% of target' % (ratio * 100))
        down = max(d for _, d in self.recent)
        if down < n and not pending:
            return Action(remove=self.youngest(sim, n - down), serialised=False,
                          reason='CPU at %.0f%% of target' % (ratio * 100))
        return None

    def describe(self) -> str:
        return ('target: CPU target %.0f%%, tolerance %.0f%%, scale-down window %.0f s'
                % (self.target, self.tolerance * 100, self.stabilisation_s))
