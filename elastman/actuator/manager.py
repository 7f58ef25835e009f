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
"""elastman-actuator: decides each cluster's scaling every control period and
carries the actions out.

Work is partitioned by cluster with store leases: several actuators may run,
and each cluster is decided and acted on by exactly one of them at a time. An
action found unfinished in the journal (this actuator crashed, another one
held the lease, or the API journalled a request while no actuator ran) is
resumed before anything new is decided for that cluster.
"""
from __future__ import annotations

from concurrent import futures
import datetime
import threading
import time
import uuid

from oslo_log import log as logging
import oslo_messaging as messaging

from elastman.actuator import actionplan
from elastman.actuator import backoff
from elastman.actuator import controller as controller_mod
from elastman.actuator import decision as decision_mod
from elastman.actuator import executor as executor_mod
from elastman.actuator import healer
from elastman.actuator import hostevents
from elastman.actuator import policy as policy_mod
from elastman.actuator import steps as steps_mod
from elastman.common import exception
from elastman.common import rpc
from elastman.common import schedule
from elastman.compute import base as compute
from elastman.store import sharing

LOG = logging.getLogger(__name__)


class ActuatorManager(sharing.SharedManager):
    """RPC API 2.0: scale (the API casts it); listens to the host agents'
    ``hostagent.*`` notifications.
    """

    WORKER = 'actuator'
    target = messaging.Target(version='2.0')
    RPC_METHODS = ('scale',)

    def __init__(self, conf, store=None, transport=None,
                 driver: compute.ComputeDriver | None = None) -> None:
        super().__init__(conf, store)
        self.transport = transport
        self.driver = driver
        self.controller = controller_mod.Controller(conf, store)
        self._pool: futures.ThreadPoolExecutor | None = None
        self._running: dict[str, futures.Future] = {}
        self._last_decision: dict[str, float] = {}
        self._guarded: dict[str, float] = {}
        # clusters whose action ended since their last decision: they are
        # decided at once, not at the next control period
        self._ended: dict[str, bool] = {}
        self._lock = threading.Lock()

    @property
    def tick(self) -> float:
        return float(min(30, self.conf.actuator.control_period))

    @property
    def lease_ttl(self) -> int:
        return int(3 * self.tick) + 1

    @property
    def round_budget(self) -> float:
        return self.conf.actuator.round_budget * self.tick

    def start(self) -> None:
        super().start()
        if self.driver is None:
            self.driver = compute.load_driver(
                self.conf, self.conf.actuator.compute_driver)
        self.executor = executor_mod.ActionExecutor(
            self.conf, self.store, self.driver, holder=self.conf.host,
            lease_ttl=self.lease_ttl)
        self._pool = futures.ThreadPoolExecutor(
            self.conf.actuator.workers, thread_name_prefix='action')
        self._listener = None
        if self.transport is not None:
            self._listener = rpc.get_listener(
                self.conf, rpc.get_notification_transport(self.conf),
                [hostevents.HostEventsEndpoint(self.store, self.driver,
                                               self.conf)])
            self._listener.start()

    def stop(self) -> None:
        if getattr(self, '_listener', None) is not None:
            self._listener.stop()
            self._listener.wait()
        if self._pool is not None:
            # running actions finish their current step or are resumed by
            # the next actuator: the journal says where they were
            self._pool.shutdown(wait=False, cancel_futures=True)
        if self.driver is not None:
            self.driver.close()
        super().stop()

    def periodic_tasks(self):
        return [(self.control_round, self.tick)]

    def describe(self) -> str:
        return 'deciding and scaling with the %s compute driver' % (
            self.conf.actuator.compute_driver)

    # -- the control loop ------------------------------------------------------
    def control_round(self, now: float | None = None) -> None:
        """One round over this actuator's share of the clusters (leases); a
        cluster with an action in flight stays here until the action ends.
        """
        clusters = self.store.clusters.all()
        busy = [c['id'] for c in clusters if self._busy(str(c['id']))]
        self.each_cluster(clusters, self.mine(clusters, keep=busy),
                          lambda c: self.handle_cluster(c, now, leased=True),
                          'control period')

    def _busy(self, cluster_id: str) -> bool:
        with self._lock:
            running = self._running.get(cluster_id)
            return running is not None and not running.done()

    def handle_cluster(self, cluster: dict, now: float | None = None,
                       leased: bool = False) -> None:
        """Resume an unfinished action, heal a dead node, or decide when the period is due
        (``leased``: this actuator has just taken the cluster's lease).
        """
        now = time.time() if now is None else now
        cluster_id = str(cluster['id'])
        if not leased and not self.store.leases.acquire(
                steps_mod.lease_name(cluster_id), self.conf.host,
                self.lease_ttl):
            return
        if self._busy(cluster_id):
            self._amend_in_flight(cluster, now)
            return
        unfinished = sorted(self.store.actions.unfinished(cluster['id']),
                            key=lambda a: a['created_at'])
        if unfinished:
            self._submit(cluster_id, unfinished[0])
            return
        if cluster.get('state') == 'SCALING':
            # an actuator died between journalling an action's end and
            # updating the cluster: nothing is in flight any more
            self.store.clusters.update(cluster['id'], state='ACTIVE',
                                       status_reason='no action in progress')
        policy = self.controller.policy_of(cluster)
        heal = self._heal(cluster, policy, now)
        if heal is not None and heal.acts:
            return
        result = self._guard(cluster, policy, now)
        if result is None or not result.acts:
            # each cluster plans at its own phase of the control period, so
            # that clusters that came together do not all plan in one round
            period = policy.control_period_s
            ended = self._ended.pop(cluster_id, False)
            if not ended and not schedule.is_due(
                    now, self._last_decision.get(cluster_id), period,
                    schedule.phase_of(cluster_id, period)):
                return
            self._last_decision[cluster_id] = now
            result = self.controller.decide(cluster, now)
        if result is None:
            return
        self._amend(cluster, result, heal)
        action = self.controller.action_for(cluster, result)
        if action is not None:
            self._submit(cluster_id, action)

    def _guard(self, cluster: dict, policy: policy_mod.ScalingPolicy,
               now: float):
        """The latency guard, once per new monitor round of the cluster."""
        if not policy.guard:
            return None
        cluster_id = str(cluster['id'])
        newest = self.controller.newest_sample_at(cluster)
        if newest is None or newest == self._guarded.get(cluster_id):
            return None
        self._guarded[cluster_id] = newest
        return self.controller.guard(cluster, now)

    def _amend_in_flight(self, cluster: dict, now: float) -> None:
        """While an action runs, the guard still reads each new monitor
        round: a red one may top up a scale-out that is still creating its
        servers, and a VM in the band keeps the nodes a scale-in has not
        begun to remove. Else the planning loop, when its period is due, may
        top up such a scale-out by the VMs its plan lacks, or trim the
        servers it has not created yet that its plan no longer needs
        (recorded; a period that changes nothing is not). The running
        executor takes any of them in.
        """
        policy = self.controller.policy_of(cluster)
        result = self._guard(cluster, policy, now)
        if result is not None and result.acts and (
                result.top_up_of or result.trim_of):
            self._amend(cluster, result, None)
            self.controller.action_for(cluster, result)
            return
        cluster_id = str(cluster['id'])
        period = policy.control_period_s
        if not policy.replan_in_flight or not schedule.is_due(
                now, self._last_decision.get(cluster_id), period,
                schedule.phase_of(cluster_id, period)):
            return
        self._last_decision[cluster_id] = now
        result = self.controller.decide(cluster, now, record=False)
        if (result.trim_of or result.top_up_of) and result.acts:
            self._record(cluster['id'], result)
            self.controller.action_for(cluster, result)

    def _heal(self, cluster: dict, policy: policy_mod.ScalingPolicy,
              now: float) -> decision_mod.Decision | None:
        """Journal and start the replacement of a dead node when it is due
        (the decision that says so is recorded); the heal decision, which
        does not act when only recommended, waiting or backing off.
        """
        heal = healer.heal_decision(
            policy, self.store.nodes.list(cluster['id']), now,
            how=lambda node: self._replacement(cluster, node))
        if heal is None or not heal.acts:
            return heal
        self._hold_back(cluster, heal, now)
        if not heal.acts:
            return heal
        action = self.store.actions.create(
            cluster['id'], healer.REPLACE,
            {'node': heal.remove_nodes[0], 'decided_at': now,
             'reason': heal.reason}, step='requested')
        heal.inputs['action'] = str(action['id'])
        self._record(cluster['id'], heal)
        LOG.warning('cluster %s: %s (action %s)', cluster['id'], heal.reason,
                    action['id'])
        self._submit(str(cluster['id']), action)
        return heal

    def _replacement(self, cluster: dict, node: dict) -> tuple | None:
        """How the dead ``node`` would be replaced now (None: the cloud
        does not say; the executor decides when the action runs).
        """
        try:
            return actionplan.replacement(self.executor.cloud(cluster),
                                          cluster, node)
        except Exception as exc:
            LOG.warning('cluster %s: how node %s is replaced is decided when '
                        'the action runs: %s', cluster['id'], node['node_id'],
                        exc)
            return None

    def _amend(self, cluster: dict, result: decision_mod.Decision,
               heal: decision_mod.Decision | None) -> None:
        """Add what the healer waits for to a decision, and hold its action
        back while its kind backs off; the record the controller wrote (at
        the decision's time) is replaced when either changed it.
        """
        changed = False
        if heal is not None:
            result.notes.append(heal.reason)
            changed = True
        if result.acts:
            self._hold_back(cluster, result, result.at)
            changed = changed or not result.acts
        if changed:
            self._record(cluster['id'], result)

    def _hold_back(self, cluster: dict, result: decision_mod.Decision,
                   now: float) -> None:
        """Turn ``result`` into no action while its kind backs off after
        failures (the record keeps what was wanted and why it waits).
        """
        opts = self.conf.actuator
        if not opts.backoff_base:
            return
        hold = backoff.hold_for(self.store.actions.list(cluster['id'],
                                                        limit=50),
                                result.kind, now, opts.backoff_base,
                                opts.backoff_max)
        if hold is None:
            return
        result.inputs['backoff'] = hold.to_dict()
        result.reason = 'no action: %s; wanted: %s' % (
            hold.describe(now), result.reason)
        result.kind, result.blocked_by = decision_mod.NONE, 'backoff'
        LOG.info('cluster %s: %s', cluster['id'], result.reason)

    def _record(self, cluster_id, result: decision_mod.Decision) -> None:
        self.store.actions.record_decision(
            cluster_id, datetime.datetime.fromtimestamp(
                result.at, datetime.timezone.utc), result.kind,
            result.to_dict())

    def _submit(self, cluster_id: str, action: dict) -> None:
        def run() -> dict:
            try:
                return self.executor.run(action)
            finally:
                self._ended[cluster_id] = True

        with self._lock:
            self._running[cluster_id] = self._pool.submit(run)

    def wait_idle(self, timeout: float | None = None) -> None:
        """Block until the actions started so far are done (for tools and
        tests).
        """
        with self._lock:
            pending = list(self._running.values())
        futures.wait(pending, timeout=timeout)

    # -- RPC API --------------------------------------------------------------------
    def scale(self, ctxt, cluster_id: str, count: int,
              flavor: str | None = None, action_id: str | None = None) -> None:
        """A journalled PENDING request from the API: act on it now
        rather than at the next round.
        """
        try:
            cluster = self.store.clusters.get(uuid.UUID(str(cluster_id)))
        except (ValueError, exception.NotFound):
            LOG.warning('scale request for unknown cluster %s', cluster_id)
            return
        LOG.info('scale request for cluster %s to %d nodes (action %s)',
                 cluster_id, count, action_id)
        self.handle_cluster(cluster)
