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
"""The latency guard: the measured SLO metric acts between control periods.

The planning loop (:mod:`elastman.actuator.planning`) scales on what the
capacity model and the forecast say, once per control period. The guard runs
every monitor interval on what the monitor measured, with colour bands like
BALM's (SLO-aware memory bandwidth management):

* ``red``: the metric is above the SLO;
* ``yellow``: it is within the warning band, at or above ``guard_warning``
  times the SLO;
* ``green``: below the band.

A round is *hot* when more than ``alpha`` VMs (``ScalingPolicy.alpha_for``)
are yellow or red, or the cluster's own p99 is; it is *red* when more than
``alpha`` VMs are red, or
the cluster's p99 is. The guard scales out at once when the newest round is
red, or when the last ``guard_intervals`` rounds were all hot. Its step is
sized from the capacity model where the model has a boundary for the hot VMs
(the alpha/beta rule on the load measured now; unless the cluster's own p99
is green, at least the VMs that spread the hottest VM's load under its
capacity, :func:`dilution`), and by ``guard_step`` of the
cluster where it has none or where the model sees no excess; a red round
takes at least ``guard_step`` unless the cluster's own p99 is green (a few
hot VMs of a large cluster: growing it by a tenth would lower their load by
a tenth, and the cluster's clients see no violation); by default such a
round, red through its VMs alone, does not scale out at all
(:func:`_local`). A cool-down does
not stop it while the latency keeps rising, nor once the newest round was
measured a whole interval after the last action ended; an action in flight
does (one action per cluster at a time), with one exception: a red round
during a scale-out that is still creating its servers (``guard_top_up``),
unless the cluster's own p99 is green, adds to that action what its step
lacks beyond the servers the action still adds (a top-up; with a step no
larger, nothing). While any VM was in the band in one of the last
``guard_intervals`` rounds (a VM that left it a round ago is one noisy
sample from it), the planning loop does not scale in; while one is in it
now, a scale-in in flight keeps the nodes it has not begun to remove (a
trim of it: the node leaving finishes, the executor removes no other); a
scale-out it decides in a red round adds
at least the guard's step (:func:`red_step`), as the action slot it takes is
the guard's too.

:func:`evaluate` is pure: the actuator feeds it the newest samples from the
store, the simulator its own observations.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping, Sequence

from elastman.actuator import decision as dec
from elastman.actuator.policy import ScalingPolicy

GREEN, YELLOW, RED = 'green', 'yellow', 'red'


@dataclasses.dataclass
class Round:
    """One monitor interval: each serving VM's measured SLO metric (ms) and,
    where known, the cluster's own p99.
    """

    at: float
    p99: Mapping[str, float]
    cluster_p99: float | None = None


@dataclasses.dataclass
class Assessment:
    """What the guard saw and decided."""

    colour: str
    hot_rounds: int            # consecutive hot rounds, newest first
    in_band: list[str]         # VMs yellow or red in the newest round
    red: list[str]             # VMs red in the newest round
    cluster_p99: float | None
    level: float               # the severity the rising check compares
    decision: dec.Decision | None = None
    # VMs yellow or red in any of the newest ``guard_intervals`` rounds:
    # what holds the planning loop's scale-in
    held: list[str] = dataclasses.field(default_factory=list)

    @property
    def blocks_scale_in(self) -> bool:
        return bool(self.in_band) or self.colour != GREEN

    def to_dict(self) -> dict[str, Any]:
        return {'colour': self.colour, 'hot_rounds': self.hot_rounds,
                'in_band': list(self.in_band), 'red': list(self.red),
                'held': list(self.held),
                'cluster_p99_ms': self.cluster_p99, 'level': self.level}


def colour_of(value: float | None, policy: ScalingPolicy) -> str:
    if value is None or not math.isfinite(value):
        return GREEN
    if value > policy.slo_threshold_ms:
        return RED
    if value >= policy.guard_warning * policy.slo_threshold_ms:
        return YELLOW
    return GREEN


def _round_state(policy: ScalingPolicy, rnd: Round) -> tuple[bool, bool, list, list]:
    colours = {n: colour_of(v, policy) for n, v in rnd.p99.items()}
    in_band = sorted(n for n, c in colours.items() if c != GREEN)
    red = sorted(n for n, c in colours.items() if c == RED)
    cluster = colour_of(rnd.cluster_p99, policy)
    alpha = policy.alpha_for(len(rnd.p99))
    hot = len(in_band) > alpha or cluster != GREEN
    is_red = len(red) > alpha or cluster == RED
    return hot, is_red, in_band, red


def assess(policy: ScalingPolicy, rounds: Sequence[Round]) -> Assessment:
    """Colour and persistence of the newest rounds (newest first)."""
    if not rounds:
        return Assessment(GREEN, 0, [], [], None, 0.0)
    states = [_round_state(policy, rnd) for rnd in rounds]
    hot_rounds = next((k for k, state in enumerate(states) if not state[0]),
                      len(states))
    hot, is_red, in_band, red = states[0]
    colour = RED if is_red else (YELLOW if hot else GREEN)
    held = set().union(*(state[2] for state in states[:policy.guard_intervals]))
    return Assessment(colour, hot_rounds, in_band, red, rounds[0].cluster_p99,
                      severity(policy, rounds[0]), held=sorted(held))


def severity(policy: ScalingPolicy, rnd: Round) -> float:
    """The measured metric, relative to the SLO, that the hottest ``alpha +
    1`` VMs (or the cluster) reach: what must keep rising for the guard to
    act again during a cool-down.
    """
    values = sorted((v for v in rnd.p99.values() if math.isfinite(v)),
                    reverse=True)
    k = int(math.floor(policy.alpha_for(len(values))))
    vm_level = values[k] if len(values) > k else 0.0
    level = max(vm_level, rnd.cluster_p99 or 0.0)
    return level / policy.slo_threshold_ms


def needs_estimates(policy: ScalingPolicy, a: Assessment) -> bool:
    """True when :func:`evaluate` and :func:`red_step` may size a step for
    assessment ``a``, so that they need capacity estimates: never while the
    latency is green. A caller skips the estimates of a thousand VMs (and
    loading their models) in most monitor intervals.
    """
    return bool(policy.guard) and a.colour != GREEN


def evaluate(policy: ScalingPolicy, cluster: dec.ClusterState,
             rounds: Sequence[Round], estimates: Mapping[str, Any], now: float,
             last_level: float | None = None,
             inputs: Mapping[str, Any] | None = None) -> Assessment:
    """Assess the newest rounds and, when they call for it, decide a
    scale-out (``Assessment.decision``; None otherwise).

    ``estimates`` are capacity estimates for the load measured now (see
    :func:`elastman.actuator.planning.estimates_for`); ``last_level`` is the
    severity when the guard last acted (None: unknown).
    """
    a = assess(policy, rounds)
    if not policy.guard:
        return a
    shrinking = cluster.shrinking
    if cluster.action_in_flight and shrinking is not None and shrinking.pending \
            and a.blocks_scale_in:
        a.decision = _keep(policy, cluster, a, now, inputs)
        return a
    if a.colour == GREEN:
        return a
    fire = a.colour == RED or a.hot_rounds >= policy.guard_intervals
    if not fire or not cluster.nodes:
        return a
    why = _why(policy, a)
    d = _decision(policy, cluster, a, now, inputs)
    a.decision = d
    if _local(policy, a):
        _blocked(d, 'guard: %s, but the cluster\'s own p99 is within the SLO '
                 '(guard_red_vms_alone is off)' % why, 'cluster_green')
        return a
    if cluster.action_in_flight:
        if a.colour == RED and cluster.growing is not None and policy.guard_top_up \
                and not _cluster_green(policy, a):
            _top_up(policy, cluster, estimates, a, d, why)
        else:
            _blocked(d, 'guard: %s, but an action is in flight' % why, 'in_flight')
        return a
    cooling = (cluster.last_action_at is not None
               and now - cluster.last_action_at < policy.cooldown_s)
    rising = last_level is None or a.level > last_level
    # the newest round measured a whole interval after the last action
    # ended: what it shows is the cluster as that action left it
    settled = (cluster.last_action_at is not None and len(rounds) > 1
               and rounds[1].at >= cluster.last_action_at)
    if cooling and not rising and not settled:
        _blocked(d, 'guard: %s, cooling down and the latency is not rising '
                 '(%.2f of the SLO, %.2f at the last action)'
                 % (why, a.level, last_level or 0.0), 'cooldown')
        return a
    count, how = _step(policy, cluster, estimates, a)
    room = policy.max_size - cluster.size
    if room <= 0:
        _blocked(d, 'guard: %s; scale out clamped by max_size=%d'
                 % (why, policy.max_size), 'max_size')
        return a
    flavor = _flavor(policy, cluster)
    d.kind, d.flavor, d.count = dec.SCALE_OUT, flavor, min(count, room)
    d.reason = 'guard: scale out by %d of %s: %s; %s' % (d.count, flavor, why, how)
    if d.count < count:
        d.reason += '; clamped from %d by max_size=%d' % (count, policy.max_size)
    if cooling:
        d.reason += '; during the cool-down, as the latency rises (%.2f of the SLO%s)' % (
            a.level, '' if last_level is None else ', %.2f at the last action' % last_level)
    return a


def _decision(policy: ScalingPolicy, cluster: dec.ClusterState, a: Assessment,
              now: float, inputs: Mapping[str, Any] | None) -> dec.Decision:
    return dec.Decision(kind=dec.NONE, reason='', at=float(now), size=cluster.size,
                        floor=policy.floor, max_size=policy.max_size,
                        alpha=policy.alpha, beta=policy.beta, dry_run=policy.dry_run,
                        trigger='guard', inputs=dict(inputs or {}, guard=a.to_dict()))


def _keep(policy: ScalingPolicy, cluster: dec.ClusterState, a: Assessment,
          now: float, inputs: Mapping[str, Any] | None) -> dec.Decision:
    """A VM in the band during a scale-in: the nodes it has not begun to
    remove stay (a trim of the scale-in); the one leaving finishes.
    """
    shrinking = cluster.shrinking
    assert shrinking is not None
    d = _decision(policy, cluster, a, now, inputs)
    d.kind, d.trim_of = dec.TRIM, shrinking.action_id
    d.keep_nodes, d.count = list(shrinking.pending), len(shrinking.pending)
    d.reason = ('guard: keep the %d node(s) the scale-in in flight has not begun '
                'to remove (%s): %s' % (d.count, ', '.join(d.keep_nodes),
                                        _why(policy, a)))
    return d


def _cluster_green(policy: ScalingPolicy, a: Assessment) -> bool:
    """True when the monitor measured the cluster's own p99 and it is green:
    the clients see no violation, whatever a few VMs show.
    """
    return a.cluster_p99 is not None and colour_of(a.cluster_p99, policy) == GREEN


def _local(policy: ScalingPolicy, a: Assessment) -> bool:
    """True for a round red through its VMs alone while the cluster's own
    p99 is green and ``guard_red_vms_alone`` is off. The clients see no
    violation; a few VMs far over their own capacity while the others are
    not are most often an interference episode or a token imbalance, which
    a step relieves by its share of the cluster (one VM more gives two of
    377 a 378th less), and the join it starts holds the one action slot
    the planning loop needs when the load then rises.
    """
    return (not policy.guard_red_vms_alone and a.colour == RED
            and _cluster_green(policy, a))


def _top_up(policy: ScalingPolicy, cluster: dec.ClusterState,
            estimates: Mapping[str, Any], a: Assessment, d: dec.Decision,
            why: str) -> None:
    """Size a red round's step against the scale-out in flight: what the
    step lacks beyond the servers that action still adds is added to it.
    """
    growing = cluster.growing
    assert growing is not None
    count, how = _step(policy, cluster, estimates, a)
    lacking = count - growing.adding
    room = policy.max_size - cluster.size - growing.adding
    if lacking <= 0:
        _blocked(d, 'guard: %s, but the scale-out in flight already adds %d '
                 '(the step is %d: %s)' % (why, growing.adding, count, how),
                 'in_flight')
        return
    if room <= 0:
        _blocked(d, 'guard: %s; the scale-out in flight adds %d, a top-up is '
                 'clamped by max_size=%d' % (why, growing.adding, policy.max_size),
                 'max_size')
        return
    d.kind, d.flavor, d.count = dec.SCALE_OUT, growing.flavor, min(lacking, room)
    d.top_up_of = growing.action_id
    d.reason = ('guard: top up the scale-out in flight by %d of %s: %s; %s; '
                'it adds %d, the step is %d'
                % (d.count, growing.flavor, why, how, growing.adding, count))
    if d.count < lacking:
        d.reason += '; clamped from %d by max_size=%d' % (lacking, policy.max_size)


def _why(policy: ScalingPolicy, a: Assessment) -> str:
    parts = []
    if a.red:
        parts.append('%d VM(s) above the SLO %.0f ms' % (len(a.red), policy.slo_threshold_ms))
    if len(a.in_band) > len(a.red):
        parts.append('%d VM(s) in the warning band (>= %.0f ms)' % (
            len(a.in_band) - len(a.red), policy.guard_warning * policy.slo_threshold_ms))
    if a.cluster_p99 is not None:
        parts.append('cluster p99 %.1f ms' % a.cluster_p99)
    if a.colour == RED:
        return 'red: ' + ', '.join(parts)
    if a.hot_rounds:
        return 'yellow for %d interval(s): %s' % (a.hot_rounds, ', '.join(parts))
    return 'in the band: ' + ', '.join(parts)


def _blocked(d: dec.Decision, reason: str, blocked: str) -> None:
    d.kind, d.reason, d.blocked_by = dec.NONE, 'no action: ' + reason, blocked


def red_step(policy: ScalingPolicy, cluster: dec.ClusterState,
             estimates: Mapping[str, Any], a: Assessment) -> tuple[int, str]:
    """What the guard adds for a red assessment, and how it sized it;
    (0, '') when the round is not red. A scale-out the planning loop
    decides in such a round adds at least that: the slot it takes is the
    guard's too.
    """
    if not policy.guard or a.colour != RED or not cluster.nodes:
        return 0, ''
    return _step(policy, cluster, estimates, a)


def _step(policy: ScalingPolicy, cluster: dec.ClusterState,
          estimates: Mapping[str, Any], a: Assessment) -> tuple[int, str]:
    """VMs to add: from the model where it has a boundary, else a fixed step."""
    fixed = max(1, int(math.ceil(policy.guard_step * cluster.size - dec.EPS)))
    terms = [dec.vm_term(n, estimates.get(n.node_id), float(policy.max_vm_excess),
                         policy.headroom, extrapolation=policy.extrapolation)
             for n in cluster.nodes]
    bounded = [t for t in terms if t.bound in ('exact', 'upper')
               and t.status == dec.OVER]
    excess = sum(t.term for t in bounded)
    if bounded and excess > dec.EPS:
        n = int(math.ceil(excess - dec.EPS))
        how = ('model: %d VM(s) over their target, sum of (w-t)/t %.2f'
               % (len(bounded), excess))
        cluster_green = _cluster_green(policy, a)
        if not cluster_green:
            spread, ratio = dilution(bounded, cluster.size)
            if spread > n:
                n = spread
                how += ('; the hottest at %.2f of its capacity: %d VM(s) to '
                        'spread its load under it' % (ratio, spread))
        if a.colour == RED and n < fixed and not cluster_green:
            return fixed, how + ' (red: at least the fixed step of %g)' % policy.guard_step
        return n, how
    return fixed, ('the model has no boundary that explains it: fixed step of '
                   '%g of %d VMs' % (policy.guard_step, cluster.size))


def dilution(terms: Sequence[dec.VMTerm], size: int) -> tuple[int, float]:
    """VMs to add so that the hottest of ``terms`` falls under its capacity
    once the ring spreads over the larger cluster, and that VM's load over
    its capacity.

    A new node takes a share of every node's token ranges, so ``k`` new
    nodes leave each of ``n`` nodes ``n / (n + k)`` of its load: a VM at
    ``r`` times its capacity needs ``k >= n (r - 1)`` whatever the others'
    room (an interfered VM, a token imbalance). The sum of the violators'
    terms counts as if their excess moved whole to the new VMs. At most
    ``size`` (the cluster doubles).
    """
    worst = next(iter(dec.capacity_ratios(terms)), 0.0)
    if worst <= 1.0:
        return 0, worst
    return min(size, int(math.ceil(size * (worst - 1.0) - dec.EPS))), worst


def _flavor(policy: ScalingPolicy, cluster: dec.ClusterState) -> str:
    if policy.default_flavor:
        return policy.default_flavor
    present = sorted({n.flavor for n in cluster.nodes})
    pool = list(policy.flavor_costs) or present
    return min(pool, key=lambda f: (policy.cost(f), f))
