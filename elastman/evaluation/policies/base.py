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
"""What every simulated policy is: a size at the start, a look every
simulated minute and an action every control period.

A policy sizes the cluster at the start (:meth:`Policy.initial_size`), sees
every simulated minute (:meth:`Policy.observe`) and acts every ``period_s``
(:meth:`Policy.control` returns an :class:`~elastman.evaluation.simulator.
Action`). Only the oracles read the simulator's truth (future trace, true
capacities); the others see what a monitor would: per-VM rates, p99 and
CPU, and the host agents' interference index.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from elastman.evaluation.simulator import Action
from elastman.evaluation.simulator import Flavor
from elastman.evaluation.simulator import SimCluster
from elastman.evaluation.simulator import SimConfig
from elastman.evaluation import traces as tr

MIN_SIZE = 3
START_UTILISATION = 0.7


def needed_vms(trace: tr.Trace, cfg: SimConfig, flavor: Flavor, utilisation: float,
               minutes: slice | None = None) -> int:
    """VMs of ``flavor`` whose nominal capacity serves the trace at ``utilisation``."""
    sl = minutes or slice(None)
    total = trace.total[sl]
    rf = trace.reads[sl] / np.maximum(total, 1e-9)
    cap = tr.node_ops_capacity(rf, trace.size[sl], cfg.hardware) * flavor.factor
    return max(MIN_SIZE, int(math.ceil(float((total / cap).max()) / utilisation)))


class Policy:
    """Base class: start at the size the first hour's load needs at 70%."""

    name = 'policy'
    period_s = 300.0
    #: The main knob the frontier sweep turns (an attribute, see
    #: :meth:`set_knob`), and the values it tries; None: a single point.
    knob: str | None = None
    sweep: tuple[float, ...] = ()
    #: The knob's accepted values (inclusive) and what it measures, checked
    #: before a sweep runs; None: the policy checks its own.
    knob_range: tuple[float, float] | None = None
    knob_unit: str = ''

    #: A second knob a sweep may cross with the first (``--hysteresis``): how
    #: far below its scale-out point the policy keeps its VMs (a scale-in
    #: threshold, band or window), and the values it tries; None: none.
    hysteresis: str | None = None
    hysteresis_sweep: tuple[float, ...] = ()

    def knob_value(self) -> float | None:
        return self._setting(self.knob) if self.knob else None

    def set_knob(self, value: float) -> None:
        self._set_setting(self.knob, value)

    def check_knob(self, value: float) -> None:
        """ValueError naming the knob when ``value`` is out of its range."""
        if self.knob_range is None:
            return
        low, high = self.knob_range
        if not low <= value <= high:
            raise ValueError("%s=%g: policy %s's %s is %s, from %g to %g"
                             % (self.name, value, self.name, self.knob,
                                self.knob_unit or 'a value', low, high))

    def hysteresis_value(self) -> float | None:
        return self._setting(self.hysteresis) if self.hysteresis else None

    def set_hysteresis(self, value: float) -> None:
        self._set_setting(self.hysteresis, value)

    def _setting(self, name: str) -> float:
        """The value of the setting a knob names (an attribute here)."""
        return getattr(self, name)

    def _set_setting(self, name: str, value: float) -> None:
        setattr(self, name, value)

    def initial_size(self, trace: tr.Trace, cfg: SimConfig,
                     flavors: Sequence[Flavor]) -> dict[str, int]:
        return {flavors[0].name: needed_vms(trace, cfg, flavors[0], START_UTILISATION,
                                            slice(0, 60))}

    def start(self, sim: SimCluster) -> None:
        self.flavor = sim.flavors[0].name

    def observe(self, sim: SimCluster) -> None:
        pass

    def control(self, sim: SimCluster) -> Action | None:
        return None

    def describe(self) -> str:
        return self.name

    @staticmethod
    def youngest(sim: SimCluster, n: int) -> list[int]:
        """The ``n`` most recently created serving non-seed VMs (a Senlin
        YOUNGEST_FIRST deletion policy; Kubernetes removes the newest too).
        """
        slots = sim.serving_slots()
        slots = slots[~sim.seed_flag[slots]]
        order = np.argsort(-sim.ordinal[slots], kind='stable')
        return [int(sim.ordinal[s]) for s in slots[order[:n]]]
