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
"""What every step of an action needs: the cluster's compute driver,
nodetool on its nodes, the action journal and the cluster's lease.

:class:`ActionSteps` is the base of the steps that add nodes
(:mod:`elastman.actuator.joining`), of those that take nodes out of the ring
(:mod:`elastman.actuator.removing`) and of the executor that drives them
(:mod:`elastman.actuator.executor`).
"""
from __future__ import annotations

import threading
import time
from typing import Callable

from oslo_log import log as logging

from elastman.actuator import members
from elastman.cassandra import access as access_mod
from elastman.cassandra import nodetool as nodetool_mod
from elastman.common import exception
from elastman.compute import base as compute

LOG = logging.getLogger(__name__)

STEPS = ('requested', 'planned', 'removing', 'creating', 'joining',
         'cleaning', 'decommissioning', 'deleting', 'done')
#: Checkpoints of a running action, where the lease is renewed and a test's
#: fault hook may kill the process: right after each step is journalled, and
#: inside the steps that have side effects.
CHECKPOINTS = STEPS[1:] + ('creating:server', 'decommissioning:leaving',
                           'deleting:server', 'removing:node')
#: Seconds between two lease renewals inside a long step.
LEASE_CHECK_INTERVAL = 5.0


class LeaseLost(exception.ElastmanException):
    msg_fmt = ('Lease %(lease)s is no longer held by %(holder)s; stopping '
               'at step %(step)s')


def lease_name(cluster_id) -> str:
    """The store lease whose holder alone acts on a cluster (an actuator, or
    ``elastman-manage local-cluster`` when none runs).
    """
    return 'actuator/%s' % cluster_id


class ActionSteps:
    """The state and plumbing shared by the steps of an action."""

    def __init__(self, conf, store, driver: compute.ComputeDriver,
                 nodetool_factory: Callable[..., nodetool_mod.Nodetool]
                 | None = None, holder: str | None = None,
                 lease_ttl: int = 90) -> None:
        """``holder``: the lease holder name this executor acts for (None:
        the caller alone acts on the cluster and no lease is checked).
        """
        self.conf = conf
        self.opts = conf.actuator
        self.store = store
        self.driver = driver
        self.holder = holder
        self.lease_ttl = lease_ttl
        #: test fault injection: called with each checkpoint's name
        self.checkpoint_hook: Callable[[str], None] | None = None
        self._lease_checked: dict[str, float] = {}
        self._nodetool = nodetool_factory or (
            lambda host, port, access=None: nodetool_mod.Nodetool(
                conf, host, port, access=access))
        self._access_of: dict[str, access_mod.Access | None] = {}

        self._clouds: dict[str, compute.ComputeDriver] = {}
        self._clouds_lock = threading.Lock()

    def cloud(self, cluster: dict) -> compute.ComputeDriver:
        """The driver acting on ``cluster``'s servers: in its own project
        through its trust, when it has one.
        """
        spec = cluster.get('spec') or {}
        return self.driver.scoped(cluster.get('project_id'),
                                  spec.get('trust_id'))

    def _cloud(self, action: dict) -> compute.ComputeDriver:
        with self._clouds_lock:
            found = self._clouds.get(str(action['id']))
        if found is None:
            found = self.cloud(self.store.clusters.get(action['cluster_id']))
            with self._clouds_lock:
                self._clouds[str(action['id'])] = found
        return found

    # -- reaching the nodes ------------------------------------------------------
    def _access(self, cluster_id) -> access_mod.Access | None:
        """The cluster's credentials and TLS settings (read once per run)."""
        key = str(cluster_id)
        if key not in self._access_of:
            self._access_of[key] = access_mod.Access.from_document(
                self.store.credentials.get(cluster_id))
        return self._access_of[key]

    def _tool(self, cluster_id, node: dict) -> nodetool_mod.Nodetool:
        access = self._access(cluster_id)
        if access is None:
            return self._nodetool(node['jmx_host'], node['jmx_port'])
        return self._nodetool(node['jmx_host'], node['jmx_port'],
                              access=access)

    def _check_access(self, action: dict) -> None:
        """Fail now if the first node that answers refuses the cluster's
        credentials (JMX through nodetool; CQL when the cluster has
        credentials or TLS). Nodes that do not answer are skipped: that is
        not a question of credentials.
        """
        access = self._access(action['cluster_id'])
        for node in members.serving_nodes(self.store.nodes.list(
                action['cluster_id'])):
            if not node.get('address') or not node.get('jmx_port'):
                continue
            try:
                self._tool(action['cluster_id'], node).status()
                if access is not None:
                    access_mod.check_cql(access, node['address'],
                                         node.get('cql_port') or 9042,
                                         timeout=10.0)
            except access_mod.AccessDenied:
                raise
            except Exception as exc:     # down or busy: ask another node
                LOG.info('node %s cannot tell whether the credentials of '
                         'cluster %s are right: %s', node['node_id'],
                         action['cluster_id'], exc)
                continue
            return

    def _live_ring(self, action: dict) -> tuple:
        """nodetool on the first live node that answers, and its ring by
        address.
        """
        last_error = None
        for node in members.serving_nodes(self.store.nodes.list(action['cluster_id'])):
            tool = self._tool(action['cluster_id'], node)
            try:
                return tool, {s.address: s for s in tool.status()}
            except exception.NodetoolError as exc:
                last_error = exc
        raise exception.ElastmanException(
            'no live node of cluster %s answers nodetool: %s'
            % (action['cluster_id'], last_error))

    def _peer_ring(self, cluster_id, node: dict
                   ) -> list[nodetool_mod.NodeStatus] | None:
        """The ring as the first serving node other than ``node`` that
        answers on JMX sees it (a seed first); None when none answers.
        """
        peers = [n for n in members.serving_nodes(self.store.nodes.list(cluster_id))
                 if n['node_id'] != node['node_id'] and n.get('jmx_port')]
        for peer in sorted(peers, key=lambda n: not n.get('seed')):
            try:
                return self._tool(cluster_id, peer).status()
            except exception.NodetoolError:
                continue
        return None

    # -- journal ---------------------------------------------------------------
    def _advance(self, action: dict, step: str, result: dict,
                 state: str = 'RUNNING', reason: str | None = None,
                 expected_params: dict | None = None) -> str:
        self.store.actions.advance(action['cluster_id'], action['id'], step,
                                   state=state, expected_step=action['step'],
                                   result=result, reason=reason,
                                   expected_params=expected_params)
        LOG.info('action %s (%s of cluster %s): %s -> %s', action['id'],
                 action['kind'], action['cluster_id'], action['step'], step)
        action['step'], action['state'] = step, state
        if state == 'RUNNING':
            self._checkpoint(action, step)
        elif self.checkpoint_hook is not None:
            self.checkpoint_hook(step)
        return step

    def _checkpoint(self, action: dict, point: str) -> None:
        """Between two side effects: run the fault hook, renew the lease."""
        assert point in CHECKPOINTS, point
        if self.checkpoint_hook is not None:
            self.checkpoint_hook(point)
        self._hold_lease(action, force=True)

    def _hold_lease(self, action: dict, force: bool = False) -> None:
        """Renew the cluster's lease (at most every few seconds unless
        ``force``); LeaseLost when another holder has it or the store cannot
        say.
        """
        if self.holder is None:
            return
        cluster_id = str(action['cluster_id'])
        now = time.monotonic()
        if not force and now - self._lease_checked.get(cluster_id, -1e9) \
                < LEASE_CHECK_INTERVAL:
            return
        name = lease_name(cluster_id)
        try:
            held = self.store.leases.acquire(name, self.holder,
                                             self.lease_ttl)
        except Exception as exc:
            LOG.warning('cannot renew lease %s: %s', name, exc)
            held = False
        if not held:
            raise LeaseLost(lease=name, holder=self.holder,
                            step=action['step'])
        self._lease_checked[cluster_id] = now
