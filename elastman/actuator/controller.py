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
"""One cluster's decisions, from the store: the planning loop every control
period and the latency guard every monitor interval.

The inputs are where the other workers leave them: each node's newest
samples (monitor), the newest forecast of the cluster's read and write
intensity (predictor), the capacity summaries (each VM's and flavour's model
and version, never the cells: trainer), the host agents' interference
reports and the action journal. The decisions themselves are
:func:`elastman.actuator.planning.plan` and
:func:`elastman.actuator.guard.evaluate`, the same functions the simulator
runs; every decision is stored as a decision record with its inputs and
reason.
"""
from __future__ import annotations

import datetime
import time
from typing import Any, Callable
import uuid

from oslo_log import log as logging

from elastman.actuator import decision as decision_mod
from elastman.actuator import guard as guard_mod
from elastman.actuator import margin
from elastman.actuator import members
from elastman.actuator import planning
from elastman.actuator import policy as policy_mod
from elastman.actuator import workload
from elastman.common import exception
from elastman.common import timestamps
from elastman.store import actions as actions_store
from elastman.store import model_state
from elastman.store import nodes as nodes_store

LOG = logging.getLogger(__name__)

#: Node states of a dead node the healer replaces: they count towards the
#: policy's floor (not towards the capacity).
HEALING = (nodes_store.DEAD, nodes_store.REPLACING)

FORECAST_METRICS = workload.LOAD_KEYS
#: SLO metrics the monitor also measures for the cluster as a whole (its
#: nodes' histograms merged), in ``cluster_workload``.
CLUSTER_METRICS = ('read_p99_ms', 'read_with_queue_p99_ms')


def _sole(unfinished: list[dict], kind: str, steps: tuple[str, ...]) -> dict | None:
    """The one action in flight when it is of ``kind`` at one of ``steps``."""
    if len(unfinished) != 1:
        return None
    action = unfinished[0]
    return action if action['kind'] == kind and action['step'] in steps else None


def _sample_load(row: dict) -> dict[str, Any]:
    """The keys of a stored sample the decision reads: load, sizes, the SLO
    metrics (the monitor keeps the queue-inclusive one in ``extra``) and the
    capacity model's interference index (0 when the node's host reported
    none).
    """
    out = {k: v for k, v in row.items()
           if k in workload.LOAD_KEYS or k.endswith('_bytes_mean')
           or k.endswith('_p99_ms')}
    extra = row.get('extra') or {}
    out.update({k: v for k, v in extra.items() if k.endswith('_p99_ms')})
    out['interference_index'] = extra.get('interference_index', 0.0)
    return out


class Controller:
    """Decides for one cluster: :meth:`decide` (planning) and :meth:`guard`."""

    def __init__(self, conf, store) -> None:
        self.conf = conf
        self.store = store
        #: per cluster, its violated minutes as the headroom remembers them
        #: and the newest monitor round read into them
        self._violations: dict[str, tuple[margin.ViolationMemory, float | None]] = {}

    def policy_of(self, cluster: dict) -> policy_mod.ScalingPolicy:
        """The cluster's policy; the SLO it does not set is the one the
        trainer's models use ([trainer] slo_metric, slo_threshold_ms).
        """
        t = self.conf.trainer
        return policy_mod.ScalingPolicy.for_cluster(cluster, defaults={
            'slo_metric': t.slo_metric, 'slo_threshold_ms': t.slo_threshold_ms})

    # -- inputs ------------------------------------------------------------------
    def _forecast(self, cluster_id, now: float,
                  horizon_s: float, plan_on: str = 'point') -> dict[str, Any]:
        """The highest predicted value of each metric within the horizon:
        the forecast's peak (the highest value of its point path in a row
        without one), or its upper quantile with ``plan_on = 'quantile'``
        (the peak when the row has no quantile).
        """
        predicted, info = {}, {}
        for metric in FORECAST_METRICS:
            try:
                row = self.store.forecasts.latest(cluster_id, metric)
            except exception.NotFound:
                continue
            age = now - timestamps.epoch(row['ts'])
            if age > self.conf.actuator.forecast_max_age:
                info[metric] = {'ignored': 'forecast is %.0f s old' % age}
                continue
            # the first point began at the end of the newest bucket the
            # forecast had (rows without it: when it was made)
            starts = timestamps.epoch(row.get('starts_at') or row['ts'])
            steps = planning.forecast_steps(horizon_s, row['step_s'],
                                            now - starts)
            point = max(list(row.get('peak') or [])[:steps]
                        or list(row['predicted'])[:steps] or [0.0])
            upper = list(row.get('upper') or [])[:steps]
            used = 'quantile' if plan_on == 'quantile' and upper else 'point'
            predicted[metric] = max(upper) if used == 'quantile' else point
            info[metric] = {'value': predicted[metric], 'used': used,
                            'point': point,
                            'upper': max(upper) if upper else None,
                            'quantile': row.get('quantile'),
                            'horizon_s': horizon_s, 'steps': steps,
                            'forecaster': row['forecaster'],
                            'weights': dict(row['weights'] or {}),
                            'made_at': row['ts'].isoformat()}
        return {'predicted': predicted, 'forecast': info}

    def _interference(self, nodes: list[dict], now: float) -> dict[str, float]:
        """Each node's interference index from the latest report of its
        compute host's agent (nodes without a recent report are left out).
        """
        return self.store.hosts.interference(
            nodes, now, self.conf.actuator.interference_max_age)

    def _recent(self, cluster_id, serving: list[dict], now: float,
                rounds: int) -> dict[str, list[dict]]:
        """Each serving node's newest fresh samples, newest first."""
        fresh_s = self.conf.actuator.sample_max_age
        out = {}
        # two rounds more than asked: a node that missed some still has a
        # reading to carry into them (:meth:`_rounds`)
        newest = self.store.samples.newest(
            cluster_id, [n['node_id'] for n in serving], rounds + 2)
        for node_id, rows in newest.items():
            rows = [r for r in rows if r.get('up') is not False
                    and now - timestamps.epoch(r['ts']) <= fresh_s]
            if rows:
                out[node_id] = rows
        return out

    def _joins(self, cluster_id) -> planning.JoinClock:
        """How long this cluster's scale-outs took, from the journal."""
        clock = planning.JoinClock()
        for a in self.store.actions.list(cluster_id, limit=50):
            result = a.get('result') or {}
            started, joined = result.get('started_at'), result.get('joined_at')
            if a['kind'] == 'scale_out' and started and joined:
                flavor = (a.get('params') or {}).get('flavor') or ''
                done = (timestamps.epoch(a['updated_at']) - float(started)
                        if a['state'] == 'SUCCEEDED' else None)
                clock.record(flavor, float(joined) - float(started), done)
        return clock

    def _state(self, cluster: dict, serving: list[dict], now: float,
               interference: dict[str, float],
               in_band: list[str], healing: int = 0) -> decision_mod.ClusterState:
        cluster_id = cluster['id']
        unfinished = self.store.actions.unfinished(cluster_id)
        recent = self.store.actions.list(cluster_id, limit=20)
        finished = [a for a in recent if a['state'] == 'SUCCEEDED']
        scale_outs = [timestamps.epoch(a['created_at']) for a in recent
                      if a['kind'] == 'scale_out'
                      and a['state'] not in ('FAILED', 'ROLLED_BACK')]
        last_action_at = timestamps.epoch(finished[0]['updated_at']) \
            if finished else None
        last_kind = finished[0]['kind'] if finished else None
        created_at = timestamps.epoch(cluster.get('created_at'))
        return decision_mod.ClusterState(
            nodes=[decision_mod.NodeInfo(n['node_id'], n.get('flavor') or '',
                                         bool(n.get('seed')),
                                         interference.get(n['node_id'], 0.0),
                                         removable=members.removable(n))
                   for n in serving],
            action_in_flight=bool(unfinished), last_action_at=last_action_at,
            started_at=created_at,
            in_warning_band=in_band, last_action_kind=last_kind,
            last_grown_at=max(scale_outs, default=created_at),
            healing=healing, growing=self._growing(unfinished, serving),
            shrinking=self._shrinking(unfinished, serving))

    @staticmethod
    def _growing(unfinished: list[dict],
                 serving: list[dict]) -> decision_mod.Growing | None:
        """The action in flight when it is a scale-out that still creates
        its servers, with how many of them do not serve yet.
        """
        action = _sole(unfinished, 'scale_out', actions_store.GROWABLE_STEPS)
        if action is None:
            return None
        params, result = action.get('params') or {}, action.get('result') or {}
        up = {n['node_id'] for n in serving}
        servers = result.get('servers') or []
        joined = sum(1 for s in servers if s in up)
        wanted = int(params.get('count', 0)) - int(result.get('declined', 0))
        return decision_mod.Growing(str(action['id']), params.get('flavor') or '',
                                    max(0, wanted - joined),
                                    max(0, wanted - len(servers)))

    @staticmethod
    def _shrinking(unfinished: list[dict],
                   serving: list[dict]) -> decision_mod.Shrinking | None:
        """The action in flight when it is a scale-in with serving nodes it
        has not begun to remove.
        """
        action = _sole(unfinished, 'scale_in', actions_store.SHRINKABLE_STEPS)
        if action is None:
            return None
        up = {n['node_id'] for n in serving}
        pending = [n for n in actions_store.not_begun(action) if n in up]
        return decision_mod.Shrinking(str(action['id']), pending) if pending else None

    def _rounds(self, policy: policy_mod.ScalingPolicy,
                recent: dict[str, list[dict]],
                cluster: dict[Any, float] | None = None) -> list[guard_mod.Round]:
        """The guard's view: per monitor round (newest first), each node's
        measured SLO metric and the cluster's own (``cluster``: by round).

        A node that did not answer a round keeps its previous fresh reading
        in it: a saturated node's reads time out first, and a round that
        lost its hottest nodes must not read as a cooler one. A node whose
        latency source missed the round while its CQL probes were answered
        (a node throttled far below its load stops answering JMX first)
        reads the slowest probe, where that is higher than its previous
        reading: the probes waited where the clients wait.
        """
        by_ts: dict[Any, dict[str, float]] = {}
        probed: dict[Any, dict[str, float]] = {}
        for node, rows in recent.items():
            for row in rows:
                value = _sample_load(row).get(policy.slo_metric)
                probe = (row.get('extra') or {}).get('probe_max_ms')
                if value is not None:
                    by_ts.setdefault(row['ts'], {})[node] = float(value)
                elif probe is not None and row.get('up', True):
                    probed.setdefault(row['ts'], {})[node] = float(probe)
                    by_ts.setdefault(row['ts'], {})
        cluster = cluster or {}
        for ts in cluster:
            by_ts.setdefault(ts, {})
        last: dict[str, float] = {}
        for ts in sorted(by_ts):
            p99 = by_ts[ts]
            for node, probe in probed.get(ts, {}).items():
                p99[node] = max(probe, last.get(node, probe))
            last.update(p99)
            p99.update({n: v for n, v in last.items() if n not in p99})
        return [guard_mod.Round(timestamps.epoch(ts), p99, cluster.get(ts))
                for ts, p99 in sorted(by_ts.items(), reverse=True)]

    def _cluster_rounds(self, cluster_id, now: float, span_s: float) -> list[dict]:
        """The cluster's monitor rounds (``cluster_workload``) of the last
        ``span_s``, oldest first.
        """
        since = datetime.datetime.fromtimestamp(now - span_s, datetime.timezone.utc)
        return self.store.samples.cluster_workload(cluster_id, since)

    def _adapted(self, cluster_id, policy: policy_mod.ScalingPolicy, now: float
                 ) -> tuple[policy_mod.ScalingPolicy, float]:
        """``policy`` with the headroom the cluster's violated minutes ask
        for (:mod:`elastman.actuator.margin`), and their decayed sum: the
        rounds of its own SLO metric since the last call are added to what
        it remembers, so a round is read once (all of the memory after a
        restart).
        """
        if not policy.headroom_per_violation:
            return policy, 0.0
        key = str(cluster_id)
        memory, seen = self._violations.get(key, (None, None))
        if memory is None or memory.tau_s != policy.headroom_memory_s:
            memory, seen = margin.ViolationMemory(policy.headroom_memory_s), None
        span = margin.memory_s(policy) if seen is None else max(0.0, now - seen)
        rounds = [(timestamps.epoch(row['ts']), row.get(policy.slo_metric))
                  for row in self._cluster_rounds(cluster_id, now, span)]
        for at, minutes in margin.violated_minutes(
                rounds, policy.slo_threshold_ms,
                self.conf.monitor.sampling_interval, after=seen):
            memory.add(at, minutes)
        if rounds:
            seen = rounds[-1][0] if seen is None else max(seen, rounds[-1][0])
        self._violations[key] = (memory, seen)
        weight = memory.weight(now)
        return margin.adapted(policy, weight), weight

    def _cluster_metric(self, policy: policy_mod.ScalingPolicy, rows: list[dict],
                        now: float) -> dict[Any, float]:
        """The cluster's own SLO metric per fresh monitor round, where the
        monitor measures it for the whole cluster (:data:`CLUSTER_METRICS`).
        """
        if policy.slo_metric not in CLUSTER_METRICS:
            return {}
        fresh_s = self.conf.actuator.sample_max_age
        return {row['ts']: float(row[policy.slo_metric]) for row in rows
                if row.get(policy.slo_metric) is not None
                and now - timestamps.epoch(row['ts']) <= fresh_s}

    @staticmethod
    def _load_points(rows: list[dict]) -> list[tuple[float, float]]:
        """The cluster's total load per monitor round, from rounds in which
        every node was sampled (a round that missed one would read as a
        drop).
        """
        return [(timestamps.epoch(row['ts']),
                 sum(float(row.get(k) or 0.0) for k in workload.LOAD_KEYS))
                for row in rows if row.get('nodes_up') == row.get('nodes_total')]

    @staticmethod
    def _measured(policy: policy_mod.ScalingPolicy,
                  recent: dict[str, list[dict]]) -> dict[str, float]:
        """Each node's newest measured SLO metric."""
        out = {}
        for node, rows in recent.items():
            value = _sample_load(rows[0]).get(policy.slo_metric)
            if value is not None:
                out[node] = float(value)
        return out

    def _record(self, cluster_id, result: decision_mod.Decision) -> None:
        self.store.actions.record_decision(
            cluster_id, datetime.datetime.fromtimestamp(
                result.at, datetime.timezone.utc), result.kind,
            result.to_dict())

    # -- the planning loop -----------------------------------------------------
    def decide(self, cluster: dict, now: float | None = None,
               record: bool = True) -> decision_mod.Decision:
        now = time.time() if now is None else now
        cluster_id = cluster['id']
        base = self.policy_of(cluster)
        policy, violated = self._adapted(cluster_id, base, now)
        nodes = self.store.nodes.list(cluster_id)
        serving = members.serving_nodes(nodes)
        recent = self._recent(cluster_id, serving, now, policy.guard_intervals)
        current = {n: _sample_load(rows[0]) for n, rows in recent.items()}
        rows = self._cluster_rounds(cluster_id, now, max(
            self.conf.actuator.sample_max_age, policy.trend_window_s,
            policy.scale_in_hold_s))
        assessment = guard_mod.assess(policy, self._rounds(
            policy, recent, self._cluster_metric(policy, rows, now)))
        clock = self._joins(cluster_id)
        join_s = clock.join_time(policy.default_flavor, self.conf.actuator.join_timeout)
        busy_s = clock.busy_time(policy.default_flavor, join_s)
        horizon = planning.horizon_s(policy, join_s, busy_s)
        forecast = self._forecast(cluster_id, now, horizon, policy.plan_on)
        points = self._load_points(rows)
        growth = planning.trend_growth(points, now, policy.trend_window_s,
                                       join_s, policy.trend_max_growth)
        registry = model_state.load_capacity(self.store, str(cluster_id))
        interference = self._interference(serving, now)
        healing = sum(1 for n in nodes if n.get('state') in HEALING) \
            if policy.auto_heal else 0
        state = self._state(cluster, serving, now, interference,
                            assessment.held if policy.guard else [], healing)
        flavors = {n['node_id']: n.get('flavor') or '' for n in serving}
        inputs = {'forecast': forecast['forecast'], 'horizon_s': horizon,
                  'join_s': join_s, 'busy_s': busy_s, 'interference': interference,
                  'guard': assessment.to_dict(),
                  'model_versions': registry.versions() if registry else {},
                  'policy': policy.to_dict(),
                  'headroom': {'policy': base.headroom, 'used': policy.headroom,
                               'violated_minutes': round(violated, 3)}}
        measured = self._measured(policy, recent)
        red_step = guard_mod.red_step(
            policy, state, planning.guard_estimates(policy, registry, current, flavors,
                                                    measured)
            if guard_mod.needs_estimates(policy, assessment) else {}, assessment)
        result = planning.plan(policy, state, current, forecast['predicted'],
                               registry, now, flavors, inputs, measured, red_step,
                               growth, planning.held_load(points, now,
                                                          policy.scale_in_hold_s))
        if record:
            self._record(cluster_id, result)
        LOG.info('cluster %s: %s', cluster_id, result.reason)
        return result

    # -- the latency guard -----------------------------------------------------
    def guard(self, cluster: dict, now: float | None = None,
              record: bool = True) -> decision_mod.Decision | None:
        """The guard's decision on the newest samples; None while the latency
        is green or the band has not lasted (nothing is recorded then).
        """
        now = time.time() if now is None else now
        cluster_id = cluster['id']
        policy = self.policy_of(cluster)
        if not policy.guard:
            return None
        policy, _ = self._adapted(cluster_id, policy, now)
        serving = members.serving_nodes(self.store.nodes.list(cluster_id))
        recent = self._recent(cluster_id, serving, now, policy.guard_intervals)
        rows = self._cluster_rounds(cluster_id, now, self.conf.actuator.sample_max_age)
        rounds = self._rounds(policy, recent, self._cluster_metric(policy, rows, now))
        current = {n: _sample_load(rows[0]) for n, rows in recent.items()}
        estimates: dict = {}
        if guard_mod.needs_estimates(policy, guard_mod.assess(policy, rounds)):
            registry = model_state.load_capacity(self.store, str(cluster_id))
            flavors = {n['node_id']: n.get('flavor') or '' for n in serving}
            estimates = planning.guard_estimates(policy, registry, current, flavors,
                                                 self._measured(policy, recent))
        state = self._state(cluster, serving, now, {}, [])
        assessment = guard_mod.evaluate(
            policy, state, rounds, estimates, now,
            last_level=self._last_guard_level(cluster_id),
            inputs={'observed_cluster': planning.observed_load(current),
                    'policy': policy.to_dict()})
        result = assessment.decision
        if result is None:
            return None
        if record:
            self._record(cluster_id, result)
        LOG.info('cluster %s: %s', cluster_id, result.reason)
        return result

    def newest_sample_at(self, cluster: dict) -> float | None:
        """When the monitor last sampled the cluster (the guard's clock)."""
        serving = members.serving_nodes(self.store.nodes.list(cluster['id']))
        rows = self.store.samples.newest(cluster['id'],
                                         [n['node_id'] for n in serving])
        return max((timestamps.epoch(r[0]['ts']) for r in rows.values()),
                   default=None)

    def _last_guard_level(self, cluster_id) -> float | None:
        """The severity at the guard's last scale-out, while its cool-down
        may still run.
        """
        for row in self.store.actions.decisions(cluster_id, limit=20):
            record = row.get('record') or {}
            if record.get('trigger') == 'guard' and row['action'] != 'none':
                return ((record.get('inputs') or {}).get('guard') or {}).get('level')
        return None

    def action_for(self, cluster: dict,
                   result: decision_mod.Decision) -> dict | None:
        """Journal the action a decision calls for (None if it does not); a
        top-up or a trim is written into the scale-out in flight, which is
        returned.
        """
        if not result.acts:
            return None
        if result.top_up_of:
            return self._resize(cluster, result, self.store.actions.top_up,
                                result.top_up_of, 'top-up')
        if result.trim_of and result.keep_nodes:
            nodes = list(result.keep_nodes)
            return self._resize(
                cluster, result,
                lambda cid, aid, count, record: self.store.actions.keep(
                    cid, aid, nodes, record),
                result.trim_of, 'trim',
                'the scale-in in flight had begun to remove those nodes or ended')
        if result.trim_of:
            return self._resize(cluster, result, self.store.actions.trim,
                                result.trim_of, 'trim')
        if result.kind == decision_mod.SCALE_OUT:
            params = {'flavor': result.flavor, 'count': result.count}
        else:
            params = {'nodes': list(result.remove_nodes)}
        params['decided_at'] = result.at
        params['trigger'] = result.trigger
        return self.store.actions.create(cluster['id'], result.kind, params,
                                         step='requested')

    def _resize(self, cluster: dict, result: decision_mod.Decision,
                write: Callable[..., dict | None], action_id: str,
                what: str, moved_on: str = 'the scale-out in flight stopped '
                'creating servers') -> dict | None:
        """Write a top-up or a trim into the action in flight (``write``:
        the journal's ``top_up``, ``trim`` or ``keep``), which is returned;
        when that action has moved on (``moved_on`` says how), the decision
        is recorded again as no action.
        """
        action = write(cluster['id'], uuid.UUID(action_id), result.count,
                       {'count': result.count, 'decided_at': result.at,
                        'trigger': result.trigger})
        if action is None:
            result.kind, result.blocked_by = decision_mod.NONE, 'in_flight'
            result.reason = ('no action: %s before its %s landed; wanted: %s'
                             % (moved_on, what, result.reason))
            self._record(cluster['id'], result)
        LOG.info('cluster %s: %s', cluster['id'], result.reason)
        return action
