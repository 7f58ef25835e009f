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
"""The planning loop's inputs and decision, one definition for the actuator
and the simulator.

Each control period: the load to plan for is the largest of the forecast's
peak within the horizon, the load served now and the load's recent trend
projected over the measured join time; it is split across the VMs
by their current share (OnlineElastMan, Ch. 3); each VM's capacity is read
from its capacity model along the ray through its planned workload; and
:func:`elastman.actuator.decision.decide` turns that into an action. The
actuator's controller gathers the inputs from the store, the simulator from
its own cluster; both call :func:`plan`. The horizon covers the control
period and the time the cluster's joins really take (:func:`join_time`).
"""
from __future__ import annotations

import collections
import copy
import dataclasses
import math
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from elastman.actuator import decision as dec
from elastman.actuator.policy import ScalingPolicy
from elastman.actuator import workload
from elastman.capacity import capacity as cap_mod

#: Each VM's capacity for its planned workload: (registry, per-VM workload,
#: node flavours) to estimates by node (:func:`estimates_for`).
Estimator = Callable[[Any, Mapping[str, Mapping[str, Any]], Mapping[str, str] | None],
                     dict[str, Any]]

#: Joins remembered per flavour to learn how long one takes.
JOIN_MEMORY = 10


def observed_load(current: Mapping[str, Mapping[str, Any]]) -> dict[str, float]:
    """The cluster's load now: the sum of its VMs' latest samples."""
    return {k: sum(float(c.get(k) or 0.0) for c in current.values())
            for k in workload.LOAD_KEYS}


def planned_load(forecast_peak: Mapping[str, float] | None,
                 observed: Mapping[str, float],
                 growth: float = 1.0) -> dict[str, float]:
    """The larger of the forecast's peak and the load served now, per load
    key: a forecast that lags a rising load must not remove a node. With
    ``growth`` (:func:`trend_growth`) above 1, at least the load served now
    times that.
    """
    floor = {k: float(observed.get(k, 0.0)) * max(1.0, growth)
             for k in workload.LOAD_KEYS}
    if not forecast_peak:
        return floor
    return {k: max(float(forecast_peak.get(k, 0.0)), floor[k])
            for k in workload.LOAD_KEYS}


#: Fewest load points :func:`trend_growth` fits a line through.
TREND_MIN_POINTS = 3

#: A window whose points two flat levels fit with at most this fraction of
#: one line's squared error holds a jump (:func:`jump_index`).
JUMP_FIT = 0.5


def trend_growth(points: Sequence[tuple[float, float]], now: float,
                 window_s: float, span_s: float,
                 most: float = math.inf) -> float:
    """How much the cluster's load grows over ``span_s`` if it keeps its
    trend: the least-squares line through the ``(time, load)`` points of the
    last ``window_s`` before ``now``, its value ``span_s`` after the newest
    point over its value at that point, at most ``most``. 1 when the line
    does not rise, with fewer than :data:`TREND_MIN_POINTS` points, or with
    ``window_s`` 0.

    A load that rises faster than the forecast follows (the forecast is
    made on the control period's means) would otherwise be planned for
    after it arrived: one action is in flight at a time, and a scale-out
    serves only once its VMs have joined.

    A window that holds a jump up (:func:`jump_index`) with at least
    :data:`TREND_MIN_POINTS` points after it grows by no more than the line
    through those points: the line through the whole window would turn a
    step that stays flat into a rise. A load still climbing after its jump
    is projected as it climbs.
    """
    if window_s <= 0:
        return 1.0
    recent = sorted((t, v) for t, v in points
                    if now - window_s <= t <= now and math.isfinite(v))
    if len(recent) < TREND_MIN_POINTS:
        return 1.0
    t = np.array([p[0] for p in recent], dtype=float)
    v = np.array([p[1] for p in recent], dtype=float)
    growth = _line_growth(t, v, span_s)
    jump = jump_index(t, v)
    if jump is not None and len(v) - jump >= TREND_MIN_POINTS:
        growth = min(growth, _line_growth(t[jump:], v[jump:], span_s))
    return float(min(most, growth))


def _line_growth(t: np.ndarray, v: np.ndarray, span_s: float) -> float:
    """The least-squares line's value ``span_s`` after the newest point
    over its value there; 1 when it does not rise or the points share one
    instant.
    """
    if np.ptp(t) <= 0:
        return 1.0
    slope, intercept = np.polyfit(t - t.max(), v, 1)
    if slope <= 0 or intercept <= 0:
        return 1.0
    return float((intercept + slope * span_s) / intercept)


def jump_index(t: np.ndarray, v: np.ndarray) -> int | None:
    """The index of the first point after a jump up in the loads ``v``
    (at the times ``t``, ascending): where splitting the points into two
    flat levels, the later one higher, leaves at most :data:`JUMP_FIT` of
    the squared error of one least-squares line through them all. None
    without such a split or with fewer than four points.
    """
    n = len(v)
    if n < 4 or np.ptp(t) <= 0:
        return None
    slope, intercept = np.polyfit(t - t.max(), v, 1)
    line = float(((v - intercept - slope * (t - t.max())) ** 2).sum())
    if not line > 0:
        return None
    # squared error about the mean of each prefix v[:k] and suffix v[k:]
    k = np.arange(1, n)
    total, squares = np.cumsum(v), np.cumsum(v * v)
    head = squares[:-1] - total[:-1] ** 2 / k
    tail_sum, tail_sq = total[-1] - total[:-1], squares[-1] - squares[:-1]
    tail = tail_sq - tail_sum ** 2 / (n - k)
    split = int(np.argmin(head + tail))
    after = split + 1           # points before the jump; index of the first after
    rises = tail_sum[split] / (n - after) > total[split] / after
    if rises and head[split] + tail[split] <= JUMP_FIT * line:
        return after
    return None


def held_load(points: Sequence[tuple[float, float]], now: float,
              window_s: float) -> float:
    """The highest total load among the ``(time, load)`` points of the last
    ``window_s`` before ``now``; 0 with ``window_s`` 0 or no point.
    """
    if window_s <= 0:
        return 0.0
    recent = [v for t, v in points
              if now - window_s <= t <= now and math.isfinite(v)]
    return max(recent, default=0.0)


def join_time(durations: Sequence[float], default: float) -> float:
    """How long a scale-out takes from request to serving, learnt from the
    newest joins (their largest, so that the horizon covers a slow one);
    ``default`` until there is one.
    """
    recent = [d for d in list(durations)[-JOIN_MEMORY:] if d > 0 and math.isfinite(d)]
    return max(recent) if recent else float(default)


def horizon_s(policy: ScalingPolicy, join_s: float, busy_s: float = 0.0) -> float:
    """How far ahead to plan: a scale-out decided at the next period serves
    after ``join_s``, and the one after it (one action in flight at a time)
    no sooner than ``busy_s + join_s``; until then, what this one adds must
    carry the load.
    """
    return policy.control_period_s + busy_s + join_s


def forecast_steps(horizon_s: float, step_s: float,
                   elapsed_s: float = 0.0) -> int:
    """Points of a forecast to plan on: those that begin before the
    horizon's end, ``horizon_s`` from now, for a forecast whose first point
    began ``elapsed_s`` ago (a forecast of buckets that closed before now).
    """
    reach = max(0.0, elapsed_s) + horizon_s
    return max(1, math.ceil(reach / max(step_s, 1.0)))


def estimates_for(registry: Any, per_vm: Mapping[str, Mapping[str, Any]],
                  flavors: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Each VM's capacity along the ray through its workload.

    A VM the registry models is answered by the model
    :meth:`~elastman.capacity.registry.ModelRegistry.model_for` picks; a VM
    it does not model, by its flavour's model (``flavors`` maps node id to
    flavour); a VM with neither is left out (the decision counts it as
    unknown). VMs answered by the same model are computed together.
    """
    groups: dict[int, tuple[Any, str, list[str]]] = {}
    for node in per_vm:
        model, source = None, ''
        if node in registry.nodes:
            model, source = registry.model_for(node)
        elif flavors and node in flavors:
            model, source = registry.flavor_model(flavors[node]), 'flavor'
        if model is None:
            continue
        groups.setdefault(id(model), (model, source, []))[2].append(node)
    out: dict[str, Any] = {}
    for model, source, nodes in groups.values():
        points, factors = zip(*(registry.point_and_slowdown(per_vm[n])
                                for n in nodes))
        for node, est, factor in zip(nodes, cap_mod.capacities(model, points),
                                     factors):
            est = est.slowed(factor)
            est.source = source
            out[node] = est
    return out


#: A green VM whose model capacity is below this fraction of the load it
#: serves has a model the measurement contradicts (:func:`disposed`).
CONTRADICTED = 0.05


def disposed(policy: ScalingPolicy, estimates: Mapping[str, Any],
             current: Mapping[str, Mapping[str, Any]],
             measured: Mapping[str, float] | None) -> dict[str, Any]:
    """The model proposes, the measured latency disposes.

    A VM whose measured SLO metric is in the warning band serves, right now,
    about as much as it can within the SLO along its current mix; one above
    the SLO, less than it serves. Where the model claims more than that, its
    capacity becomes the load served now, with bound ``exact`` in the band
    and ``upper`` above the SLO: what was measured, not extrapolated (the
    policy's headroom then asks for that much more room).

    A VM below the band meets the SLO at the load it serves. Where the model
    claims less than :data:`CONTRADICTED` of that load (a model that has
    just learnt an overload and put its boundary near the origin), the
    measurement contradicts it: its capacity becomes the load served now,
    as a lower bound (the VM was seen to serve it), so that it asks for no
    VM at all rather than for ``max_vm_excess`` times the cluster, or for
    the headroom's share of it, period after period. A model somewhat below
    the served load is left alone: a VM can be green close to its cliff.
    """
    if not measured:
        return dict(estimates)
    out = dict(estimates)
    warn = policy.guard_warning * policy.slo_threshold_ms
    for node, est in estimates.items():
        value = measured.get(node)
        if value is None or not math.isfinite(value):
            continue
        now_load = sum(float(current.get(node, {}).get(k) or 0.0)
                       for k in workload.LOAD_KEYS)
        if now_load <= 0:
            continue
        if value < warn:
            if est.capacity < CONTRADICTED * now_load:
                est = copy.copy(est)
                est.capacity, est.source = now_load, 'latency'
                est.bound, est.seen = cap_mod.LOWER, math.nan
                out[node] = est
            continue
        red = value > policy.slo_threshold_ms
        if not (est.capacity <= now_load):
            est = copy.copy(est)
            est.capacity, est.source = now_load, 'latency'
            est.bound = cap_mod.UPPER if red else cap_mod.EXACT
            est.seen = math.nan
            out[node] = est
    return out


def plan(policy: ScalingPolicy, state: dec.ClusterState,
         current: Mapping[str, Mapping[str, Any]],
         forecast_peak: Mapping[str, float] | None, registry: Any, now: float,
         flavors: Mapping[str, str] | None = None,
         inputs: Mapping[str, Any] | None = None,
         measured: Mapping[str, float] | None = None,
         red_step: tuple[int, str] = (0, ''),
         growth: float = 1.0, held: float = 0.0,
         estimator: Estimator | None = None) -> dec.Decision:
    """One control period's decision.

    ``current`` maps each serving VM with a fresh sample to that sample (load
    keys and request sizes); ``forecast_peak`` is the forecast's peak per load
    key within :func:`horizon_s` (None or empty: no usable forecast);
    ``measured`` each VM's newest measured SLO metric (:func:`disposed`);
    ``red_step`` the guard's step for the newest round when it is red
    (:func:`elastman.actuator.guard.red_step`): a scale-out adds at least
    that many VMs; ``growth`` the load's trend over the join time
    (:func:`trend_growth`): the plan is for at least the load served now
    times that; ``held`` the highest load of the policy's
    ``scale_in_hold_s`` (:func:`held_load`): a scale-in leaves the VMs that
    load needs. While a scale-out still creates its servers, the plan is
    made as if it were not in flight, and may trim or top up that action
    (:func:`replan`). ``estimator`` answers each VM's capacity for its
    planned workload (default :func:`estimates_for` on ``registry``).
    """
    if state.action_in_flight and state.growing is not None and \
            policy.replan_in_flight and state.growing.to_create > 0:
        free = dataclasses.replace(state, action_in_flight=False,
                                   last_action_at=None, growing=None)
        d = plan(policy, free, current, forecast_peak, registry, now, flavors,
                 inputs, measured, red_step, growth, held, estimator)
        return replan(policy, state, d)
    observed = observed_load(current)
    planned = planned_load(forecast_peak, observed, growth)
    d = _decide_for(policy, state, current, planned, registry, now, flavors,
                    measured, dict(inputs or {}, observed_cluster=observed,
                                   forecast_used=bool(forecast_peak),
                                   trend_growth=round(float(growth), 4)),
                    estimator)
    total = sum(planned.values())
    if d.kind == dec.SCALE_IN and held > total > 0:
        kept = d
        scale = held / total
        d = _decide_for(policy, state, current,
                        {k: v * scale for k, v in planned.items()}, registry,
                        now, flavors, measured,
                        dict(kept.inputs, held_load=held), estimator)
        window = 'the load of the last %.0f s peaked at %.1f req/s' % (
            policy.scale_in_hold_s, held)
        if d.kind == dec.SCALE_IN:
            d.reason += '; %d rather than %d: %s' % (d.count, kept.count, window)
        else:
            d = dataclasses.replace(
                kept, kind=dec.NONE, count=0, remove_nodes=[],
                blocked_by='hold', inputs=d.inputs,
                reason='no action: a scale-in of %d held back: %s, which the '
                       'cluster\'s %d VMs carry' % (kept.count, window, state.size))
    least, how = red_step
    if d.kind == dec.SCALE_OUT and d.count < least:
        count = min(least, policy.max_size - state.size)
        if count > d.count:
            d.reason += ('; %d, the guard\'s step, as the newest round is red (%s)'
                         % (count, how))
            d.count = count
    return d


#: Why a plan made as if nothing were in flight says that the cluster's
#: serving VMs carry the planned load: no block (spare within beta), or a
#: scale-in held back by the load of the hold window.
CARRIED = (None, 'hold')


def replan(policy: ScalingPolicy, state: dec.ClusterState,
           free: dec.Decision) -> dec.Decision:
    """What the planning loop does while a scale-out has servers it has
    not created yet (its joins run one after another).

    ``free`` is its plan as if that action were not in flight. Where it
    asks for more VMs than the action still adds, the action is topped up
    by the difference (within ``max_size``). Where it asks for fewer (a
    smaller scale-out, none with every VM under its target, or a
    scale-in), the action's servers not created yet that exceed that are
    trimmed, at most as many a period as a scale-in would remove
    (``max_scale_in_fraction``) and as long as one server is left to the
    action; nothing is trimmed while
    a VM's latency is in the warning band or the plan cannot say (model,
    bounds, imbalance).
    """
    growing = state.growing
    assert growing is not None
    d = dataclasses.replace(free, kind=dec.NONE, count=0, remove_nodes=[],
                            flavor=None, blocked_by='in_flight')
    plan_says = free.reason.removeprefix('no action: ')
    waiting = 'no action: a scale-out is in flight (%d VM(s) to come)' % growing.adding
    if free.kind == dec.SCALE_OUT:
        needed = free.count
    elif free.kind == dec.SCALE_IN or (free.kind == dec.NONE
                                       and free.blocked_by in CARRIED):
        needed = 0
    else:
        d.reason = '%s; not trimmed: %s' % (waiting, plan_says)
        return d
    room = policy.max_size - state.size - growing.adding
    if needed > growing.adding and room > 0:
        d.kind, d.count, d.flavor = dec.SCALE_OUT, min(needed - growing.adding, room), \
            growing.flavor
        d.blocked_by, d.top_up_of = None, growing.action_id
        d.reason = ('top up the scale-out in flight by %d of %s: it still adds '
                    '%d, the plan needs %d more; %s'
                    % (d.count, growing.flavor, growing.adding, needed, free.reason))
        return d
    if state.in_warning_band:
        d.reason = ('%s; not trimmed while %d VM(s) are in the warning band'
                    % (waiting, len(state.in_warning_band)))
        return d
    # at the pace of a scale-in: the load a trim follows down may come back
    pace = max(1, math.floor(policy.max_scale_in_fraction * state.size + dec.EPS))
    count = min(growing.adding - needed, growing.to_create, growing.adding - 1, pace)
    if count <= 0:
        d.reason = '%s, all needed: %s' % (waiting, plan_says)
        return d
    d.kind, d.count, d.flavor = dec.TRIM, count, growing.flavor
    d.blocked_by, d.trim_of = None, growing.action_id
    d.reason = ('trim the scale-out in flight by %d of %s: it still adds %d, '
                'the plan needs %d more; %s'
                % (count, growing.flavor, growing.adding, needed, plan_says))
    return d


def _decide_for(policy: ScalingPolicy, state: dec.ClusterState,
                current: Mapping[str, Mapping[str, Any]],
                planned: Mapping[str, float], registry: Any, now: float,
                flavors: Mapping[str, str] | None,
                measured: Mapping[str, float] | None,
                record: dict[str, Any],
                estimator: Estimator | None = None) -> dec.Decision:
    """The decision for the cluster's load ``planned``, split over its VMs
    as they serve now.
    """
    per_vm = workload.split_workload(planned, current)
    if estimator is not None:
        estimates = estimator(registry, per_vm, flavors)
    else:
        estimates = estimates_for(registry, per_vm, flavors) if registry is not None else {}
    estimates = disposed(policy, estimates, current, measured)
    if state.started_at is not None and len(estimates) == state.size and all(
            getattr(e, 'model_kind', '') == 'svm' for e in estimates.values()):
        # warm-up is for learning a boundary: a model that has one (its own
        # or the flavour's prior) may scale out at once, while the scale-in
        # still waits for the warm-up's end
        state = dataclasses.replace(state, boundary_known=True)
    record.update({'predicted_cluster': dict(planned),
                   'per_vm_workload': {
                       node: {k: round(float(w.get(k) or 0.0), 3)
                              for k in workload.LOAD_KEYS}
                       for node, w in per_vm.items()}})
    return dec.decide(policy, state, estimates, now, record)


def guard_estimates(policy: ScalingPolicy, registry: Any,
                    current: Mapping[str, Mapping[str, Any]],
                    flavors: Mapping[str, str] | None = None,
                    measured: Mapping[str, float] | None = None) -> dict[str, Any]:
    """Capacity estimates for the load measured now, disposed by the
    measured latency: they size the guard's step.
    """
    estimates = estimates_for(registry, current, flavors) if registry is not None else {}
    return disposed(policy, estimates, current, measured)


class JoinClock:
    """The durations of a cluster's past scale-outs, per flavour: until the
    new nodes served (joined) and until the action ended (cleanup done).
    """

    def __init__(self) -> None:
        self._joined: dict[str, collections.deque] = collections.defaultdict(
            lambda: collections.deque(maxlen=JOIN_MEMORY))
        self._done: dict[str, collections.deque] = collections.defaultdict(
            lambda: collections.deque(maxlen=JOIN_MEMORY))

    def record(self, flavor: str, joined_s: float, done_s: float | None = None) -> None:
        self._joined[flavor].append(float(joined_s))
        if done_s is not None:
            self._done[flavor].append(float(done_s))

    @staticmethod
    def _pick(table: Mapping[str, Iterable[float]], flavor: str | None) -> list[float]:
        if flavor is None:
            return [d for q in table.values() for d in q]
        return list(table.get(flavor, ()))

    def join_time(self, flavor: str | None, default: float) -> float:
        """Until a scale-out's nodes serve."""
        return join_time(self._pick(self._joined, flavor), default)

    def busy_time(self, flavor: str | None, default: float) -> float:
        """Until a scale-out ends (its cleanup done)."""
        return join_time(self._pick(self._done, flavor), default)
