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
"""The policies that know the future (:mod:`elastman.evaluation.oracle`
plans for them).

* ``oracle``: knows the whole future (workload, every VM's capacity, join time
  and interference episodes) and keeps the cluster p99 under the SLO with the
  fewest VMs its plan finds.
* ``load-oracle``: the same without foresight of interference, safe against
  any one VM losing a margin of its capacity.
* ``serial-oracle``: the oracle held to one action in flight, as elastman's
  executor is; a reference for controllers under that rule.
"""
from __future__ import annotations

from elastman.evaluation import oracle as oracle_mod
from elastman.evaluation.policies.base import MIN_SIZE
from elastman.evaluation.policies.base import Policy


class Oracle(Policy):
    """Knows the whole future: the trace, every VM's true capacity, join time
    and interference episodes (:mod:`elastman.evaluation.oracle`).
    """

    name = 'oracle'
    period_s = 60.0
    #: standard deviations of the noisy tail kept under 1% (see oracle.Planner)
    z = 3.0
    #: one action in flight at a time (see oracle.Planner)
    serial = False

    def start(self, sim):
        super().start(sim)
        initial = self.initial_size(sim.trace, sim.cfg, sim.flavors)
        self.chosen, self.plan = oracle_mod.best_plan(sim, initial, self.name,
                                                      min_size=MIN_SIZE, z=self.z,
                                                      serial=self.serial)

    def control(self, sim):
        i = sim.minute - 1
        # the twin the plan was made on and this cluster are the same
        if sim.vms != self.chosen['vms'][i]:
            raise RuntimeError('oracle: the cluster left its plan at minute %d '
                               '(%d VMs, planned %d)' % (i, sim.vms, self.chosen['vms'][i]))
        return self.plan.get(i)

    def describe(self) -> str:
        return ('%s: future trace, capacities, joins and interference; the tail '
                'over the SLO under 1%% with %g standard deviations; %s%s'
                % (self.name, self.z, 'scales out while a join still fits' if
                   self.chosen['room_to_grow'] else 'scales out when a minute would break',
                   '; one action in flight' if self.serial else ''))


class SerialOracle(Oracle):
    """The oracle held to one action in flight at a time, as elastman's
    executor is (Cassandra bootstraps or decommissions one node beside no
    other): the least VM-hours its plan finds for a controller under that
    rule. Not the bound other policies are measured against.
    """

    name = 'serial-oracle'
    serial = True


class LoadOracle(Oracle):
    """The oracle without foresight of interference: it knows the load's
    whole future, every VM's capacity and join time, but an interference
    episode only once it has begun, and keeps the cluster safe against any
    one VM losing ``interference_margin`` of its capacity
    (:class:`oracle.Planner` with ``foresee_interference=False``). An online
    controller knows less; its frontier over the margin is what interference
    costs a controller that cannot see it coming.
    """

    name = 'load-oracle'
    knob = 'interference_margin'
    sweep = (0.0, 0.1, 0.2, 0.3, 0.4)

    def __init__(self, interference_margin: float = 0.3) -> None:
        self.interference_margin = float(interference_margin)

    def knob_value(self) -> float | None:
        return self.interference_margin

    def set_knob(self, value: float) -> None:
        self.interference_margin = float(value)

    def start(self, sim):
        Policy.start(self, sim)
        initial = self.initial_size(sim.trace, sim.cfg, sim.flavors)
        self.chosen, self.plan = oracle_mod.best_plan(
            sim, initial, self.name, min_size=MIN_SIZE, z=self.z,
            foresee_interference=False, interference_margin=self.interference_margin)

    def describe(self) -> str:
        return ('load-oracle: future trace, capacities and joins; interference only '
                'once begun, any one VM may lose %g of its capacity; the tail over the '
                'SLO under 1%% with %g standard deviations; %s'
                % (self.interference_margin, self.z, 'scales out while a join still fits'
                   if self.chosen['room_to_grow'] else 'scales out when a minute would break'))
