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
"""elastman's own policies on the simulated cluster: the service's latency
guard, planning loop, capacity model and forecaster ensemble.

* ``elastman-noprediction`` / ``elastman`` (a new cluster's
  :class:`~elastman.actuator.policy.ScalingPolicy` defaults) and
  ``elastman-paper`` (OnlineElastMan's rule, with prediction): the real decision
  (:func:`elastman.actuator.decision.decide`), the real online capacity model
  (:class:`~elastman.capacity.registry.ModelRegistry`) and, for
  ``elastman``, the real forecaster ensemble
  (:class:`~elastman.predictor.ensemble.Ensemble`).
  Their capacity model scales the load by the host agents' interference
  index, as the trainer does by default (``[trainer] interference_feature =
  scale``); ``elastman-nointerference`` is ``elastman`` whose model does not
  use the index, ``elastman-dimension`` one that takes it as a feature
  (Hubbub-Scale's third dimension).
* ``elastman-quantile`` plans on the forecast's upper quantile,
  ``elastman-quantile-level`` (:class:`QuantileLevel`) the same with no
  headroom above it.
* ``elastman-foresight`` (:class:`Foresight`) plans on the load the trace
  really brings within its horizon instead of a forecast: what a perfect
  forecaster would give the same controller; ``elastman-true-capacity``
  (:class:`TrueCapacity`) is told every VM's true capacity instead of its
  model's, and ``elastman-exact`` (:class:`ExactCapacity`) both.
"""
from __future__ import annotations

import collections
import math
from typing import Any, Sequence

import numpy as np
from oslo_log import log as logging

from elastman.actuator import decision as dec
from elastman.actuator import guard as guard_mod
from elastman.actuator import margin
from elastman.actuator import planning
from elastman.actuator.policy import MAX_NODES
from elastman.actuator.policy import ScalingPolicy
from elastman.capacity import capacity as cap_mod
from elastman.capacity.params import INTERFERENCE
from elastman.capacity.params import ModelParams
from elastman.capacity.registry import ModelRegistry
from elastman.evaluation.policies.base import MIN_SIZE
from elastman.evaluation.policies.base import Policy
from elastman.evaluation.policies.settings import ensemble_options
from elastman.evaluation import priors
from elastman.evaluation.simulator import Action
from elastman.evaluation.simulator import aggregate_p99
from elastman.evaluation.simulator import JOINING
from elastman.evaluation.simulator import SERVING
from elastman.evaluation.simulator import SimCluster
from elastman.predictor.ensemble import DEFAULT_MODE
from elastman.predictor.ensemble import Ensemble
from elastman.predictor import history
from elastman.predictor import intervals

LOG = logging.getLogger(__name__)

#: how the capacity model takes the host agents' index (``[trainer]
#: interference_feature``)
INTERFERENCE_MODES = ('scale', 'dimension', 'never')
#: The join time the actuator assumes before it has clocked one
#: (``[actuator] join_timeout``'s default).
JOIN_DEFAULT_S = 900.0
#: When elastman's forecast is made (``SimConfig.forecast_at``): at each
#: decision, from the control period just ended; or as the service's
#: predictor makes it at its default ``[predictor] step``: control-period
#: means, the newest ending one minute (a predictor round) before the point
#: of the control period's grid, one forecast a grid point, which a plan
#: made between two grid points (as an action ends) uses too.
FORECAST_AT = ('decision', 'grid')
#: Steps the service's predictor forecasts (``[predictor] horizon``'s
#: default, more than a control period and a join at a 300 s step).
GRID_STEPS = 10


def grid_means(loads: Sequence[float], upto: int, every: int) -> list[float]:
    """Means of ``every`` consecutive values of ``loads[:upto]``, the
    newest ending at ``upto``; older values that do not fill a mean are
    left out.
    """
    upto = max(0, upto)
    return history.block_means(loads[upto % every:upto], every).tolist()


class Elastman(Policy):
    """elastman's controller on the simulated cluster.

    Both loops are the service's own functions: every minute (the monitor
    interval) the latency guard (:func:`elastman.actuator.guard.evaluate`) on
    the VMs' measured p99, and every control period the planning loop
    (:func:`elastman.actuator.planning.plan`) on the forecast and the
    capacity models. The capacity model is trained online from ``probes``
    VMs per flavour (a bounded sample, spread over the load-share range,
    hottest first) and the flavour model answers for every other VM, as the
    registry does for any VM without enough cells of its own. With ``prior``
    the flavour starts from the model another cluster of the same flavour
    learnt (:func:`elastman.evaluation.priors.flavor_prior`). The forecast
    is of the control periods' means, made as the service's predictor makes
    it, or with ``SimConfig.forecast_at`` ``decision`` at each decision from
    the period just ended (:data:`FORECAST_AT`). ``interference`` is how the
    capacity model takes the host agents' interference index, as
    ``[trainer] interference_feature`` says: ``scale``
    (it scales the load), ``dimension`` (a feature) or ``never``; the samples
    and the loads the model is asked about carry the index either way.
    """

    period_s = 60.0
    #: decision options of the ScalingPolicy (see :meth:`_setting`)
    knob = 'headroom'
    sweep = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)
    hysteresis = 'scale_in_headroom'
    hysteresis_sweep = (0.5, 0.6, 0.7)

    def _setting(self, name: str) -> float:
        """A scaling policy field: the option given, else its default."""
        return self.options.get(name, getattr(ScalingPolicy, name))

    def _set_setting(self, name: str, value: float) -> None:
        self.options[name] = value

    def __init__(self, predict: bool = True, policy: ScalingPolicy | None = None,
                 params: ModelParams | None = None, probes: int = 4,
                 ensemble: dict[str, Any] | None = None, series: str = 'total',
                 options: dict[str, Any] | None = None, name: str | None = None,
                 prior: bool = True, interference: str = 'scale') -> None:
        self.predict, self.series, self.prior = predict, series, prior
        self.name = name or ('elastman' if predict else 'elastman-noprediction')
        #: the policy as given; ``policy`` is it with the headroom the
        #: violations ask for this round (:mod:`elastman.actuator.margin`)
        self.base_policy = self.policy = policy
        self.options = dict(options or {})
        self.params = params or ModelParams(slo_metric='read_p99_ms')
        # a policy document's capacity model parameters (--set model=...)
        self.params = self.params.replace(**self.options.pop('model', {}))
        if interference not in INTERFERENCE_MODES:
            raise ValueError('interference must be one of %s'
                             % ', '.join(INTERFERENCE_MODES))
        if interference == 'dimension' and INTERFERENCE not in self.params.features:
            self.params = self.params.replace(
                features=tuple(self.params.features) + (INTERFERENCE,))
        elif interference == 'never':
            self.params = self.params.replace(interference_scale=False)
        self.probes = probes
        self.ensemble_kwargs = dict(refit_interval=30, seasonal_periods=(288,))
        # the predictor's options (--set predictor=...), as [predictor] has them
        self.ensemble_kwargs.update(ensemble_options(self.options.pop('predictor', {})))
        self.ensemble_kwargs.update(ensemble or {})
        self.decisions: collections.Counter = collections.Counter()

    def start(self, sim):
        super().start(sim)
        if self.base_policy is None:
            self.base_policy = ScalingPolicy(
                min_size=MIN_SIZE, max_size=MAX_NODES,
                replication_factor=sim.cfg.hardware.replication_factor,
                slo_threshold_ms=sim.cfg.slo_ms, **self.options)
        self.policy = self.base_policy
        # the cluster's violated minutes, as the headroom remembers them
        self.violations = margin.ViolationMemory(self.policy.headroom_memory_s)
        self.registry = ModelRegistry(self.name, self.params.replace(
            slo_threshold_ms=sim.cfg.slo_ms))
        self.probe_ids: dict[str, list[int]] = {f.name: [] for f in sim.flavors}
        self.ensemble = Ensemble(**self.ensemble_kwargs) if self.predict else None
        self.every = max(1, int(round(self.policy.control_period_s / sim.trace.step_s)))
        self.rounds: collections.deque = collections.deque(
            maxlen=self.policy.guard_intervals)
        # the cluster's served load per monitor round, as cluster_workload
        # holds it, for the planning loop's trend and scale-in hold
        self.load_points: collections.deque = collections.deque(
            maxlen=max(1, int(max(self.policy.trend_window_s, self.policy.scale_in_hold_s)
                              // sim.trace.step_s) + 1))
        self.joins = planning.JoinClock()
        self.joining: list[tuple[float, str, list[int]]] = []
        # each minute's load, for the forecast made as the service's
        # predictor makes it (forecast_at grid)
        keep = 601 * self.every
        self.minute_total: collections.deque = collections.deque(maxlen=keep)
        self.minute_reads: collections.deque = collections.deque(maxlen=keep)
        self.grid_at: int | None = None
        self.grid_forecast: tuple[Any, float] | None = None
        self.last_guard_level: float | None = None
        self.last_plan_at = -math.inf
        self.started_at: float | None = 0.0
        if self.prior:
            for f in sim.flavors:
                doc = priors.flavor_prior(sim.cfg, f, self.params, prior_teacher)
                if doc is not None:
                    self.registry.import_flavor_model(doc, f.name)
        self._pick_probes(sim)

    def _pick_probes(self, sim: SimCluster) -> None:
        serving = sim.serving_slots()
        for fi, f in enumerate(sim.flavors):
            live = [k for k in self.probe_ids[f.name] if k in sim.slot_of
                    and sim.state[sim.slot_of[k]] == SERVING]
            for k in set(self.probe_ids[f.name]) - set(live):
                self.registry.unregister_node(str(k))
            cand = serving[sim.flavor[serving] == fi]
            cand = [int(sim.ordinal[s]) for s in cand[np.argsort(-sim.g[cand], kind='stable')]
                    if int(sim.ordinal[s]) not in live]
            want = self.probes - len(live)
            if want > 0 and cand:
                idx = np.unique(np.linspace(0, len(cand) - 1, want).astype(int))
                for i in idx:
                    live.append(cand[i])
                    self.registry.register_node(str(cand[i]), f.name)
            self.probe_ids[f.name] = live

    def observe(self, sim):
        t = sim.t
        for f, ids in self.probe_ids.items():
            for k in ids:
                s = sim.slot_of.get(k)
                if s is None or sim.state[s] != SERVING:
                    continue
                p99, size = float(sim.obs_p99[s]), float(sim.obs_size[s])
                self.registry.add_sample({
                    INTERFERENCE: float(sim.interference_index(s)),
                    'cluster_id': self.name, 'node_id': str(k), 'ts': t, 'up': True,
                    'interval_s': sim.trace.step_s,
                    'reads_per_s': float(sim.obs_reads[s]),
                    'writes_per_s': float(sim.obs_writes[s]),
                    'read_bytes_mean': size, 'write_bytes_mean': size,
                    'read_p50_ms': p99 * 0.15, 'read_p95_ms': p99 * 0.65, 'read_p99_ms': p99,
                    'write_p50_ms': p99 * 0.1, 'write_p95_ms': p99 * 0.4,
                    'write_p99_ms': p99 * 0.6})
        if self.registry.is_due(t):
            self.registry.refit(t)
        self._clock_joins(sim)
        # the cluster's own p99 and load, as the monitor merges every node it
        # reads, a leaving one too (the VMs' latency tails mixed by the reads
        # each served); the guard's per-VM view, as the actuator's, only the
        # serving ones
        sampled = sim.sampled_slots()
        reads = sim.obs_reads[sampled]
        cluster_p99 = (aggregate_p99(sim.obs_p99[sampled], reads)
                       if len(sampled) and reads.sum() > 0 else None)
        self.load_points.append((t, float(reads.sum() + sim.obs_writes[sampled].sum())))
        if self.predict and sim.cfg.forecast_at == 'grid':
            self.minute_total.append(self.load_points[-1][1])
            self.minute_reads.append(float(reads.sum()))
        for at, minutes in margin.violated_minutes(
                [(t, cluster_p99)], self.base_policy.slo_threshold_ms, sim.trace.step_s):
            self.violations.add(at, minutes)
        slots = sim.serving_slots()
        self.rounds.appendleft(guard_mod.Round(t, dict(zip(
            (str(int(k)) for k in sim.ordinal[slots]), sim.obs_p99[slots].tolist())),
            cluster_p99))

    def _clock_joins(self, sim: SimCluster) -> None:
        """How long the scale-outs took, as the actuator learns it from its
        journal: from the decision until every new VM serves.
        """
        pending = []
        for t0, flavor, ordinals, joined in self.joining:
            slots = [sim.slot_of.get(k) for k in ordinals]
            if joined is None and all(s is not None and sim.state[s] == SERVING
                                      for s in slots):
                joined = sim.t - t0
            if joined is not None and not sim.in_flight:
                self.joins.record(flavor, joined, sim.t - t0)
            elif any(s is not None for s in slots):
                pending.append((t0, flavor, ordinals, joined))
        self.joining = pending

    def _planned(self, fc, steps: int | None = None) -> float:
        """The peak the policy plans on (``plan_on``): the forecast's or
        its upper quantile, within its first ``steps`` steps (all).
        """
        if self.policy.plan_on == 'quantile' and fc.upper:
            return max(fc.upper[:steps])
        return max((fc.peak or fc.values)[:steps])

    def _estimator(self, sim: SimCluster) -> planning.Estimator | None:
        """What answers each VM's capacity in the planning loop: None for
        the capacity models, as in the service.
        """
        return None

    def _forecast(self, sim: SimCluster, horizon_s: float) -> tuple[dict[str, float], str]:
        if self.predict and sim.cfg.forecast_at == 'grid':
            return self._grid_forecast(sim, horizon_s)
        horizon = planning.forecast_steps(horizon_s, self.policy.control_period_s)
        reads, writes = sim.period_reads, sim.period_writes
        if not self.predict or not reads:
            return {}, 'current'
        if self.series == 'total':
            # one series (reads + writes), split by the last period's read share
            hist = [r + w for r, w in zip(reads[-600:], writes[-600:])]
            fc = self.ensemble.predict('total', hist, horizon=horizon)
            total = self._planned(fc)
            share = reads[-1] / hist[-1] if hist[-1] > 0 else 0.5
            return ({'reads_per_s': total * share, 'writes_per_s': total * (1 - share)},
                    fc.chosen or '-')
        out, chosen = {}, []
        for key, hist in (('reads_per_s', reads), ('writes_per_s', writes)):
            fc = self.ensemble.predict(key, hist[-600:], horizon=horizon)
            out[key] = self._planned(fc)
            chosen.append(fc.chosen or '-')
        return out, '/'.join(chosen)

    def _grid_forecast(self, sim: SimCluster, horizon_s: float
                       ) -> tuple[dict[str, float], str]:
        """The forecast as the service's predictor makes it
        (:data:`FORECAST_AT` ``grid``): of the total load, split by the
        newest mean's read share.
        """
        point = sim.minute - sim.minute % self.every
        if self.grid_at != point:
            totals, minute_reads = list(self.minute_total), list(self.minute_reads)
            # the minutes observed up to one minute before the grid point
            upto = len(totals) - 1 - (sim.minute - point)
            means = grid_means(totals, upto, self.every)
            if means:
                fc = self.ensemble.predict('total', means[-600:], horizon=GRID_STEPS)
                total = float(sum(totals[upto - self.every:upto]))
                reads = float(sum(minute_reads[upto - self.every:upto]))
                self.grid_forecast = (fc, reads / total if total > 0 else 0.5)
                self.grid_at = point
        if self.grid_forecast is None:
            return {}, 'current'
        fc, share = self.grid_forecast
        # its first point began where its newest mean ended, a minute
        # before the grid point
        elapsed_s = (sim.minute - self.grid_at + 1) * sim.trace.step_s
        total = self._planned(fc, planning.forecast_steps(
            horizon_s, self.every * sim.trace.step_s, elapsed_s))
        return ({'reads_per_s': total * share, 'writes_per_s': total * (1 - share)},
                fc.chosen or '-')

    def _state(self, sim: SimCluster, slots: np.ndarray, ids: list[str],
               flavors: list[str], in_band: list[str]) -> dec.ClusterState:
        interf = sim.interference_index(slots)
        nodes = [dec.NodeInfo(n, f, bool(sim.seed_flag[s]), float(i))
                 for n, f, s, i in zip(ids, flavors, slots, interf)]
        return dec.ClusterState(nodes, sim.in_flight, sim.last_action_done,
                                self.started_at, in_warning_band=in_band,
                                last_action_kind=sim.actions[-1].kind if sim.actions else None,
                                last_grown_at=next((a.t for a in reversed(sim.actions)
                                                    if a.kind == 'scale_out'), 0.0),
                                growing=self._growing(sim), shrinking=self._shrinking(sim))

    @staticmethod
    def _shrinking(sim: SimCluster) -> dec.Shrinking | None:
        """The scale-in in flight while it has VMs it has not begun to
        remove (only with removal slots: else they all leave at once).
        """
        if not (sim.in_flight and sim.actions and sim.actions[-1].kind == 'scale_in'):
            return None
        pending = sim.pending_removals()
        if not pending:
            return None
        return dec.Shrinking('sim-%d' % (len(sim.actions) - 1), [str(k) for k in pending])

    @staticmethod
    def _growing(sim: SimCluster) -> dec.Growing | None:
        """The scale-out in flight while it still has VMs to bring in, as
        the actuator sees an action still creating its servers.
        """
        if not (sim.in_flight and sim.actions and sim.actions[-1].kind == 'scale_out'):
            return None
        adding = sim.count(JOINING)
        if not adding:
            return None
        return dec.Growing('sim-%d' % (len(sim.actions) - 1),
                           sim.actions[-1].flavor or sim.flavors[0].name, adding,
                           len(sim.queued_ordinals()))

    def control(self, sim):
        self._pick_probes(sim)
        self.policy = margin.adapted(self.base_policy, self.violations.weight(sim.t))
        slots = sim.serving_slots()
        if not len(slots):
            return None
        ids = [str(int(k)) for k in sim.ordinal[slots]]
        flavors = [sim.flavors[i].name for i in sim.flavor[slots]]
        flavor_of = dict(zip(ids, flavors))
        size = float(sim.trace.size[sim.minute - 1])
        a = guard_mod.assess(self.policy, list(self.rounds))
        # the guard, every monitor interval, on the load measured now
        interf = sim.interference_index(slots).tolist()
        now_load = {n: {'reads_per_s': r, 'writes_per_s': w, 'read_bytes_mean': size,
                        'write_bytes_mean': size, INTERFERENCE: i}
                    for n, r, w, i in zip(ids, sim.obs_reads[slots].tolist(),
                                          sim.obs_writes[slots].tolist(), interf)}
        state = self._state(sim, slots, ids, flavors, [])
        measured = self.rounds[0].p99 if self.rounds else {}
        now_estimates = (planning.guard_estimates(self.policy, self.registry, now_load,
                                                  flavor_of, measured)
                         if guard_mod.needs_estimates(self.policy, a) else {})
        a = guard_mod.evaluate(self.policy, state, list(self.rounds), now_estimates,
                               sim.t, self.last_guard_level)
        if a.decision is not None and a.decision.acts:
            self.last_guard_level = a.level
            return self._act(sim, a.decision)
        # ... and as soon as an action ended, rather than at the next period
        ended = (sim.last_action_done is not None
                 and sim.last_action_done > self.last_plan_at)
        if sim.minute % self.every and not (ended and not sim.in_flight):
            return None
        self.last_plan_at = sim.t
        # the planning loop, every control period
        m = sim.period_means()
        current = {n: {'reads_per_s': r, 'writes_per_s': w, 'read_bytes_mean': size,
                       'write_bytes_mean': size, INTERFERENCE: i}
                   for n, r, w, i in zip(ids, m['reads'].tolist(), m['writes'].tolist(),
                                         interf)}
        join_s = self.joins.join_time(None, JOIN_DEFAULT_S)
        busy_s = self.joins.busy_time(None, join_s)
        horizon_s = planning.horizon_s(self.policy, join_s, busy_s)
        peak, chosen = self._forecast(sim, horizon_s)
        growth = planning.trend_growth(list(self.load_points), sim.t,
                                       self.policy.trend_window_s, join_s,
                                       self.policy.trend_max_growth)
        state = self._state(sim, slots, ids, flavors,
                            a.held if self.policy.guard else [])
        d = planning.plan(self.policy, state, current, peak, self.registry, sim.t,
                          flavor_of, inputs={'forecaster': chosen}, measured=measured,
                          red_step=guard_mod.red_step(self.policy, state, now_estimates, a),
                          growth=growth, held=planning.held_load(
                              list(self.load_points), sim.t, self.policy.scale_in_hold_s),
                          estimator=self._estimator(sim))
        return self._act(sim, d)

    def _act(self, sim: SimCluster, d: dec.Decision) -> Action | None:
        self.decisions[(d.trigger, d.blocked_by or d.kind)] += 1
        if d.kind == dec.SCALE_OUT:
            first = sim.next_ordinal
            added = list(range(first, first + d.count))
            if d.top_up_of and self.joining:
                # one action, as the journal has it: its join time runs from
                # its decision until its last VM, the top-up's too, serves
                t0, flavor, ordinals, _ = self.joining[-1]
                self.joining[-1] = (t0, flavor, ordinals + added, None)
            else:
                self.joining.append((sim.t, d.flavor, added, None))
            return Action(add=d.count, flavor=d.flavor, reason=d.reason,
                          defer_cleanup=self.policy.cleanup == 'before_removal')
        if d.kind == dec.SCALE_IN:
            return Action(remove=[int(n) for n in d.remove_nodes], reason=d.reason)
        if d.kind == dec.TRIM and d.keep_nodes:
            return Action(keep=[int(n) for n in d.keep_nodes], reason=d.reason)
        if d.kind == dec.TRIM:
            # the VMs it drops no longer count in the join being clocked
            dropped = set(sim.queued_ordinals()[:d.count])
            self.joining = [(t0, flavor, [k for k in ordinals if k not in dropped],
                             joined) for t0, flavor, ordinals, joined in self.joining]
            return Action(trim=d.count, reason=d.reason)
        return None

    def describe(self) -> str:
        p = self.base_policy
        extra = ''.join(', %s=%s' % (k, getattr(p, k)) for k in sorted(self.options))
        return ('%s: alpha=%g beta=%g headroom=%g cool-down %.0f s, guard %s '
                '(band %g of the SLO, %d interval(s), step %g)%s%s%s; capacity '
                'model monotone=%s'
                % (self.name, p.alpha, p.beta, p.headroom, p.cooldown_s,
                   'on' if p.guard else 'off', p.guard_warning, p.guard_intervals,
                   p.guard_step, extra, ', prior' if self.prior else '',
                   ', forecast (%s)' % self.ensemble_kwargs.get('mode', DEFAULT_MODE)
                   if self.predict else '', self.params.monotone))


def prior_teacher(params: ModelParams, options: dict[str, Any], name: str) -> Elastman:
    """The other cluster a flavour's prior comes from (:mod:`priors`): it
    learnt without prediction and without a prior of its own.
    """
    return Elastman(predict=False, options=options, params=params, prior=False, name=name)


class QuantileLevel(Elastman):
    """elastman planning on its forecasts' upper quantile with no headroom
    above it: the bound's level (``[predictor]quantile``) is the margin, and
    the knob a sweep moves.
    """

    knob = 'quantile'
    sweep = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)

    def __init__(self, **kwargs: Any) -> None:
        options = dict(kwargs.pop('options', None) or {}, plan_on='quantile',
                       headroom=0.0)
        super().__init__(predict=True, options=options, **kwargs)

    def knob_value(self) -> float | None:
        return float(self.ensemble_kwargs.get('quantile', intervals.LEVEL))

    def set_knob(self, value: float) -> None:
        self.ensemble_kwargs['quantile'] = float(value)


class Foresight(Elastman):
    """elastman whose planning loop is told the load's true future instead
    of a forecast: the highest control-period mean of the load the cluster
    will serve (client reads, and writes times the replication factor)
    within the planning horizon, from the next minute on. Everything else,
    the guard, the capacity model and the headroom included, is
    ``elastman``'s, so the distance between the two is what the forecast
    costs, and the distance from this policy to the oracle is what the
    controller and its model cost with a perfect forecast.
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault('name', 'elastman-foresight')
        # no forecaster runs: the trace is the forecast
        super().__init__(predict=False, **kwargs)

    def _forecast(self, sim: SimCluster, horizon_s: float) -> tuple[dict[str, float], str]:
        return future_peak(sim, horizon_s, self.every), 'foresight'

    def describe(self) -> str:
        return super().describe().replace(
            '; capacity model', ', the load\'s true future instead of a forecast; '
            'capacity model')


class TrueCapacity(Elastman):
    """``elastman`` whose planning loop is told every VM's true capacity for
    its planned workload, noise aside (the simulator's latency law,
    :func:`true_capacities`), instead of its capacity model's estimate; it
    still plans on its own forecast. The guard still sizes its steps on the
    models. The distance from ``elastman`` to it is what the capacity model
    costs the service as it runs.
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault('name', 'elastman-true-capacity')
        super().__init__(**kwargs)

    def _estimator(self, sim: SimCluster) -> planning.Estimator:
        return true_capacities(sim)

    def describe(self) -> str:
        return super().describe().replace(
            '; capacity model', ', every VM\'s true capacity instead of its model\'s; '
            'capacity model', 1)


class ExactCapacity(Foresight, TrueCapacity):
    """``elastman-foresight`` whose planning loop is also told every VM's
    true capacity (:class:`TrueCapacity`). What remains between this
    policy and ``serial-oracle`` is the planning loop's rules.
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault('name', 'elastman-exact')
        super().__init__(**kwargs)


def true_capacity(hw: Any, factor: float, reads: float, writes: float,
                  size_bytes: float) -> float:
    """Load (requests/s) along the ray of ``reads`` and ``writes`` at which
    a VM of capacity factor ``factor`` on the hardware ``hw`` reaches a
    utilisation of 1 (the simulator's latency law meets the SLO there);
    infinite for a ray without load.
    """
    per_unit = reads / hw.read_cap + writes / hw.write_cap
    if not per_unit > 0:
        return math.inf
    return max(0.0, factor - size_bytes / hw.size_cap) / per_unit * (reads + writes)


def true_capacities(sim: SimCluster) -> planning.Estimator:
    """Each VM's capacity for a workload as the simulator's latency law
    has it: the load along the workload's ray at which the VM's
    utilisation, with its capacity factor now (interference and streaming
    included), reaches 1 and its p99 the SLO, without noise.
    """
    hw = sim.cfg.hardware

    def estimate(registry: Any, per_vm: Any, flavors: Any) -> dict[str, Any]:
        out = {}
        for node, w in per_vm.items():
            slot = sim.slot_of.get(int(node))
            if slot is None:
                continue
            f = float(sim.true_factor(np.array([slot]))[0])
            reads = float(w.get('reads_per_s') or 0.0)
            writes = float(w.get('writes_per_s') or 0.0)
            size_bytes = float(w.get('read_bytes_mean') or 0.0)
            load = reads + writes
            capacity = true_capacity(hw, f, reads, writes, size_bytes)
            scale = (capacity / load if load > 0 and math.isfinite(capacity)
                     else math.inf)
            out[node] = cap_mod.CapacityEstimate(
                capacity=capacity, load=load, scale=scale,
                point=[reads, writes, size_bytes / hw.size_cap], distance=math.nan,
                bound=cap_mod.EXACT, model_kind='svm', source='exact')
        return out
    return estimate


def future_peak(sim: SimCluster, horizon_s: float, every: int) -> dict[str, float]:
    """The highest mean of ``every`` consecutive minutes of the load the
    cluster will serve within ``horizon_s`` from the next minute, split into
    reads and writes by that mean's read share (empty past the trace's end).
    """
    first = sim.minute
    minutes = max(every, int(math.ceil(horizon_s / sim.trace.step_s)))
    rf = sim.cfg.hardware.replication_factor
    reads = np.asarray(sim.trace.reads[first:first + minutes], dtype=float)
    writes = np.asarray(sim.trace.writes[first:first + minutes], dtype=float) * rf
    if not len(reads):
        return {}
    span = min(every, len(reads))
    kernel = np.ones(span) / span
    mean_reads = np.convolve(reads, kernel, mode='valid')
    mean_writes = np.convolve(writes, kernel, mode='valid')
    i = int(np.argmax(mean_reads + mean_writes))
    return {'reads_per_s': float(mean_reads[i]), 'writes_per_s': float(mean_writes[i])}
