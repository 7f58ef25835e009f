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
"""The steps of an action that take nodes out of the ring or clean them up.

After a scale-out the old nodes still hold the ranges the new ones took over
until ``nodetool cleanup`` drops them, which costs them CPU and disk bandwidth
for a while. With the scaling policy's ``cleanup`` at ``before_removal`` (the
default) the scale-out ends once its nodes have joined and marks the old
nodes (``details['cleanup_pending']``); the next action that takes a node out
of the ring (a scale-in, a smaller ``scale``, a ``removenode``) first cleans up
every marked node that stays (cleaning, or inside removing). A node that got
a range back while it still held that range's old rows could resurrect rows
whose tombstones were purged meanwhile; cleaning up before any removal rules
that out. ``after_join`` cleans up right after the join.

A scale-in removes its nodes one at a time and reads its nodes again before
each: the guard may keep those it has not begun to remove while a VM is in
its warning band (``ActionRepository.keep``); the node leaving finishes. A
decommission that fails leaves the node and its server in place.
"""
from __future__ import annotations

import time

from oslo_log import log as logging

from elastman.actuator import members
from elastman.actuator import policy as policy_mod
from elastman.actuator import steps
from elastman.common import exception
from elastman.compute import base as compute
from elastman.store import nodes as nodes_store

LOG = logging.getLogger(__name__)


class RemovingSteps(steps.ActionSteps):
    """The ``removing``, ``cleaning``, ``decommissioning`` and ``deleting``
    steps of :class:`~elastman.actuator.executor.ActionExecutor`.
    """

    def _removenode(self, action: dict, result: dict) -> None:
        """Drop the dead node from the ring through a live peer, or wait for
        the removal an earlier (crashed) run started to finish.
        """
        address = result['plan']['dead_address']
        deadline = time.monotonic() + self.opts.decommission_timeout
        while True:
            tool, ring = self._live_ring(action)
            entry = ring.get(address)
            if entry is None:
                LOG.info('node %s is not in the ring (any more)', address)
                return
            if entry.status == 'U':
                raise exception.ElastmanException(
                    'node %s is up again; not removing it' % address)
            try:
                status = tool.removenode_status()
            except exception.NodetoolError:
                status = None
            if status:
                LOG.info('waiting for the removal in progress: %s', status)
                if time.monotonic() > deadline:
                    raise exception.ElastmanException(
                        'removal of %s still running after %ss: %s'
                        % (address, self.opts.decommission_timeout, status))
                self._hold_lease(action)
                time.sleep(5)
                continue
            result['removed_host_id'] = entry.host_id
            self._checkpoint(action, 'removing:node')
            tool.removenode(entry.host_id,
                            timeout=self.opts.decommission_timeout)

    def _cleanup(self, action: dict, result: dict) -> None:
        """Old nodes drop the ranges the new ones took over, now or, with
        a deferred cleanup, before the next removal (see the module's doc).
        """
        plan = result['plan']
        if 'cleanup' not in plan:   # journalled before cleanups were planned
            self._cleanup_nodes(action, result, plan['previous'])
            return
        self._cleanup_nodes(action, result, plan.get('cleanup_before', []),
                            marked_only=True)
        self._cleanup_nodes(action, result, plan['cleanup'])
        since = time.time()
        for node_id in plan.get('defer_cleanup', []):
            try:
                node = self.store.nodes.get(action['cluster_id'], node_id)
            except exception.NotFound:
                continue
            details = dict(node.get('details') or {})
            if not details.get('cleanup_pending'):
                details['cleanup_pending'] = {'since': since,
                                              'action': str(action['id'])}
                self.store.nodes.upsert(action['cluster_id'], node_id,
                                        details=details)
        if plan.get('defer_cleanup'):
            result['cleanup'] = 'deferred on %d node(s)' % len(
                plan['defer_cleanup'])

    def _cleanup_nodes(self, action: dict, result: dict,
                       node_ids: list[str], marked_only: bool = False) -> None:
        """``nodetool cleanup`` on each node (with ``marked_only``, on each
        still marked for a deferred cleanup); a marked node loses its mark
        once it is done.
        """
        warnings = result.setdefault('warnings', [])
        for node_id in node_ids:
            self._hold_lease(action)
            try:
                node = self.store.nodes.get(action['cluster_id'], node_id)
            except exception.NotFound:
                continue
            if marked_only and not (node.get('details') or {}).get(
                    'cleanup_pending'):
                continue
            try:
                self._tool(action['cluster_id'], node).cleanup(
                    timeout=self.opts.cleanup_timeout)
            except exception.NodetoolError as exc:
                # the data is still correct, only not yet reclaimed; a
                # marked node keeps its mark for the next removal
                warnings.append('cleanup on %s: %s' % (node_id, exc))
                LOG.warning('cleanup on node %s failed: %s', node_id, exc)
                continue
            details = dict(node.get('details') or {})
            if details.pop('cleanup_pending', None):
                self.store.nodes.upsert(action['cluster_id'], node_id,
                                        details=details)

    def _decommission(self, action: dict, result: dict) -> None:
        if result['plan'].get('delete_cluster'):
            return  # the whole cluster goes: no data to keep
        done = result.setdefault('decommissioned', [])
        for node_id in list(result['plan']['remove']):
            if node_id in done or not self._claim_removal(action, result, node_id):
                continue
            node = self.store.nodes.get(action['cluster_id'], node_id)
            self.store.nodes.upsert(action['cluster_id'], node_id,
                                    state=nodes_store.LEAVING)
            if self._still_in_ring(action, node):
                self._decommission_node(action, node)
            done.append(node_id)
            result.pop('leaving', None)
            self.store.actions.advance(action['cluster_id'], action['id'],
                                       action['step'], result=result,
                                       expected_step=action['step'])

    def _claim_removal(self, action: dict, result: dict, node_id: str,
                       attempts: int = 3) -> bool:
        """Before a scale-in's next decommission, read its nodes again: a
        node the guard kept (:meth:`ActionRepository.keep`) leaves the plan
        and False is returned; else the node is journalled as ``leaving``,
        on the condition that the nodes are still those read, so that a
        node is never both kept and removed.
        """
        if action['kind'] != 'scale_in' or result.get('leaving') == node_id:
            return True
        conflict = None
        for _ in range(attempts):
            params = self.store.actions.get(action['cluster_id'],
                                            action['id'])['params'] or {}
            if node_id not in (params.get('nodes') or []):
                result['plan']['remove'].remove(node_id)
                result.setdefault('kept', []).append(node_id)
                LOG.info('action %s: keeps node %s (the guard trimmed the '
                         'scale-in)', action['id'], node_id)
                self.store.actions.advance(action['cluster_id'], action['id'],
                                           action['step'], result=result,
                                           expected_step=action['step'])
                return False
            result['leaving'] = node_id
            try:
                self.store.actions.advance(
                    action['cluster_id'], action['id'], action['step'],
                    result=result, expected_step=action['step'],
                    expected_params=params)
            except exception.Conflict as exc:
                result.pop('leaving', None)
                conflict = exc
                continue    # kept meanwhile, or moved on: read again
            action['params'] = params
            return True
        raise conflict

    def _decommission_node(self, action: dict, node: dict) -> None:
        """Decommission ``node``, or wait for the decommission an earlier
        (crashed) actuator started: Cassandra refuses a second one while
        the node is leaving.
        """
        node_id = node['node_id']
        tool = self._tool(action['cluster_id'], node)

        def progress(state: dict) -> None:
            LOG.info('decommission of %s: %s', node_id, state)
            if state.get('mode') == 'LEAVING':
                self._checkpoint(action, 'decommissioning:leaving')
        try:
            mode = tool.netstats().get('mode')
        except exception.NodetoolError as exc:
            mode = None  # decommission below says what is wrong
            LOG.info('node %s: no netstats before decommission: %s',
                     node_id, exc)
        timeout = self.opts.decommission_timeout
        try:
            if mode == 'DECOMMISSIONED':
                LOG.info('node %s was already decommissioned', node_id)
            elif mode == 'LEAVING':
                LOG.info('node %s is already leaving; waiting for it',
                         node_id)
                tool.wait_decommissioned(progress=progress, timeout=timeout)
            else:
                try:
                    tool.decommission(progress=progress, timeout=timeout)
                except exception.NodetoolError as exc:
                    if not self._may_force(action, exc):
                        raise
                    LOG.warning('node %s: %s; the cluster keeps its '
                                'replication factor: forcing', node_id, exc)
                    tool.decommission(progress=progress, timeout=timeout,
                                      force=True)
        except exception.NodetoolError:
            self.store.nodes.upsert(action['cluster_id'], node_id,
                                    state=nodes_store.UN)
            raise

    def _may_force(self, action: dict, exc: Exception) -> bool:
        """Whether a decommission Cassandra refused for want of nodes for
        some keyspace's replication factor (a small cluster: its system
        keyspaces replicate 3 times) may be forced: only when the nodes left
        still hold the policy's replication factor of the data.
        """
        if 'forceful decommission' not in str(exc):
            return False
        cluster = self.store.clusters.get(action['cluster_id'])
        policy = policy_mod.ScalingPolicy.for_cluster(cluster)
        serving = members.serving_nodes(self.store.nodes.list(action['cluster_id']))
        left = len([n for n in serving if n.get('state') != nodes_store.LEAVING])
        return left >= policy.replication_factor

    def _still_in_ring(self, action: dict, leaving: dict) -> bool:
        """Ask another node whether ``leaving`` is still part of the ring
        (True when nobody else answers: decommission decides).
        """
        ring = self._peer_ring(action['cluster_id'], leaving)
        return ring is None or any(s.address == leaving['address']
                                   for s in ring)

    def _delete_removed(self, action: dict, result: dict) -> None:
        """Delete the servers of decommissioned (and replaced dead) nodes,
        then their node rows.
        """
        plan = result['plan']
        for node_id in plan['remove'] + plan.get('dead', []):
            try:
                node = self.store.nodes.get(action['cluster_id'], node_id)
            except exception.NotFound:
                continue
            if node.get('server_id'):
                cloud = self._cloud(action)
                cloud.delete(node['server_id'])
                cloud.wait_for_state(node['server_id'], compute.DELETED,
                                     timeout=self.opts.delete_timeout)
                self._checkpoint(action, 'deleting:server')
            self.store.nodes.delete(action['cluster_id'], node_id)
