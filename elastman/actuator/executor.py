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
"""Carrying out a scaling action as a journalled, resumable state machine.

Every step is written to the action journal *before* its side effects, and
every server an action creates carries the action's id in its metadata, so a
restarted actuator can pick up any action where it stopped: adopt the servers
already created, keep waiting for a join, or see that a decommission already
completed.

Steps, in order (an action skips the ones its plan does not need)::

    requested -> planned -> removing -> creating -> joining -> cleaning
              -> decommissioning -> deleting -> done

The plan (:mod:`elastman.actuator.actionplan`) says which servers an action
adds, which nodes it removes and which it cleans up; the steps that add nodes
are :mod:`elastman.actuator.joining`'s, those that take nodes out of the ring
or clean them up :mod:`elastman.actuator.removing`'s, both built on
:mod:`elastman.actuator.steps` (the compute driver, nodetool, the journal
and the lease). This module drives them, journals each step and ends the
action.

Failures leave the cluster consistent: servers of a scale-out that never
became ACTIVE or whose node never joined are deleted and the action FAILED
(with a failure code the back-off counts by).

A cluster with credentials or TLS (``store.credentials``) is reached with
them: nodetool logs in to JMX, and each new node must accept a CQL login.
Before an action touches a cluster that has nodes, one node is asked to
accept the cluster's credentials, so that wrong ones fail the action before
anything is created or removed.

An executor given the name of its lease holder renews the cluster's lease at
every checkpoint (after each journalled step, and every few seconds inside a
long step); when the lease is gone it stops there, without rolling anything
back, and the actuator that holds the lease now resumes from the journal.

The compute driver acts in the cluster's own project when the cluster holds
a Keystone trust (``spec['trust_id']``): ``driver.scoped(project, trust)``.
Only nodes with a server of the cluster's project are ever removed: a node
elastman found in a registered ring without a server it can map is not
elastman's to remove.
"""
from __future__ import annotations

import datetime
import re
import time

from oslo_log import log as logging

from elastman.actuator import actionplan
from elastman.actuator import discovery
from elastman.actuator import joining
from elastman.actuator import members
from elastman.actuator import removing
from elastman.actuator import steps
from elastman.common import exception
from elastman.common import trusts
from elastman.compute import base as compute
from elastman.store import nodes as nodes_store

LOG = logging.getLogger(__name__)

#: Failure codes of a FAILED action (the back-off counts failures per code),
#: from the error text: the first pattern that matches names it.
_FAILURE_CODES = (
    ('no_valid_host', re.compile(r'no valid host', re.I)),
    ('quota', re.compile(r'quota|over ?limit', re.I)),
    ('flavor_not_found', re.compile(r'flavou?r \S+ not found', re.I)),
    ('no_address', re.compile(r'no free address', re.I)),
    ('join_timeout', re.compile(r'did not join within', re.I)),
    ('boot_timeout', re.compile(r'did not reach ACTIVE', re.I)),
    ('server_error', re.compile(r'went (to )?ERROR', re.I)),
    ('nodetool', re.compile(r'nodetool', re.I)),
)


def failure_code(exc: BaseException) -> str:
    """A short, stable name for why an action failed."""
    text = str(exc)
    for code, pattern in _FAILURE_CODES:
        if pattern.search(text):
            return code
    return type(exc).__name__


def _started_at(action: dict) -> float:
    """When the action was journalled (the decision's time if known)."""
    decided = (action.get('params') or {}).get('decided_at')
    if decided:
        return float(decided)
    created = action.get('created_at')
    if created is not None:
        if created.tzinfo is None:
            created = created.replace(tzinfo=datetime.timezone.utc)
        return created.timestamp()
    return time.time()


class ActionExecutor(joining.JoiningSteps, removing.RemovingSteps):
    """Runs one action of one cluster to a terminal state."""

    # -- entry point -------------------------------------------------------------
    def run(self, action: dict) -> dict:
        """Drive ``action`` from its journalled step to the end."""
        self._access_of.pop(str(action['cluster_id']), None)  # may change
        result = dict(action.get('result') or {})
        if action['state'] == 'PENDING':
            action['state'] = 'RUNNING'
        try:
            self._hold_lease(action, force=True)
        except steps.LeaseLost as exc:
            LOG.warning('%s', exc)
            return action
        self._set_cluster_state(action['cluster_id'], 'SCALING',
                                '%s in progress' % action['kind'])
        try:
            self._drive(action, result)
        except steps.LeaseLost as exc:
            # not a failure: the new holder resumes from the journal
            LOG.warning('action %s: %s', action['id'], exc)
            return action
        except Exception as exc:  # every failure ends in a consistent state
            LOG.exception('action %s failed at step %s', action['id'],
                          action['step'])
            self._fail(action, result, exc)
        finally:
            with self._clouds_lock:
                self._clouds.pop(str(action['id']), None)
        try:
            return self.store.actions.get(action['cluster_id'], action['id'])
        except exception.NotFound:   # a deleted cluster takes its journal
            return dict(action, result=result)

    def _drive(self, action: dict, result: dict) -> None:
        if action['kind'] == 'register':
            self._register_cluster(action, result)
            return
        if action['step'] in ('requested', 'created'):
            if action['kind'] != 'delete':
                self._check_access(action)
            result['plan'] = actionplan.plan(
                self.store, lambda: self._cloud(action), action)
            if result['plan']['add']:
                self._cloud(action).check_quota(result['plan']['flavor'],
                                                result['plan']['add'])
            self._advance(action, 'planned', result)
        plan = result['plan']
        if action['step'] == 'planned':
            if plan.get('removenode'):
                nxt = 'removing'
            elif plan['add']:
                nxt = 'creating'
            else:
                nxt = 'cleaning' if plan.get('cleanup_before') else \
                    'decommissioning'
            self._advance(action, nxt, result)
        if action['step'] == 'removing':
            self._cleanup_nodes(action, result, plan.get('cleanup_before', []),
                                marked_only=True)
            self._removenode(action, result)
            self._advance(action, 'creating', result)
        if action['step'] == 'creating':
            # when the join began, so that the controller learns how long
            # joins take (the planning horizon)
            result.setdefault('started_at', _started_at(action))
            self._create(action, result)
            while not self._leave_creating(action, result):
                self._create(action, result)
        if action['step'] == 'joining':
            self._wait_joined(action, result['servers'])
            result.setdefault('joined_at', time.time())
            self._advance(action, 'cleaning', result)
        if action['step'] == 'cleaning':
            self._cleanup(action, result)
            self._advance(action, 'decommissioning', result)
        if action['step'] == 'decommissioning':
            self._decommission(action, result)
            self._advance(action, 'deleting', result)
        if action['step'] == 'deleting':
            self._delete_removed(action, result)
            self._finish(action, result)

    # -- registration ------------------------------------------------------------
    def _register_cluster(self, action: dict, result: dict) -> None:
        """Discover a registered cluster's ring and map it to servers."""
        cluster = self.store.clusters.get(action['cluster_id'])
        found = discovery.discover(
            self.store, cluster, self._cloud(action),
            lambda host, port: self._tool(action['cluster_id'], {
                'jmx_host': host, 'jmx_port': port}))
        result.update(found)
        self._advance(action, 'done', result, state='SUCCEEDED')
        self._set_cluster_state(
            action['cluster_id'], 'ACTIVE',
            'ring of %d discovered: %d node(s) with a server of the project '
            '(managed), %d without (never removed)' % (
                len(found['ring']), len(found['mapped']),
                len(found['unmapped'])))

    # -- endings -----------------------------------------------------------------------
    def _finish(self, action: dict, result: dict) -> None:
        if result['plan'].get('delete_cluster'):
            self._delete_cluster(action, result)
            return
        self._advance(action, 'done', result, state='SUCCEEDED')
        self._set_cluster_state(action['cluster_id'], 'ACTIVE',
                                '%s done' % action['kind'])

    def _delete_cluster(self, action: dict, result: dict) -> None:
        """Every server of the cluster (orphans of crashed actions too), its
        server group and its trust go, then the cluster's rows.
        """
        cluster_id = str(action['cluster_id'])
        cloud = self._cloud(action)
        try:
            servers = cloud.list(cluster_id)
        except trusts.TrustError as exc:
            if any(n.get('server_id') for n in
                   self.store.nodes.list(action['cluster_id'])):
                raise
            # no server was ever recorded: nothing is left behind
            LOG.warning('cluster %s has no server; deleting it although %s',
                        cluster_id, exc)
            result.setdefault('warnings', []).append(str(exc))
            servers, cloud = [], None
        for server in servers:
            cloud.delete(server.id)
        for server in (cloud.list(cluster_id) if cloud else []):
            cloud.wait_for_state(server.id, compute.DELETED,
                                 timeout=self.opts.delete_timeout)
        if cloud is not None:
            cloud.release(cluster_id)
        trust_id = (self.store.clusters.get(action['cluster_id']).get(
            'spec') or {}).get('trust_id')
        if trust_id:
            try:
                trusts.delete_trust(self.conf, trust_id)
            except trusts.TrustError as exc:
                LOG.warning('cluster %s: its trust stays: %s', cluster_id,
                            exc)
                result.setdefault('warnings', []).append(str(exc))
        self._advance(action, 'done', result, state='SUCCEEDED')
        self.store.clusters.delete(action['cluster_id'])

    def _fail(self, action: dict, result: dict, exc: Exception) -> None:
        reason = '%s failed at step %s: %s' % (action['kind'], action['step'],
                                               exc)
        result['failure'] = {'code': failure_code(exc),
                             'step': action['step'], 'error': str(exc)[:500]}
        if action['step'] in ('creating', 'joining'):
            try:
                tagged = self._tagged(action)
            except Exception as list_exc:
                LOG.exception('cannot list the servers of action %s',
                              action['id'])
                tagged = []
                reason += (' (its servers could not be listed to roll back: '
                           '%s)' % list_exc)
            for server in tagged:
                LOG.info('rolling back: deleting server %s', server.id)
                try:
                    self._cloud(action).delete(server.id)
                    self.store.nodes.delete(action['cluster_id'], server.id)
                except Exception:
                    LOG.exception('could not delete server %s; it stays '
                                  'tagged with action %s', server.id,
                                  action['id'])
                    reason += ' (server %s could not be deleted)' % server.id
        try:
            self.store.actions.advance(action['cluster_id'], action['id'],
                                       'failed', state='FAILED',
                                       result=result, reason=reason)
        except Exception:
            LOG.exception('could not journal the failure of action %s',
                          action['id'])
        for node_id in (result.get('plan') or {}).get('dead', []):
            # the dead node is DEAD again: a later replace may retry
            try:
                if self.store.nodes.get(action['cluster_id'],
                                        node_id)['state'] == nodes_store.REPLACING:
                    self.store.nodes.upsert(action['cluster_id'], node_id,
                                            state=nodes_store.DEAD)
            except exception.NotFound:
                pass
            except Exception:
                LOG.exception('could not set node %s back to DEAD', node_id)
        try:
            left = members.serving_nodes(self.store.nodes.list(action['cluster_id']))
        except Exception:
            LOG.exception('cannot list the nodes of cluster %s',
                          action['cluster_id'])
            left = [None]
        # a cluster left without a node (its creation failed, or it never
        # had one to act with) is in ERROR
        self._set_cluster_state(action['cluster_id'],
                                'ACTIVE' if left else 'ERROR', reason)

    def _set_cluster_state(self, cluster_id, state: str, reason: str) -> None:
        try:
            self.store.clusters.update(cluster_id, state=state,
                                       status_reason=reason[:500])
        except exception.NotFound:
            pass
