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
"""The creating and joining steps of an action.

New servers boot with the cluster's image, networks, security groups, zone
and server group (``spec``, defaults from the driver's configuration), learn
their seeds from the executor, and carry the action's id in their metadata,
so that a restarted actuator adopts those already created. Cassandra
bootstraps one node at a time, so each new node must be ``UN`` (and, for a
cluster with credentials or TLS, accept a CQL login) before the next one is
created, unless ``[actuator] concurrent_joins`` lets a group join with tokens
the executor places. A scale-out in flight takes in a top-up from the guard
or a trim from the planning loop between two groups.
"""
from __future__ import annotations

import time
import uuid

from oslo_log import log as logging

from elastman.actuator import members
from elastman.actuator import steps
from elastman.cassandra import access as access_mod
from elastman.cassandra import nodetool as nodetool_mod
from elastman.cassandra import tokens as tokens_mod
from elastman.common import exception
from elastman.compute import base as compute
from elastman.store import nodes as nodes_store

LOG = logging.getLogger(__name__)

#: Server metadata key holding the id of the action that created the server.
ACTION_TAG = 'elastman_action'
#: seeds a new node is given (Cassandra's advice: a few per datacentre)
MAX_SEEDS = 3


class JoiningSteps(steps.ActionSteps):
    """The ``creating`` and ``joining`` steps of
    :class:`~elastman.actuator.executor.ActionExecutor`.
    """

    def _tagged(self, action: dict) -> list[compute.Server]:
        return [s for s in self._cloud(action).list(str(action['cluster_id']))
                if s.metadata.get(ACTION_TAG) == str(action['id'])]

    def _seeds(self, action: dict) -> list[str]:
        """Addresses a new node joins through: the cluster's serving seed
        nodes (else any serving nodes), at most MAX_SEEDS; none for the
        first node of a new cluster, which seeds itself.
        """
        nodes = [n for n in members.serving_nodes(self.store.nodes.list(
            action['cluster_id'])) if n.get('address')
            and n.get('state') != nodes_store.JOINING]
        seeds = [n for n in nodes if n.get('seed')] or nodes
        return sorted(n['address'] for n in seeds)[:MAX_SEEDS]

    def _create(self, action: dict, result: dict) -> None:
        """Add the planned servers, one at a time by default: Cassandra
        bootstraps one node at a time (a second concurrent bootstrap
        exits), so each new node must be UN before the next server is
        created. With ``[actuator] concurrent_joins`` above 1, up to that
        many are created together, each given its tokens
        (:meth:`_join_group`).
        """
        plan = result['plan']
        cluster = self.store.clusters.get(action['cluster_id'])
        servers = self._tagged(action)  # adopt what a crashed run created
        result['servers'] = [s.id for s in servers]
        for server in servers:
            self._register(action, plan, server)
        if servers:
            self._wait_joined(action, [s.id for s in servers])
        spec = cluster.get('spec') or {}
        request = compute.ServerRequest.from_spec(spec)
        self._take_changes(action, result)
        while len(servers) < plan['add']:
            group = self._join_group(action, result,
                                     plan['add'] - len(servers))
            created = []
            for tokens in group:
                name = '%s-%s' % (cluster['name'], uuid.uuid4().hex[:6])
                metadata = {compute.CLUSTER_TAG: str(cluster['id']),
                            ACTION_TAG: str(action['id']),
                            'cluster_name': (spec.get('cluster_name')
                                             or 'elastman-%s' % cluster['id']),
                            **compute.security_metadata(spec.get('security'))}
                if plan.get('replace_address'):
                    metadata[compute.REPLACE_ADDRESS] = plan['replace_address']
                if tokens:
                    metadata[compute.INITIAL_TOKENS] = ','.join(
                        str(t) for t in tokens)
                server = self._cloud(action).create(
                    name, plan['flavor'], metadata, seeds=self._seeds(action),
                    request=request)
                self._checkpoint(action, 'creating:server')
                servers.append(server)
                created.append(server)
                result['servers'].append(server.id)
                self.store.actions.advance(action['cluster_id'], action['id'],
                                           action['step'], result=result,
                                           expected_step=action['step'])
            for server in created:
                self._register(action, plan, server)
            self._wait_joined(action, [s.id for s in created])
            self._take_changes(action, result)

    def _take_changes(self, action: dict, result: dict) -> None:
        """Read the action's parameters again and take in a top-up the guard
        wrote into them (:meth:`ActionRepository.top_up`) or a trim of the
        planning loop (:meth:`ActionRepository.trim`): the plan's ``add``
        follows the new count (never below the servers created). A top-up
        the cloud's quota cannot hold is declined with a warning in the
        result (the servers already asked for go on).
        """
        if action['kind'] != 'scale_out':
            return
        params = self.store.actions.get(action['cluster_id'],
                                        action['id'])['params'] or {}
        action['params'] = params
        plan = result['plan']
        extra = int(params.get('count', plan['add'])) - plan['add'] \
            - int(result.get('declined', 0))
        if extra < 0:
            add = max(len(result.get('servers') or []), plan['add'] + extra)
            if add < plan['add']:
                LOG.info('action %s: trimmed by %d to %d server(s)',
                         action['id'], plan['add'] - add, add)
                plan['add'] = add
            return
        if extra == 0:
            return
        try:
            self._cloud(action).check_quota(plan['flavor'], extra)
        except exception.ElastmanException as exc:
            result['declined'] = int(result.get('declined', 0)) + extra
            result.setdefault('warnings', []).append(
                'top-up of %d server(s) declined: %s' % (extra, exc))
            LOG.warning('action %s: top-up of %d declined: %s', action['id'],
                        extra, exc)
            return
        plan['add'] += extra
        LOG.info('action %s: topped up by %d to %d server(s)', action['id'],
                 extra, plan['add'])

    def _leave_creating(self, action: dict, result: dict) -> bool:
        """Advance to ``joining`` if no top-up or trim came since the parameters were
        last read; False when one did (taken in, or declined).
        """
        expected = action.get('params') if action['kind'] == 'scale_out' \
            else None
        try:
            self._advance(action, 'joining', result, expected_params=expected)
        except exception.Conflict:
            if expected is None:
                raise
            self._take_changes(action, result)
            if action['params'] == expected:
                raise         # no top-up or trim: the step itself moved on
            return False
        return True

    def _join_group(self, action: dict, result: dict,
                    remaining: int) -> list[list[int] | None]:
        """The tokens of each server of the next group to create: ``[None]``
        (one server, Cassandra picks its tokens) unless more than one may
        join at once; then, for up to ``[actuator] concurrent_joins``
        servers, tokens that bisect the largest ranges of the live ring
        (:func:`elastman.cassandra.tokens.allocate`), as many per server as
        the ring's nodes hold. One server, and a warning in the result,
        when the compute driver cannot pass tokens on or no node answers.
        """
        size = min(self.opts.concurrent_joins, remaining)
        if size < 2 or result['plan'].get('replace_address') or not \
                members.serving_nodes(self.store.nodes.list(action['cluster_id'])):
            return [None]
        cloud = self._cloud(action)
        if not cloud.supports_initial_tokens:
            warning = ('concurrent_joins %d: the %s compute driver cannot '
                       'give a new node its tokens; joining one at a time'
                       % (self.opts.concurrent_joins, cloud.name))
        else:
            try:
                tool, ring = self._live_ring(action)
                num_tokens = max(s.tokens for s in ring.values())
                taken = tool.ring_tokens()
                if not taken:
                    raise ValueError('nodetool ring lists no token')
                return tokens_mod.allocate(taken, size, num_tokens)
            except (exception.ElastmanException, ValueError) as exc:
                warning = ('concurrent_joins %d: no ring to place tokens '
                           'in (%s); joining one at a time'
                           % (self.opts.concurrent_joins, exc))
        warnings = result.setdefault('warnings', [])
        if warning not in warnings:
            LOG.warning('action %s: %s', action['id'], warning)
            warnings.append(warning)
        return [None]

    def _register(self, action: dict, plan: dict,
                  server: compute.Server) -> None:
        """Wait for the server to be ACTIVE and record its node as JOINING
        (a node already recorded keeps its state).
        """
        server = self._cloud(action).wait_for_state(
            server.id, compute.ACTIVE, timeout=self.opts.boot_timeout)
        try:
            if self.store.nodes.get(action['cluster_id'],
                                    server.id)['state'] == nodes_store.UN:
                return
        except exception.NotFound:
            pass
        self.store.nodes.upsert(
            action['cluster_id'], server.id, server_id=server.id,
            address=server.address, flavor=server.flavor, state=nodes_store.JOINING,
            seed=plan.get('seed', not plan['previous']),
            cql_port=server.cql_port,
            jmx_host=server.jmx_host or '127.0.0.1', jmx_port=server.jmx_port,
            host=server.host)

    def _wait_joined(self, action: dict, server_ids: list[str]) -> None:
        deadline = time.monotonic() + self.opts.join_timeout
        waiting = list(server_ids)
        denied: dict[str, float] = {}      # server -> first refusal
        while waiting:
            for server_id in list(waiting):
                node = self.store.nodes.get(action['cluster_id'], server_id)
                if node['state'] == nodes_store.UN:
                    waiting.remove(server_id)
                    continue
                server = self._cloud(action).get(server_id)
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
                                            state=nodes_store.UN)
                    waiting.remove(server_id)
            if waiting and time.monotonic() > deadline:
                raise exception.ElastmanException(
                    'node(s) %s did not join within %ss'
                    % (', '.join(waiting), self.opts.join_timeout))
            if waiting:
                self._hold_lease(action)
                time.sleep(2)

    def _is_up_normal(self, cluster_id, node: dict) -> bool:
        """True once the node is UN and, for a cluster with credentials or
        TLS, accepts a CQL login with them; AccessDenied when it refuses.
        """
        try:
            ring = self._tool(cluster_id, node).status()
        except nodetool_mod.NodetoolAccessDenied:
            raise
        except exception.NodetoolError:
            return False  # JMX not up yet
        if not any(s.address == node['address'] and s.up_normal
                   for s in ring):
            return False
        if not self._peer_sees_normal(cluster_id, node):
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

    def _peer_sees_normal(self, cluster_id, node: dict) -> bool:
        """Whether the ring agrees that ``node`` joined: a peer already sees
        it UN through gossip, which reaches the others a second or two
        after the node itself. True when no peer answers: the node's own
        word decides then.
        """
        ring = self._peer_ring(cluster_id, node)
        return ring is None or any(
            s.address == node['address'] and s.up_normal for s in ring)
