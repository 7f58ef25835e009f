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
"""The elasticity controller's decision: how many VMs of which flavour to add
or remove this control period (OnlineElastMan; the choice of node to remove
after the Augmentation Engine).

:func:`decide` is a pure function of the policy, the cluster's state and the
per-VM capacity estimates (each carrying the VM's predicted load ``w_x``, its
capacity ``c_x`` and how well ``c_x`` is known). Per flavour ``f``:

* scale out when more than ``alpha`` VMs of ``f`` have ``w_x > c_x`` (or
  ``alpha_fraction`` of them, when that is more), by
  ``ceil(sum_f (w_x - c_x) / c_x)`` when that is positive;
* scale in only when no VM of the cluster is (or may be) over capacity, by
  ``floor(-sum_f (w_x - c_x) / c_x - beta)`` when that is positive;

then the policy's bounds, one action in flight, cool-down and warm-up apply.

Policy options beyond the paper (their defaults are the rules above):

* ``headroom`` ``h``: every rule compares ``w_x`` with the target
  ``(1 - h) c_x`` instead of ``c_x`` (the terms become ``(w_x - (1-h) c_x) /
  ((1-h) c_x)``). ``c_x`` is the SLO boundary itself, so operating at it
  violates the SLO as soon as the load or the VM's capacity moves.
* ``scale_out_count='violators'``: once more than ``alpha`` VMs violate, add
  ``ceil(sum over the violating VMs of their terms)``: the cold VMs' spare
  capacity no longer cancels the hot VMs' excess (a load that keeps its token
  distribution cannot move onto them), so the count is at least the paper's
  and a scale-out is never blocked as "imbalance".
* ``violation_at='capacity'``: a VM violates (for ``alpha``, the violators'
  sum and the block on scale-in) when ``w_x > c_x``, not when it is over its
  target. The headroom then keeps room for the flavour as a whole: a
  positive net sum over the targets scales out by its ceiling. A hot VM
  between its target and its capacity, which a token imbalance keeps there
  whatever the cluster's size, neither adds a VM each period nor holds back
  a scale-in; a scale-in removes no more VMs than keep all but ``alpha`` of
  the others under capacity once their loads grow by ``n / (n - k)``. The
  violators' terms are then ``(w_x - c_x) / c_x``. A ``lower`` bound keeps
  its target (a load beyond it stays uncertain).
* ``extrapolation='lower'``: an estimate may carry ``seen``, the largest load
  along its ray inside the region the model was trained on; a capacity beyond
  it is an extrapolation of the boundary, so ``c_x`` becomes ``seen`` with
  bound ``lower`` (an ``upper`` bound is kept as is).
* ``max_scale_in_fraction``: one scale-in removes at most that fraction of
  the flavour's VMs (at least one).
* ``beyond_lower='over'``: a ``lower`` bound is the largest load the VM was
  seen to serve within the SLO; a load beyond it is taken as a violation of
  that capacity (counted, with its term) rather than left uncertain, so the
  cluster grows before the model has seen the SLO break. Such a VM's target
  is ``(1 + explore) c_x`` (no headroom: ``c_x`` was met), so that the load
  may go ``explore`` beyond what was seen and the model keeps learning.
* ``beyond_lower='extrapolated'`` with ``extrapolation='lower'``: a load
  beyond the lower bound at ``seen`` stays uncertain (it blocks a scale-in
  and is no violator), but it asks for the room the boundary's
  extrapolation says it needs: its excess over the target of the
  extrapolated capacity, where positive, adds to the sum. Its slack never
  does. A forecast or a trend beyond anything the cluster served then
  scales out ahead of the rise, where ``uncertain`` waits for the latency
  guard.

How a capacity bound enters (``CapacityEstimate.bound``):

* ``exact``: as is.
* ``lower`` (the true capacity is at least ``c_x``; the model has seen no
  violation along the ray): ``w_x <= c_x`` is surely safe and its slack an
  under-estimate, so it may justify a scale-in; ``w_x > c_x`` is only
  *uncertain* (beyond what the VM was seen to serve): it blocks scale-in,
  and adds to the sums only what ``beyond_lower='extrapolated'`` takes from
  the boundary's extrapolation.
* ``upper`` (the true capacity is below ``c_x``; all cells violated):
  ``w_x > c_x`` is surely a violation (its term under-estimates the need);
  ``w_x <= c_x`` is uncertain, as above.
* ``unknown`` (no cells, or no fresh sample): left out of the sums; it
  cannot block a scale-out the other VMs call for, but it blocks a scale-in
  (with no estimate at all there is no decision: "model not usable").
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Iterable, Mapping, Sequence

from oslo_log import log as logging

from elastman.actuator.policy import ScalingPolicy

LOG = logging.getLogger(__name__)

SCALE_OUT = 'scale_out'
SCALE_IN = 'scale_in'
#: less for the action in flight to do: fewer servers for a scale-out, of
#: those it has not created, or fewer nodes for a scale-in, of those it has
#: not begun to remove (``keep_nodes``)
TRIM = 'trim'
NONE = 'none'

OK, OVER, UNCERTAIN, UNKNOWN = 'ok', 'over', 'uncertain', 'unknown'
#: ``beyond_lower``: a load beyond a lower bound asks for what the boundary's
#: extrapolation says it needs
EXTRAPOLATED = 'extrapolated'
EPS = 1e-9


@dataclasses.dataclass
class NodeInfo:
    """A serving (``UN``) node of the cluster."""

    node_id: str
    flavor: str
    seed: bool = False
    interference: float = 0.0
    #: False for a node elastman has no server of (found in a registered
    #: ring): it still serves and counts, but is never chosen for removal
    removable: bool = True


@dataclasses.dataclass
class Growing:
    """A scale-out in flight that can still take more servers: it has not
    finished creating them.
    """

    action_id: str
    flavor: str
    adding: int          # its servers that do not serve yet (to create or joining)
    to_create: int = 0   # of those, the servers not asked of the cloud yet


@dataclasses.dataclass
class Shrinking:
    """A scale-in in flight that has nodes it has not begun to remove (the
    executor removes them one at a time).
    """

    action_id: str
    pending: list[str]   # its nodes not yet leaving the ring


@dataclasses.dataclass
class ClusterState:
    """What the decision needs to know about the cluster besides capacities.

    ``last_action_at`` is when the last action completed (cool-down start);
    ``started_at`` when elastman began modelling the cluster (warm-up start;
    ``None``: the caller has handled warm-up); ``boundary_known`` that the
    capacity model already has a boundary (its own or a prior), so warm-up
    holds only the scale-in. ``in_warning_band`` lists the
    VMs whose measured latency is in the guard's warning band or above the
    SLO (:mod:`elastman.actuator.guard`): while there is one, no scale-in.
    ``healing`` counts dead nodes the healer will replace (they are not in
    ``nodes``, but they count towards the floor, so that a replacement is
    not doubled by a repair scale-out). ``growing`` is the action in flight
    when it is a scale-out the guard may top up (:class:`Growing`);
    ``shrinking`` when it is a scale-in with nodes it has not begun to
    remove (:class:`Shrinking`), which the guard may keep.
    """

    nodes: list[NodeInfo]
    action_in_flight: bool = False
    last_action_at: float | None = None
    started_at: float | None = None
    in_warning_band: list[str] = dataclasses.field(default_factory=list)
    last_action_kind: str | None = None
    healing: int = 0
    growing: Growing | None = None
    shrinking: Shrinking | None = None
    #: when the cluster last grew: its newest scale-out's decision, or its
    #: creation before its first (``None``: neither is known)
    last_grown_at: float | None = None
    #: the capacity model already has a boundary (its own or a prior):
    #: warm-up then blocks only the scale-in
    boundary_known: bool = False

    @property
    def size(self) -> int:
        return len(self.nodes)


@dataclasses.dataclass
class VMTerm:
    """One VM's part of the decision."""

    node_id: str
    flavor: str
    load: float
    capacity: float      # c_x as used (capped at ``seen`` by extrapolation=lower)
    bound: str
    status: str          # ok / over / uncertain / unknown
    term: float          # (w - t) / t as used in the sums (0 when not usable)
    target: float = math.nan   # t = (1 - headroom) c_x, what w_x is compared with
    over_capacity: float = 0.0  # (w - c) / c when w > c, the violators' term at capacity
    #: (w - t') / t' with t' = (1 - scale_in_headroom) c_x, the scale-in's
    #: sum (``term`` when scale_in_headroom adds no room)
    in_term: float | None = None


@dataclasses.dataclass
class FlavorNumbers:
    """The computed numbers of one flavour."""

    flavor: str
    vms: int = 0
    violators: int = 0
    uncertain: int = 0
    unknown: int = 0
    lower_bounds: int = 0
    upper_bounds: int = 0
    capped: int = 0
    excess_sum: float = 0.0
    in_sum: float = 0.0    # the sum a scale-in counts spare VMs from
    violator_excess: float = 0.0
    mean_capacity: float = math.nan
    out_raw: int = 0
    in_raw: int = 0
    out_bounded: int = 0
    in_bounded: int = 0
    cost: float = 1.0


@dataclasses.dataclass
class Decision:
    """The outcome of one control period for one cluster."""

    kind: str
    reason: str
    at: float
    trigger: str = 'plan'      # 'plan' (control period) or 'guard' (latency)
    #: the scale-out in flight this one adds its ``count`` servers to
    top_up_of: str | None = None
    #: the action in flight a ``trim`` takes ``count`` servers (a
    #: scale-out) or the ``keep_nodes`` (a scale-in) from
    trim_of: str | None = None
    #: the nodes a ``trim`` of a scale-in keeps in the cluster
    keep_nodes: list[str] = dataclasses.field(default_factory=list)
    flavor: str | None = None
    count: int = 0
    remove_nodes: list[str] = dataclasses.field(default_factory=list)
    blocked_by: str | None = None
    notes: list[str] = dataclasses.field(default_factory=list)
    size: int = 0
    floor: int = 0
    max_size: int = 0
    alpha: float = 1.0
    beta: float = 0.5
    deficit: float = 0.0
    dry_run: bool = False
    flavors: dict[str, FlavorNumbers] = dataclasses.field(default_factory=dict)
    vms: list[VMTerm] = dataclasses.field(default_factory=list)
    inputs: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def acts(self) -> bool:
        """True when the actuator should carry this out (not dry-run)."""
        return self.kind != NONE and not self.dry_run

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable record (non-finite numbers become ``None``)."""
        return _clean(dataclasses.asdict(self))


def _clean(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


# -- per-VM and per-flavour numbers -------------------------------------------

def _relative_excess(load: float, target: float, cap_term: float) -> float:
    """(w - t) / t, at least -1 and at most ``cap_term``."""
    return min(max((load - target) / target, -1.0), cap_term)


def vm_term(node: NodeInfo, est: Any, cap_term: float, headroom: float = 0.0,
            beyond_lower: str = 'uncertain', extrapolation: str = 'trust',
            explore: float = 0.0, violation_at: str = 'target',
            in_headroom: float = 0.0) -> VMTerm:
    """Classify one VM from its capacity estimate (see module docstring)."""
    if est is None:
        return VMTerm(node.node_id, node.flavor, math.nan, math.nan, UNKNOWN, UNKNOWN, 0.0)
    load, cap = float(est.load), float(est.capacity)
    bound = getattr(est, 'bound', 'exact')
    if bound == UNKNOWN or not math.isfinite(cap) or not math.isfinite(load):
        return VMTerm(node.node_id, node.flavor, load, cap, bound, UNKNOWN, 0.0)
    seen = getattr(est, 'seen', None)
    extrapolated = math.nan
    if extrapolation == 'lower' and seen is not None and math.isfinite(seen) \
            and 0 < seen < cap and bound != 'upper':
        extrapolated, cap, bound = cap, float(seen), 'lower'
    if bound == 'lower' and beyond_lower == OVER:
        target = cap * (1.0 + explore)
    else:
        target = cap * (1.0 - headroom)
    if cap <= 0:
        # no load is known to be served within the SLO along this ray; a
        # lower bound of 0 only says the model has seen nothing there yet
        if load <= 0:
            status = OK
        elif bound == 'lower':
            status = OVER if beyond_lower == OVER else UNCERTAIN
        else:
            status = OVER
        return VMTerm(node.node_id, node.flavor, load, cap, bound, status,
                      cap_term if status == OVER else 0.0, target)
    term = _relative_excess(load, target, cap_term)
    in_term = None
    if in_headroom > headroom and bound != 'lower':
        in_term = _relative_excess(load, cap * (1.0 - in_headroom), cap_term)
    # with violation_at='capacity' an exact or upper capacity is the limit; a
    # lower bound (only what the VM was seen to serve) keeps its target
    limit = cap if violation_at == 'capacity' and bound != 'lower' else target
    over = load > limit
    if bound == 'lower':
        status = (OVER if beyond_lower == OVER else UNCERTAIN) if over else OK
    elif bound == 'upper':
        status = OVER if over else UNCERTAIN
    else:
        status = OVER if over else OK
    if status == UNCERTAIN:
        term = 0.0
        if beyond_lower == EXTRAPOLATED and math.isfinite(extrapolated):
            # the boundary beyond the data may ask for room, never give it
            term = max(0.0, _relative_excess(load, extrapolated * (1.0 - headroom),
                                             cap_term))
    return VMTerm(node.node_id, node.flavor, load, cap, bound, status, term, target,
                  min((load - cap) / cap, cap_term) if status == OVER and load > cap else 0.0,
                  None if status == UNCERTAIN else in_term)


def flavor_numbers(policy: ScalingPolicy, terms: Iterable[VMTerm]) -> dict[str, FlavorNumbers]:
    """Per-flavour violators, sum of (w-c)/c and the raw out/in counts
    (``mean_capacity`` is the mean target ``(1 - headroom) c_x``).
    """
    out: dict[str, FlavorNumbers] = {}
    caps: dict[str, list[float]] = {}
    for t in terms:
        f = out.get(t.flavor)
        if f is None:
            f = out[t.flavor] = FlavorNumbers(t.flavor, cost=policy.cost(t.flavor))
        f.vms += 1
        f.violators += t.status == OVER
        f.uncertain += t.status == UNCERTAIN
        f.unknown += t.status == UNKNOWN
        f.lower_bounds += t.bound == 'lower'
        f.upper_bounds += t.bound == 'upper'
        f.excess_sum += t.term
        f.in_sum += t.term if t.in_term is None else t.in_term
        if t.status == OVER:
            f.violator_excess += (t.over_capacity if policy.violation_at == 'capacity'
                                  else t.term)
        f.capped += t.status == OVER and t.term >= policy.max_vm_excess
        if t.status != UNKNOWN and math.isfinite(t.target) and t.target > 0:
            caps.setdefault(t.flavor, []).append(t.target)
    for name, f in out.items():
        if caps.get(name):
            f.mean_capacity = sum(caps[name]) / len(caps[name])
        excess = out_excess(policy, f)
        if f.violators > policy.alpha_for(f.vms) and excess > EPS:
            f.out_raw = math.ceil(excess - EPS)
        if policy.violation_at == 'capacity' and f.excess_sum > EPS:
            f.out_raw = max(f.out_raw, math.ceil(f.excess_sum - EPS))
        f.in_raw = max(0, math.floor(-f.in_sum - policy.beta + EPS))
    return out


def out_excess(policy: ScalingPolicy, f: FlavorNumbers) -> float:
    """The excess (in VMs) the scale-out count of ``f`` is taken from."""
    return f.violator_excess if policy.scale_out_count == 'violators' else f.excess_sum


# -- choices -----------------------------------------------------------------

def choose_flavor(policy: ScalingPolicy, flavors: Mapping[str, FlavorNumbers],
                  deficit: float, fallback: str) -> tuple[str, int, str]:
    """The cheapest flavour that covers ``deficit`` (capacity units, req/s).

    Candidates are the flavours priced in the policy (or, without prices,
    those in the cluster) whose per-VM capacity is known from the cluster's
    VMs. Returns (flavour, count, explanation).
    """
    names = list(policy.flavor_costs) or list(flavors)
    options = []
    for name in names:
        f = flavors.get(name)
        if f is None or not (f.mean_capacity > 0):
            continue
        n = max(1, math.ceil(deficit / f.mean_capacity - EPS))
        options.append((n * policy.cost(name), n, name))
    if not options:
        f = flavors[fallback]
        return fallback, f.out_raw, 'no priced flavour with a known capacity'
    options.sort()
    cost, n, name = options[0]
    why = ('cheapest of %s covering %.0f req/s' % (
        ', '.join('%s x%d = %g' % (o[2], o[1], o[0]) for o in options), deficit)
        if len(options) > 1 else '')
    return name, n, why


def choose_nodes_to_remove(policy: ScalingPolicy, nodes: Sequence[NodeInfo],
                           terms: Mapping[str, VMTerm], flavor: str,
                           count: int) -> list[str]:
    """Up to ``count`` nodes of ``flavor``: non-seeds first, then least
    capacity, most interference or most load for their capacity (per
    ``policy.remove_by``); a seed only while another seed stays in the
    cluster.

    ``load`` removes the hottest VMs: the token share a VM leaves is spread
    over those that stay, so the most loaded VM for its capacity is the one
    whose absence lowers the load of the busiest VM left.
    """
    def key(n: NodeInfo) -> tuple:
        term = terms.get(n.node_id)
        cap = term.capacity if term is not None else math.inf
        cap = cap if math.isfinite(cap) else math.inf
        if policy.remove_by == 'interference':
            return (n.seed, -n.interference, cap, n.node_id)
        if policy.remove_by == 'load':
            heat = term.load / cap if term is not None and 0 < cap < math.inf \
                and math.isfinite(term.load) else -math.inf
            return (n.seed, -heat, -n.interference, n.node_id)
        return (n.seed, cap, -n.interference, n.node_id)

    seeds_left = sum(1 for n in nodes if n.seed)
    chosen: list[str] = []
    for n in sorted((n for n in nodes if n.flavor == flavor and n.removable),
                    key=key):
        if len(chosen) >= count:
            break
        if n.seed:
            if seeds_left <= 1:
                continue
            seeds_left -= 1
        chosen.append(n.node_id)
    return chosen


# -- the decision ------------------------------------------------------------

def scale_in_headroom(policy: ScalingPolicy, cluster: ClusterState,
                      now: float) -> float:
    """The scale-in's headroom this period: ``policy.scale_in_headroom``
    for ``scale_in_headroom_s`` after the cluster last grew (always with
    ``scale_in_headroom_s`` 0), else 0 (the headroom alone).
    """
    if policy.scale_in_headroom <= 0 or policy.scale_in_headroom_s <= 0:
        return policy.scale_in_headroom
    last = cluster.last_grown_at
    if last is None or now - last >= policy.scale_in_headroom_s:
        return 0.0
    return policy.scale_in_headroom


def decide(policy: ScalingPolicy, cluster: ClusterState,
           estimates: Mapping[str, Any], now: float,
           inputs: Mapping[str, Any] | None = None) -> Decision:
    """Decide this control period's action for one cluster.

    ``estimates`` maps node id to a capacity estimate for that node's
    predicted workload (``.load`` = w_x, ``.capacity`` = c_x, ``.bound``), as
    returned by ``ModelRegistry.capacity``; a serving node without one counts
    as unknown. ``inputs`` (forecast, forecaster, model versions, ...) is
    copied into the record.
    """
    d = Decision(kind=NONE, reason='', at=float(now), size=cluster.size,
                 floor=policy.floor, max_size=policy.max_size, alpha=policy.alpha,
                 beta=policy.beta, dry_run=policy.dry_run, inputs=dict(inputs or {}))
    cap_term = float(policy.max_vm_excess)
    in_headroom = scale_in_headroom(policy, cluster, now)
    if policy.scale_in_headroom > 0:
        d.inputs.setdefault('scale_in_headroom', in_headroom)
    terms = [vm_term(n, estimates.get(n.node_id), cap_term, policy.headroom,
                     policy.beyond_lower, policy.extrapolation, policy.explore,
                     policy.violation_at, in_headroom)
             for n in cluster.nodes]
    by_node = {t.node_id: t for t in terms}
    d.vms = terms
    d.flavors = flavor_numbers(policy, terms)
    _note_bounds(policy, d)

    def none(reason: str, blocked: str | None = None) -> Decision:
        d.kind, d.reason, d.blocked_by = NONE, 'no action: ' + reason, blocked
        LOG.debug('%s', d.reason)
        return d

    if not cluster.nodes:
        return none('the cluster has no serving node', 'empty')
    if cluster.action_in_flight:
        return none('an action is in flight', 'in_flight')
    cooling = (cluster.last_action_at is not None
               and now - cluster.last_action_at < policy.cooldown_s)
    if cooling and cluster.last_action_kind != SCALE_OUT:
        left = policy.cooldown_s - (now - cluster.last_action_at)
        return none('cooling down (%.0f s left)' % left, 'cooldown')
    if cluster.size + cluster.healing < policy.floor:
        return _repair(policy, cluster, d)
    # seconds of warm-up left (0 or less: none)
    warm_left = (policy.warmup_s - (now - cluster.started_at)
                 if policy.warmup_s > 0 and cluster.started_at is not None else 0.0)
    if warm_left > 0 and not cluster.boundary_known:
        return none('warming up (%.0f s left)' % warm_left, 'warmup')
    unknown = sum(f.unknown for f in d.flavors.values())
    if unknown == cluster.size:
        return none('model not usable (none of the %d VMs has a capacity '
                    'estimate yet)' % cluster.size, 'model')

    # VMs without an estimate (no fresh sample, no model yet) are left out of
    # the sums: they cannot block a scale-out the others call for, but they
    # do block a scale-in
    out = _scale_out(policy, cluster, d)
    if out is not None:
        return out
    if cooling:
        # after a scale-out, another one may follow at once (the load still
        # rises); a scale-in waits for the cool-down
        left = policy.cooldown_s - (now - cluster.last_action_at)
        return none('no scale-out needed; cooling down after a scale-out '
                    '(%.0f s left)' % left, 'cooldown')
    if unknown:
        return none('%d of %d VMs have no capacity estimate; scale in needs '
                    'every VM known' % (unknown, cluster.size), 'model')
    if cluster.in_warning_band:
        return none('the measured latency of %d VM(s) is in the warning band '
                    '(%s); no scale-in' % (len(cluster.in_warning_band),
                                           ', '.join(cluster.in_warning_band[:5])),
                    'latency')
    if warm_left > 0:
        # a boundary known from the start (a prior) tells the VMs' capacity,
        # not how the load moves: the cluster keeps its size until elastman
        # has watched its load for the warm-up
        return none('no scale-out needed; no scale-in while warming up '
                    '(%.0f s left)' % warm_left, 'warmup')
    return _scale_in(policy, cluster, d, by_node)


def capacity_ratios(terms: Iterable[VMTerm]) -> list[float]:
    """Each VM's load over its capacity, highest first (VMs without a
    positive capacity or a finite load left out). The ring spreads a change
    of size over every VM alike, so these say how far a cluster may shrink
    or must grow.
    """
    return sorted((t.load / t.capacity for t in terms
                   if t.capacity > 0 and math.isfinite(t.load)), reverse=True)


def _removable_within_capacity(policy: ScalingPolicy, size: int,
                               by_node: Mapping[str, VMTerm]) -> int:
    """The most VMs a scale-in may remove so that, the others' loads grown
    by ``size / (size - k)``, no more than ``alpha`` VMs go over capacity.
    """
    ratios = capacity_ratios(by_node.values())
    allowed = int(policy.alpha_for(size))
    if len(ratios) <= allowed:
        return size
    r = ratios[allowed]
    if r <= 0:
        return size
    return max(0, math.floor(size * (1.0 - r) + EPS))


def _note_bounds(policy: ScalingPolicy, d: Decision) -> None:
    for f in d.flavors.values():
        if f.lower_bounds:
            d.notes.append('%s: capacity of %d VM(s) is only a lower bound (no violation '
                           'seen along the ray)' % (f.flavor, f.lower_bounds))
        if f.upper_bounds:
            d.notes.append('%s: capacity of %d VM(s) is only an upper bound (only '
                           'violations seen)' % (f.flavor, f.upper_bounds))
        if f.capped:
            d.notes.append('%s: excess of %d VM(s) capped at max_vm_excess' % (f.flavor, f.capped))
        if f.uncertain:
            d.notes.append('%s: %d VM(s) may be over capacity (bounds only): not counted '
                           'as violators, scale-in blocked%s'
                           % (f.flavor, f.uncertain,
                              '; their excess over the extrapolated boundary\'s '
                              'target counted' if policy.beyond_lower == EXTRAPOLATED
                              else ''))


def _repair(policy: ScalingPolicy, cluster: ClusterState, d: Decision) -> Decision:
    flavor = policy.default_flavor
    if flavor is None:
        present = sorted({n.flavor for n in cluster.nodes})
        pool = list(policy.flavor_costs) or present
        flavor = min(pool, key=lambda f: (policy.cost(f), f))
    d.kind, d.flavor, d.count = SCALE_OUT, flavor, policy.floor - cluster.size
    d.reason = ('scale out by %d of %s: %d serving nodes, below the minimum %d '
                '(max of min_size=%d and replication factor %d)'
                % (d.count, flavor, cluster.size, policy.floor, policy.min_size,
                   policy.replication_factor))
    return d


def _scale_out(policy: ScalingPolicy, cluster: ClusterState, d: Decision) -> Decision | None:
    triggered = [f for f in d.flavors.values() if f.out_raw > 0]
    if not triggered:
        return None
    d.deficit = sum(out_excess(policy, f) * f.mean_capacity for f in triggered
                    if math.isfinite(f.mean_capacity))
    main = max(triggered, key=lambda f: (f.out_raw, f.flavor))
    if len(triggered) == 1 and (not policy.flavor_costs
                                or list(policy.flavor_costs) == [main.flavor]):
        flavor, want, why = main.flavor, main.out_raw, ''
    else:
        flavor, want, why = choose_flavor(policy, d.flavors, d.deficit, main.flavor)
    room = policy.max_size - cluster.size
    count = max(0, min(want, room))
    for f in triggered:
        f.out_bounded = min(f.out_raw, max(room, 0))
    viol = ', '.join('%d VMs of %s over capacity, sum of (w-c)/c %.2f'
                     % (f.violators, f.flavor, f.excess_sum) for f in triggered)
    if policy.scale_out_count == 'violators':
        viol += ' (violators\' sum %s)' % ', '.join(
            '%.2f' % f.violator_excess for f in triggered)
    if policy.headroom:
        viol += ', headroom=%g' % policy.headroom
    if count <= 0:
        d.kind, d.blocked_by = NONE, 'max_size'
        d.reason = ('no action: scale out by %d of %s clamped by max_size=%d (%s)'
                    % (want, flavor, policy.max_size, viol))
        return d
    d.kind, d.flavor, d.count = SCALE_OUT, flavor, count
    d.reason = 'scale out by %d of %s: %s (alpha=%g)' % (
        count, flavor, viol, policy.alpha_for(main.vms))
    if why:
        d.reason += '; %s' % why
    if count < want:
        d.reason += '; clamped from %d by max_size=%d' % (want, policy.max_size)
    return d


def _scale_in(policy: ScalingPolicy, cluster: ClusterState, d: Decision,
              by_node: Mapping[str, VMTerm]) -> Decision:
    over = sum(f.violators for f in d.flavors.values())
    unsure = sum(f.uncertain for f in d.flavors.values())
    if over or unsure:
        parts = []
        for f in d.flavors.values():
            if f.violators and f.violators <= policy.alpha_for(f.vms):
                parts.append('%d VM(s) of %s over capacity, within alpha=%g'
                             % (f.violators, f.flavor, policy.alpha_for(f.vms)))
            elif f.violators:
                parts.append('%d VM(s) of %s over capacity but sum of (w-c)/c is '
                             '%.2f (imbalance)' % (f.violators, f.flavor, f.excess_sum))
        if unsure:
            parts.append('%d VM(s) possibly over capacity (bounds only)' % unsure)
        if over and all(f.violators <= policy.alpha_for(f.vms)
                        for f in d.flavors.values()):
            blocked = 'alpha'
        else:
            blocked = 'imbalance' if over else 'bounds'
        d.kind, d.blocked_by = NONE, blocked
        d.reason = 'no action: %s; scale in needs every VM under capacity' % '; '.join(parts)
        return d
    candidates = [f for f in d.flavors.values() if f.in_raw > 0]
    if not candidates:
        total = sum(f.in_sum for f in d.flavors.values())
        d.reason = ('no action: every VM under capacity, spare %.2f VMs within beta=%g'
                    % (-total, policy.beta))
        return d
    best = max(candidates, key=lambda f: (f.in_raw * f.cost, f.flavor))
    room = cluster.size - policy.floor
    step = max(1, math.floor(policy.max_scale_in_fraction * best.vms + EPS))
    count = max(0, min(best.in_raw, room, step))
    fits = (_removable_within_capacity(policy, cluster.size, by_node)
            if policy.violation_at == 'capacity' else count)
    if 0 < count and fits <= 0:
        d.kind, d.blocked_by = NONE, 'imbalance'
        d.reason = ('no action: scale in by %d of %s would put more than alpha=%g '
                    'VM(s) over capacity (sum of (w-t)/t %.2f)'
                    % (count, best.flavor, policy.alpha_for(cluster.size),
                       best.excess_sum))
        return d
    clamped_by_fit = fits < count
    count = min(count, fits)
    best.in_bounded = count
    if count <= 0:
        d.kind, d.blocked_by = NONE, 'min_size'
        d.reason = ('no action: scale in by %d of %s clamped by min_size=%d '
                    '(replication factor %d, %d serving)'
                    % (best.in_raw, best.flavor, policy.min_size,
                       policy.replication_factor, cluster.size))
        return d
    chosen = choose_nodes_to_remove(policy, cluster.nodes, by_node, best.flavor, count)
    if not chosen:
        d.kind, d.blocked_by = NONE, 'seeds'
        d.reason = ('no action: scale in of %s would remove the last seed' % best.flavor)
        return d
    d.kind, d.flavor, d.count, d.remove_nodes = SCALE_IN, best.flavor, len(chosen), chosen
    d.reason = ('scale in by %d of %s: no VM over capacity, sum of (w-c)/c %.2f, '
                'beta=%g' % (len(chosen), best.flavor, best.in_sum, policy.beta))
    if clamped_by_fit:
        d.reason += ('; clamped from %d so that at most alpha=%g VM(s) go over '
                     'capacity' % (best.in_raw, policy.alpha_for(cluster.size)))
    elif count < best.in_raw and count == room:
        d.reason += '; clamped from %d by min_size=%d' % (best.in_raw, policy.floor)
    elif count < best.in_raw:
        d.reason += '; clamped from %d by max_scale_in_fraction=%g' % (
            best.in_raw, policy.max_scale_in_fraction)
    if len(chosen) < count:
        d.reason += '; only %d removable (seeds kept)' % len(chosen)
    d.reason += '; removing %s (by %s)' % (', '.join(chosen), policy.remove_by)
    return d
