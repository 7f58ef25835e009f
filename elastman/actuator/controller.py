"""One control period of one cluster: gather the inputs, decide, record.

Inputs come from the store, where the other workers leave them: the latest
forecast of the cluster's read and write intensity (predictor), each node's
latest sample (monitor), and the capacity models (trainer state). The
decision itself is :func:`elastman.actuator.decision.decide`; every period's
decision, with its inputs and reason, is stored as a decision record.
"""
from __future__ import annotations

import datetime
import time
from typing import Any

from oslo_log import log as logging

from elastman.actuator import decision as decision_mod
from elastman.actuator import executor as executor_mod
from elastman.actuator import policy as policy_mod
from elastman.actuator import workload
from elastman.common import exception
from elastman.common import timestamps
from elastman.store import model_state as persistence

LOG = logging.getLogger(__name__)

FORECAST_METRICS = ('reads_per_s', 'writes_per_s')


class Controller:
    """Decides for one cluster per control period."""

    def __init__(self, conf, store) -> None:
        self.conf = conf
        self.store = store

    def _forecast(self, cluster_id, now: float,
                  horizon_s: float) -> dict[str, Any]:
        """The highest predicted value of each metric within the horizon."""
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
            steps = max(1, int(round(horizon_s / max(row['step_s'], 1))))
            values = list(row['predicted'])[:steps] or [0.0]
            predicted[metric] = max(values)
            info[metric] = {'value': predicted[metric],
                            'forecaster': row['forecaster'],
                            'weights': dict(row['weights'] or {}),
                            'made_at': row['ts'].isoformat()}
        return {'predicted': predicted, 'forecast': info}

    def _interference(self, nodes: list[dict], now: float) -> dict[str, float]:
        """Each node's interference index from the latest report of its
        compute host's agent (nodes without a recent report are left out)."""
        reports: dict[str, dict] = {}
        found = {}
        for node in nodes:
            host, server = node.get('host'), node.get('server_id')
            if not host or not server:
                continue
            if host not in reports:
                page = self.store.hosts.reports(host, limit=1)
                latest = page[0] if page else None
                fresh = latest is not None and (
                    now - timestamps.epoch(latest['ts'])
                    <= self.conf.actuator.interference_max_age)
                reports[host] = latest['vms'] if fresh else {}
            vm = reports[host].get(server)
            if isinstance(vm, dict) and vm.get('interference_index') is not None:
                found[node['node_id']] = float(vm['interference_index'])
        return found

    def decide(self, cluster: dict, now: float | None = None,
               record: bool = True) -> decision_mod.Decision:
        now = time.time() if now is None else now
        cluster_id = cluster['id']
        policy = policy_mod.ScalingPolicy.for_cluster(cluster)
        nodes = self.store.nodes.list(cluster_id)
        serving = executor_mod.serving_nodes(nodes)
        unfinished = self.store.actions.unfinished(cluster_id)
        finished = [a for a in self.store.actions.list(cluster_id, limit=20)
                    if a['state'] == 'SUCCEEDED']
        last_action_at = timestamps.epoch(finished[0]['updated_at']) if finished \
            else None

        current = {}
        for node in serving:
            rows = self.store.samples.for_node(cluster_id, node['node_id'],
                                               limit=1)
            if rows and rows[0].get('up') is not False:
                current[node['node_id']] = {
                    k: v for k, v in rows[0].items()
                    if k in workload.LOAD_KEYS or k.endswith('_bytes_mean')}
        horizon = policy.control_period_s + self.conf.actuator.join_timeout
        forecast = self._forecast(cluster_id, now, horizon)
        observed = {k: sum(c.get(k) or 0.0 for c in current.values())
                    for k in workload.LOAD_KEYS}
        # be ready for the larger of the forecast peak and what is served
        # now: a forecast that lags a rising load must not remove a node
        predicted = {k: max(forecast['predicted'].get(k, 0.0), observed[k])
                     for k in workload.LOAD_KEYS} \
            if forecast['predicted'] else observed
        per_vm = workload.split_workload(predicted, current)
        registry = persistence.load_state(self.store, str(cluster_id))
        estimates = (workload.estimate_capacities(registry, per_vm)
                     if registry is not None else {})
        interference = self._interference(serving, now)
        state = decision_mod.ClusterState(
            nodes=[decision_mod.NodeInfo(n['node_id'], n.get('flavor') or '',
                                         bool(n.get('seed')),
                                         interference.get(n['node_id'], 0.0),
                                         removable=executor_mod.removable(n))
                   for n in serving],
            action_in_flight=bool(unfinished), last_action_at=last_action_at,
            started_at=timestamps.epoch(cluster.get('created_at')))
        inputs = {'forecast': forecast['forecast'],
                  'predicted_cluster': predicted,
                  'observed_cluster': observed,
                  'forecast_used': bool(forecast['predicted']),
                  'per_vm_workload': per_vm,
                  'interference': interference,
                  'model_versions': registry.versions() if registry else {},
                  'policy': policy.to_dict()}
        result = decision_mod.decide(policy, state, estimates, now, inputs)
        if record:
            self.store.actions.record_decision(
                cluster_id, datetime.datetime.fromtimestamp(
                    now, datetime.timezone.utc), result.kind,
                result.to_dict())
        LOG.info('cluster %s: %s', cluster_id, result.reason)
        return result

    def action_for(self, cluster: dict,
                   result: decision_mod.Decision) -> dict | None:
        """Journal the action a decision calls for (None if it does not)."""
        if not result.acts:
            return None
        if result.kind == decision_mod.SCALE_OUT:
            params = {'flavor': result.flavor, 'count': result.count}
        else:
            params = {'nodes': list(result.remove_nodes)}
        params['decided_at'] = result.at
        return self.store.actions.create(cluster['id'], result.kind, params,
                                         step='requested')
