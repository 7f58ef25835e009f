"""Carrying out a scaling action as a journalled, resumable state machine.

Every step is written to the action journal *before* its side effects, and
every server an action creates carries the action's id in its metadata, so a
restarted actuator can pick up any action where it stopped: adopt the servers
already created, keep waiting for a join, or see that a decommission already
completed.

Steps, in order (an action skips the ones its plan does not need)::

    requested -> planned -> creating -> joining -> cleaning
              -> decommissioning -> deleting -> done

Failures leave the cluster consistent: servers of a scale-out that never
became ACTIVE or whose node never joined are deleted and the action FAILED; a
decommission that fails leaves the node and its server in place.

A cluster with credentials or TLS (``store.credentials``) is reached with
them: nodetool logs in to JMX, and each new node must accept a CQL login.
Before an action touches a cluster that has nodes, one node is asked to
accept the cluster's credentials, so that wrong ones fail the action before
anything is created or removed.
"""
from __future__ import annotations

import datetime
import os
import time
import uuid
from typing import Callable

from oslo_log import log as logging

from elastman.actuator import decision as decision_mod
from elastman.actuator import policy as policy_mod
from elastman.cassandra import access as access_mod
from elastman.cassandra import nodetool as nodetool_mod
from elastman.common import exception
from elastman.compute import base as compute

LOG = logging.getLogger(__name__)

ACTION_TAG = 'elastman_action'

STEPS = ('requested', 'planned', 'creating', 'joining', 'cleaning',
         'decommissioning', 'deleting', 'done')
SERVING = ('UN', 'ACTIVE', 'UNKNOWN', None)
#: Where [actuator]crash_after_step can kill an actuator: right after each
#: step is journalled, and inside the steps that have side effects.
CRASH_POINTS = STEPS[1:] + ('creating:server', 'decommissioning:leaving',
                            'deleting:server')


def lease_name(cluster_id) -> str:
    """The store lease whose holder alone acts on a cluster (an actuator, or
    ``elastman-manage local-cluster`` when none runs)."""
    return 'actuator/%s' % cluster_id


def serving_nodes(nodes: list[dict]) -> list[dict]:
    """Nodes that count in the cluster (not joining, leaving or failed)."""
    return [n for n in nodes if n.get('state') in SERVING]


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


class ActionExecutor:
    """Runs one action of one cluster to a terminal state."""

    def __init__(self, conf, store, driver: compute.ComputeDriver,
                 nodetool_factory: Callable[..., nodetool_mod.Nodetool]
                 | None = None) -> None:
        self.conf = conf
        self.opts = conf.actuator
        self.store = store
        self.driver = driver
        self._nodetool = nodetool_factory or (
            lambda host, port, access=None: nodetool_mod.Nodetool(
                conf, host, port, access=access))
        self._access_of: dict[str, access_mod.Access | None] = {}

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
        not a question of credentials."""
        access = self._access(action['cluster_id'])
        for node in serving_nodes(self.store.nodes.list(
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

    # -- journal ---------------------------------------------------------------
    def _advance(self, action: dict, step: str, result: dict,
                 state: str = 'RUNNING', reason: str | None = None) -> str:
        self.store.actions.advance(action['cluster_id'], action['id'], step,
                                   state=state, expected_step=action['step'],
                                   result=result, reason=reason)
        LOG.info('action %s (%s of cluster %s): %s -> %s', action['id'],
                 action['kind'], action['cluster_id'], action['step'], step)
        action['step'], action['state'] = step, state
        self._crash_point(step)
        return step

    def _crash_point(self, point: str) -> None:
        """Die here, as a kill would, if [actuator]crash_after_step says so
        (crash-safety tests only)."""
        assert point in CRASH_POINTS, point
        if self.opts.crash_after_step == point:
            LOG.warning('crash_after_step=%s: exiting now', point)
            os._exit(137)

    # -- entry point -------------------------------------------------------------
    def run(self, action: dict) -> dict:
        """Drive ``action`` from its journalled step to the end."""
        self._access_of.pop(str(action['cluster_id']), None)  # may change
        result = dict(action.get('result') or {})
        if action['state'] == 'PENDING':
            action['state'] = 'RUNNING'
        self._set_cluster_state(action['cluster_id'], 'SCALING',
                                '%s in progress' % action['kind'])
        try:
            self._drive(action, result)
        except Exception as exc:  # every failure ends in a consistent state
            LOG.exception('action %s failed at step %s', action['id'],
                          action['step'])
            self._fail(action, result, exc)
        return self.store.actions.get(action['cluster_id'], action['id'])

    def _drive(self, action: dict, result: dict) -> None:
        if action['step'] in ('requested', 'created'):
            if action['kind'] != 'delete':
                self._check_access(action)
            result['plan'] = self._plan(action)
            self._advance(action, 'planned', result)
        plan = result['plan']
        if action['step'] == 'planned':
            self._advance(action, 'creating' if plan['add'] else
                          'decommissioning', result)
        if action['step'] == 'creating':
            # when the join began, so that the controller learns how long
            # joins take (the planning horizon)
            result.setdefault('started_at', _started_at(action))
            self._create(action, result)
            self._advance(action, 'joining', result)
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

    # -- planning ----------------------------------------------------------------
    def _plan(self, action: dict) -> dict:
        """Turn a request into servers to add and nodes to remove."""
        params = action.get('params') or {}
        cluster = self.store.clusters.get(action['cluster_id'])
        spec = cluster.get('spec') or {}
        nodes = serving_nodes(self.store.nodes.list(action['cluster_id']))
        kind = action['kind']
        flavor = params.get('flavor') or spec.get('flavor')
        if kind == 'scale_out':
            return {'add': int(params['count']), 'flavor': params['flavor'],
                    'remove': [], 'previous': [n['node_id'] for n in nodes]}
        if kind == 'scale_in':
            return {'add': 0, 'flavor': None, 'remove': list(params['nodes']),
                    'previous': [n['node_id'] for n in nodes]}
        if kind == 'delete':
            return {'add': 0, 'flavor': None, 'delete_cluster': True,
                    'remove': [n['node_id'] for n in
                               self.store.nodes.list(action['cluster_id'])],
                    'previous': []}
        if kind in ('create', 'scale'):
            target = int(params['count'])
            delta = target - len(nodes)
            if delta >= 0:
                if delta and not flavor:
                    raise exception.ElastmanException(
                        'no flavour to grow cluster %s with' % cluster['id'])
                return {'add': delta, 'flavor': flavor, 'remove': [],
                        'previous': [n['node_id'] for n in nodes]}
            infos = [decision_mod.NodeInfo(n['node_id'], n.get('flavor') or '',
                                           bool(n.get('seed')))
                     for n in nodes]
            policy = policy_mod.ScalingPolicy.for_cluster(cluster)
            remove: list[str] = []
            for flavor_name in sorted({n.flavor for n in infos}):
                remove += decision_mod.choose_nodes_to_remove(
                    policy, [n for n in infos if n.node_id not in remove],
                    {}, flavor_name, -delta - len(remove))
            if len(remove) < -delta:
                raise exception.ElastmanException(
                    'cannot remove %d nodes without removing the last seed'
                    % -delta)
            return {'add': 0, 'flavor': None, 'remove': remove,
                    'previous': [n['node_id'] for n in nodes]}
        raise exception.ElastmanException('unknown action kind %r' % kind)

    # -- scale out -----------------------------------------------------------------
    def _tagged(self, action: dict) -> list[compute.Server]:
        return [s for s in self.driver.list(str(action['cluster_id']))
                if s.metadata.get(ACTION_TAG) == str(action['id'])]

    def _create(self, action: dict, result: dict) -> None:
        """Add the planned servers one at a time: Cassandra bootstraps one
        node at a time (a second concurrent bootstrap exits), so each new
        node must be UN before the next server is created."""
        plan = result['plan']
        cluster = self.store.clusters.get(action['cluster_id'])
        servers = self._tagged(action)  # adopt what a crashed run created
        result['servers'] = [s.id for s in servers]
        for server in servers:
            self._register(action, plan, server)
            self._wait_joined(action, [server.id])
        while len(servers) < plan['add']:
            name = '%s-%s' % (cluster['name'], uuid.uuid4().hex[:6])
            metadata = {compute.CLUSTER_TAG: str(cluster['id']),
                        ACTION_TAG: str(action['id']),
                        'cluster_name': 'elastman-%s' % cluster['id'],
                        **compute.security_metadata(
                            (cluster.get('spec') or {}).get('security'))}
            server = self.driver.create(name, plan['flavor'], metadata)
            self._crash_point('creating:server')
            servers.append(server)
            result['servers'].append(server.id)
            self.store.actions.advance(action['cluster_id'], action['id'],
                                       action['step'], result=result,
                                       expected_step=action['step'])
            self._register(action, plan, server)
            self._wait_joined(action, [server.id])

    def _register(self, action: dict, plan: dict,
                  server: compute.Server) -> None:
        """Wait for the server to be ACTIVE and record its node as JOINING
        (a node already recorded keeps its state)."""
        server = self.driver.wait_for_state(
            server.id, compute.ACTIVE, timeout=self.opts.boot_timeout)
        try:
            if self.store.nodes.get(action['cluster_id'],
                                    server.id)['state'] == 'UN':
                return
        except exception.NotFound:
            pass
        self.store.nodes.upsert(
            action['cluster_id'], server.id, server_id=server.id,
            address=server.address, flavor=server.flavor, state='JOINING',
            seed=not plan['previous'], cql_port=server.cql_port,
            jmx_host=server.jmx_host or '127.0.0.1', jmx_port=server.jmx_port,
            host=server.host)

    def _wait_joined(self, action: dict, server_ids: list[str]) -> None:
        deadline = time.monotonic() + self.opts.join_timeout
        waiting = list(server_ids)
        denied: dict[str, float] = {}      # server -> first refusal
        while waiting:
            for server_id in list(waiting):
                node = self.store.nodes.get(action['cluster_id'], server_id)
                if node['state'] == 'UN':
                    waiting.remove(server_id)
                    continue
                server = self.driver.get(server_id)
                if server.status != compute.ACTIVE:
                    raise exception.ElastmanException(
                        'server %s went %s while joining: %s'
                        % (server_id, server.status, server.fault))
                try:
                    joined = self._is_up_normal(action['cluster_id'], node)
                except access_mod.AccessDenied:
                    first = denied.setdefault(server_id, time.monotonic())
                    if time.monotonic() - first >= \
                            self.opts.credentials_grace:
                        raise
                    continue
                if joined:
                    self.store.nodes.upsert(action['cluster_id'], server_id,
                                            state='UN')
                    waiting.remove(server_id)
            if waiting and time.monotonic() > deadline:
                raise exception.ElastmanException(
                    'node(s) %s did not join within %ss'
                    % (', '.join(waiting), self.opts.join_timeout))
            if waiting:
                time.sleep(2)

    def _is_up_normal(self, cluster_id, node: dict) -> bool:
        """True once the node is UN and, for a cluster with credentials or
        TLS, accepts a CQL login with them; AccessDenied when it refuses."""
        try:
            ring = self._tool(cluster_id, node).status()
        except nodetool_mod.NodetoolAccessDenied:
            raise
        except exception.NodetoolError:
            return False  # JMX not up yet
        if not any(s.address == node['address'] and s.up_normal
                   for s in ring):
            return False
        access = self._access(cluster_id)
        if access is not None:
            try:
                access_mod.check_cql(access, node['address'],
                                     node.get('cql_port') or 9042,
                                     timeout=10.0)
            except access_mod.AccessDenied:
                raise
            except Exception as exc:         # CQL not serving yet
                LOG.info('node %s is UN but CQL does not answer yet: %s',
                         node['node_id'], exc)
                return False
        return True

    def _cleanup(self, action: dict, result: dict) -> None:
        """Old nodes drop the ranges the new ones took over."""
        warnings = result.setdefault('warnings', [])
        for node_id in result['plan']['previous']:
            try:
                node = self.store.nodes.get(action['cluster_id'], node_id)
            except exception.NotFound:
                continue
            try:
                self._tool(action['cluster_id'], node).cleanup(
                    timeout=self.opts.cleanup_timeout)
            except exception.NodetoolError as exc:
                # the data is still correct, only not yet reclaimed
                warnings.append('cleanup on %s: %s' % (node_id, exc))
                LOG.warning('cleanup on node %s failed: %s', node_id, exc)

    # -- scale in --------------------------------------------------------------------
    def _decommission(self, action: dict, result: dict) -> None:
        if result['plan'].get('delete_cluster'):
            return  # the whole cluster goes: no data to keep
        done = result.setdefault('decommissioned', [])
        for node_id in result['plan']['remove']:
            if node_id in done:
                continue
            node = self.store.nodes.get(action['cluster_id'], node_id)
            self.store.nodes.upsert(action['cluster_id'], node_id,
                                    state='LEAVING')
            if self._still_in_ring(action, node):
                self._decommission_node(action, node)
            done.append(node_id)
            self.store.actions.advance(action['cluster_id'], action['id'],
                                       action['step'], result=result,
                                       expected_step=action['step'])

    def _decommission_node(self, action: dict, node: dict) -> None:
        """Decommission ``node``, or wait for the decommission an earlier
        (crashed) actuator started: Cassandra refuses a second one while
        the node is leaving."""
        node_id = node['node_id']
        tool = self._tool(action['cluster_id'], node)

        def progress(state: dict) -> None:
            LOG.info('decommission of %s: %s', node_id, state)
            if state.get('mode') == 'LEAVING':
                self._crash_point('decommissioning:leaving')
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
                tool.decommission(progress=progress, timeout=timeout)
        except exception.NodetoolError:
            self.store.nodes.upsert(action['cluster_id'], node_id,
                                    state='UN')
            raise

    def _still_in_ring(self, action: dict, leaving: dict) -> bool:
        """Ask another node whether ``leaving`` is still part of the ring."""
        for node in serving_nodes(self.store.nodes.list(action['cluster_id'])):
            if node['node_id'] == leaving['node_id']:
                continue
            try:
                ring = self._tool(action['cluster_id'], node).status()
            except exception.NodetoolError:
                continue
            return any(s.address == leaving['address'] for s in ring)
        return True  # nobody else to ask: decommission decides

    def _delete_removed(self, action: dict, result: dict) -> None:
        for node_id in result['plan']['remove']:
            try:
                node = self.store.nodes.get(action['cluster_id'], node_id)
            except exception.NotFound:
                continue
            if node.get('server_id'):
                self.driver.delete(node['server_id'])
                self.driver.wait_for_state(node['server_id'],
                                           compute.DELETED,
                                           timeout=self.opts.delete_timeout)
                self._crash_point('deleting:server')
            self.store.nodes.delete(action['cluster_id'], node_id)

    # -- endings -----------------------------------------------------------------------
    def _finish(self, action: dict, result: dict) -> None:
        self._advance(action, 'done', result, state='SUCCEEDED')
        if result['plan'].get('delete_cluster'):
            for server in self.driver.list(str(action['cluster_id'])):
                self.driver.delete(server.id)
            self.store.clusters.delete(action['cluster_id'])
            return
        self._set_cluster_state(action['cluster_id'], 'ACTIVE',
                                '%s done' % action['kind'])

    def _fail(self, action: dict, result: dict, exc: Exception) -> None:
        reason = '%s failed at step %s: %s' % (action['kind'], action['step'],
                                               exc)
        if action['step'] in ('creating', 'joining'):
            for server in self._tagged(action):
                LOG.info('rolling back: deleting server %s', server.id)
                try:
                    self.driver.delete(server.id)
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
        state = 'ACTIVE'
        if action['kind'] == 'create':
            try:
                if not serving_nodes(self.store.nodes.list(
                        action['cluster_id'])):
                    state = 'ERROR'     # a cluster that never came to be
            except Exception:
                LOG.exception('cannot list the nodes of cluster %s',
                              action['cluster_id'])
        self._set_cluster_state(action['cluster_id'], state, reason)

    def _set_cluster_state(self, cluster_id, state: str, reason: str) -> None:
        try:
            self.store.clusters.update(cluster_id, state=state,
                                       status_reason=reason[:500])
        except exception.NotFound:
            pass
