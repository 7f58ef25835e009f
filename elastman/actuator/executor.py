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

A ``replace`` action heals a dead node: a new server of its flavour boots with
``replace_address_first_boot`` and takes over the dead node's tokens
(creating, joining), then the dead server is deleted (deleting). Where that is
impossible (the flavour is gone, or the compute driver cannot pass the
option), ``nodetool removenode`` drops the dead node from the ring first
(removing), then a scale-out by one adds a new node and cleans up.

After a scale-out the old nodes still hold the ranges the new ones took
over until ``nodetool cleanup`` drops them, which costs them CPU and disk
bandwidth for a while. With the scaling policy's ``cleanup`` at
``before_removal`` (the default) the scale-out ends once its nodes have
joined and marks the old nodes (``details['cleanup_pending']``); the next
action that takes a node out of the ring (a scale-in, a smaller ``scale``, a
``removenode``) first cleans up every marked node that stays (cleaning, or
inside removing). A node that got a range back while it still held that
range's old rows could resurrect rows whose tombstones were purged meanwhile;
cleaning up before any removal rules that out. ``after_join`` cleans up
right after the join.

Failures leave the cluster consistent: servers of a scale-out that never
became ACTIVE or whose node never joined are deleted and the action FAILED
(with a failure code the back-off counts by); a decommission that fails leaves
the node and its server in place.

A scale-in removes its nodes one at a time and reads its nodes again before
each: the guard may keep those it has not begun to remove while a VM is in
its warning band (``ActionRepository.keep``); the node leaving finishes.

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
New servers boot with the cluster's image, networks, security groups, zone
and server group (``spec``, defaults from the driver's configuration) and
learn their seeds from the executor. Only nodes with a server of the
cluster's project are ever removed: a node elastman found in a registered
ring without a server it can map is not elastman's to remove.
"""
from __future__ import annotations

import datetime
import re
import threading
import time
from typing import Callable
import uuid

from oslo_log import log as logging

from elastman.actuator import decision as decision_mod
from elastman.actuator import discovery
from elastman.actuator import policy as policy_mod
from elastman.cassandra import access as access_mod
from elastman.cassandra import nodetool as nodetool_mod
from elastman.cassandra import tokens as tokens_mod
from elastman.common import exception
from elastman.common import trusts
from elastman.compute import base as compute

LOG = logging.getLogger(__name__)

ACTION_TAG = 'elastman_action'

STEPS = ('requested', 'planned', 'removing', 'creating', 'joining',
         'cleaning', 'decommissioning', 'deleting', 'done')
SERVING = ('UN', 'ACTIVE', 'UNKNOWN', None)
#: seeds a new node is given (Cassandra's advice: a few per datacentre)
MAX_SEEDS = 3
#: Checkpoints of a running action, where the lease is renewed and a test's
#: fault hook may kill the process: right after each step is journalled, and
#: inside the steps that have side effects.
CHECKPOINTS = STEPS[1:] + ('creating:server', 'decommissioning:leaving',
                           'deleting:server', 'removing:node')
#: Seconds between two lease renewals inside a long step.
LEASE_CHECK_INTERVAL = 5.0

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


class LeaseLost(exception.ElastmanException):
    msg_fmt = ('Lease %(lease)s is no longer held by %(holder)s; stopping '
               'at step %(step)s')


def failure_code(exc: BaseException) -> str:
    """A short, stable name for why an action failed."""
    text = str(exc)
    for code, pattern in _FAILURE_CODES:
        if pattern.search(text):
            return code
    return type(exc).__name__


def lease_name(cluster_id) -> str:
    """The store lease whose holder alone acts on a cluster (an actuator, or
    ``elastman-manage local-cluster`` when none runs).
    """
    return 'actuator/%s' % cluster_id


def serving_nodes(nodes: list[dict]) -> list[dict]:
    """Nodes that count in the cluster (not joining, leaving or failed)."""
    return [n for n in nodes if n.get('state') in SERVING]


def removable(node: dict) -> bool:
    """Whether elastman may remove ``node``: it has a server elastman can
    delete (one it created, or one of the cluster's project it mapped).
    """
    return bool(node.get('server_id'))


def replacement(cloud: compute.ComputeDriver, cluster: dict, dead: dict,
                mode: str | None = None) -> tuple[str, str, str | None]:
    """How the dead node ``dead`` is healed: ``(mode, why, flavour)``.

    ``replace`` (why empty) when a new server of its flavour can take over
    its tokens; else ``removenode`` and why, with the flavour of the node the
    scale-out after the removal adds: the dead node's when it still exists,
    else the cluster's, else the cheapest of its policy's flavours the
    cloud has (None: none does). ``mode`` forces one of the two.
    """
    spec = cluster.get('spec') or {}
    flavor = dead.get('flavor') or spec.get('flavor')
    if mode == 'replace':
        return mode, '', flavor
    available = cloud.flavors()
    why = 'removenode asked for' if mode == 'removenode' else ''
    if not why:
        if not cloud.supports_replace:
            why = 'the %s compute driver cannot boot a replacement' % (
                cloud.name)
        elif flavor not in available:
            why = 'flavour %s no longer exists' % flavor
        elif not dead.get('address'):
            why = 'the dead node has no known address'
        else:
            return 'replace', '', flavor
    policy = policy_mod.ScalingPolicy.for_cluster(cluster)
    costs = policy.flavor_costs
    found = [f for f in [flavor, spec.get('flavor'), policy.default_flavor]
             + sorted(costs, key=lambda f: (costs[f], f))
             if f and f in available]
    return 'removenode', why, found[0] if found else None


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

    # -- entry point -------------------------------------------------------------
    def run(self, action: dict) -> dict:
        """Drive ``action`` from its journalled step to the end."""
        self._access_of.pop(str(action['cluster_id']), None)  # may change
        result = dict(action.get('result') or {})
        if action['state'] == 'PENDING':
            action['state'] = 'RUNNING'
        try:
            self._hold_lease(action, force=True)
        except LeaseLost as exc:
            LOG.warning('%s', exc)
            return action
        self._set_cluster_state(action['cluster_id'], 'SCALING',
                                '%s in progress' % action['kind'])
        try:
            self._drive(action, result)
        except LeaseLost as exc:
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
            result['plan'] = self._plan(action)
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

    # -- planning ----------------------------------------------------------------
    def _plan(self, action: dict) -> dict:
        """Turn a request into servers to add and nodes to remove."""
        params = action.get('params') or {}
        cluster = self.store.clusters.get(action['cluster_id'])
        spec = cluster.get('spec') or {}
        nodes = serving_nodes(self.store.nodes.list(action['cluster_id']))
        kind = action['kind']
        flavor = params.get('flavor') or spec.get('flavor')
        policy = policy_mod.ScalingPolicy.for_cluster(cluster)
        if kind == 'scale_out':
            return self._with_cleanup(policy, nodes, {
                'add': int(params['count']), 'flavor': params['flavor'],
                'remove': [], 'previous': [n['node_id'] for n in nodes]})
        if kind == 'scale_in':
            by_id = {n['node_id']: n for n in nodes}
            keep = [n for n in params['nodes']
                    if n in by_id and not removable(by_id[n])]
            if keep:
                raise exception.ElastmanException(
                    'node(s) %s have no server elastman manages; elastman '
                    'does not remove them' % ', '.join(keep))
            return self._with_cleanup(policy, nodes, {
                'add': 0, 'flavor': None, 'remove': list(params['nodes']),
                'previous': [n['node_id'] for n in nodes]})
        if kind == 'replace':
            return self._with_cleanup(
                policy, nodes, self._plan_replace(action, cluster, nodes))
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
                return self._with_cleanup(policy, nodes, {
                    'add': delta, 'flavor': flavor, 'remove': [],
                    'previous': [n['node_id'] for n in nodes]})
            infos = [decision_mod.NodeInfo(n['node_id'], n.get('flavor') or '',
                                           bool(n.get('seed')),
                                           removable=removable(n))
                     for n in nodes]
            remove: list[str] = []
            for flavor_name in sorted({n.flavor for n in infos}):
                remove += decision_mod.choose_nodes_to_remove(
                    policy, [n for n in infos if n.node_id not in remove],
                    {}, flavor_name, -delta - len(remove))
            if len(remove) < -delta:
                raise exception.ElastmanException(
                    'cannot remove %d nodes: %d of the %d serving nodes '
                    'have a server elastman manages, and the last seed '
                    'stays' % (-delta, sum(i.removable for i in infos),
                               len(nodes)))
            return self._with_cleanup(policy, nodes, {
                'add': 0, 'flavor': None, 'remove': remove,
                'previous': [n['node_id'] for n in nodes]})
        raise exception.ElastmanException('unknown action kind %r' % kind)

    @staticmethod
    def _with_cleanup(policy: policy_mod.ScalingPolicy, nodes: list[dict],
                      plan: dict) -> dict:
        """Add to ``plan`` the nodes it cleans up and when.

        ``cleanup_before``: a plan that takes a node out of the ring (a
        removal, a ``removenode``) first cleans up every marked node that
        stays. ``cleanup``: a scale-out cleans up the old nodes once its
        nodes joined, unless the policy defers it; then ``defer_cleanup``
        lists the nodes it marks instead.
        """
        takes_out = set(plan['remove'])
        plan['cleanup_before'] = [
            n['node_id'] for n in nodes
            if n['node_id'] not in takes_out
            and (n.get('details') or {}).get('cleanup_pending')
        ] if takes_out or plan.get('removenode') else []
        plan['cleanup'], plan['defer_cleanup'] = [], []
        if plan['add'] and plan['previous']:
            if policy.cleanup == 'after_join':
                plan['cleanup'] = list(plan['previous'])
            else:
                plan['defer_cleanup'] = list(plan['previous'])
        return plan

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

    def _plan_replace(self, action: dict, cluster: dict,
                      serving: list[dict]) -> dict:
        """Replace a dead node in place, or remove it and add a new one."""
        params = action.get('params') or {}
        dead = self.store.nodes.get(action['cluster_id'], params['node'])
        mode, why, flavor = replacement(self._cloud(action), cluster, dead,
                                        params.get('mode'))
        if not flavor:
            raise exception.ElastmanException(
                'no flavour to replace node %s with%s' % (
                    dead['node_id'], ': %s, and none of the cluster\'s '
                    'flavours exists' % why if why else ''))
        others = [n['node_id'] for n in serving
                  if n['node_id'] != dead['node_id']]
        plan = {'add': 1, 'flavor': flavor, 'remove': [],
                'dead': [dead['node_id']], 'dead_address': dead['address'],
                'mode': mode, 'seed': False}
        if mode == 'replace':
            # the new node takes exactly the dead node's ranges: no other
            # node gives any away, so there is nothing to clean up
            plan.update(previous=[], replace_address=dead['address'])
        else:
            plan.update(previous=others, removenode=True,
                        why_removenode=why)
        self.store.nodes.upsert(action['cluster_id'], dead['node_id'],
                                state='REPLACING')
        return plan

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

    def _live_ring(self, action: dict) -> tuple:
        """nodetool on the first live node that answers, and its ring by
        address.
        """
        last_error = None
        for node in serving_nodes(self.store.nodes.list(action['cluster_id'])):
            tool = self._tool(action['cluster_id'], node)
            try:
                return tool, {s.address: s for s in tool.status()}
            except exception.NodetoolError as exc:
                last_error = exc
        raise exception.ElastmanException(
            'no live node of cluster %s answers nodetool: %s'
            % (action['cluster_id'], last_error))

    # -- scale out -----------------------------------------------------------------
    def _tagged(self, action: dict) -> list[compute.Server]:
        return [s for s in self._cloud(action).list(str(action['cluster_id']))
                if s.metadata.get(ACTION_TAG) == str(action['id'])]

    def _seeds(self, action: dict) -> list[str]:
        """Addresses a new node joins through: the cluster's serving seed
        nodes (else any serving nodes), at most MAX_SEEDS; none for the
        first node of a new cluster, which seeds itself.
        """
        nodes = [n for n in serving_nodes(self.store.nodes.list(
            action['cluster_id'])) if n.get('address')
            and n.get('state') != 'JOINING']
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
                serving_nodes(self.store.nodes.list(action['cluster_id'])):
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
                                    server.id)['state'] == 'UN':
                return
        except exception.NotFound:
            pass
        self.store.nodes.upsert(
            action['cluster_id'], server.id, server_id=server.id,
            address=server.address, flavor=server.flavor, state='JOINING',
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
                if node['state'] == 'UN':
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
                                            state='UN')
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

    def _peer_ring(self, cluster_id, node: dict
                   ) -> list[nodetool_mod.NodeStatus] | None:
        """The ring as the first serving node other than ``node`` that
        answers on JMX sees it (a seed first); None when none answers.
        """
        peers = [n for n in serving_nodes(self.store.nodes.list(cluster_id))
                 if n['node_id'] != node['node_id'] and n.get('jmx_port')]
        for peer in sorted(peers, key=lambda n: not n.get('seed')):
            try:
                return self._tool(cluster_id, peer).status()
            except exception.NodetoolError:
                continue
        return None

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

    # -- scale in --------------------------------------------------------------------
    def _decommission(self, action: dict, result: dict) -> None:
        if result['plan'].get('delete_cluster'):
            return  # the whole cluster goes: no data to keep
        done = result.setdefault('decommissioned', [])
        for node_id in list(result['plan']['remove']):
            if node_id in done or not self._claim_removal(action, result, node_id):
                continue
            node = self.store.nodes.get(action['cluster_id'], node_id)
            self.store.nodes.upsert(action['cluster_id'], node_id,
                                    state='LEAVING')
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
                                    state='UN')
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
        serving = serving_nodes(self.store.nodes.list(action['cluster_id']))
        left = len([n for n in serving if n.get('state') != 'LEAVING'])
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
                                        node_id)['state'] == 'REPLACING':
                    self.store.nodes.upsert(action['cluster_id'], node_id,
                                            state='DEAD')
            except exception.NotFound:
                pass
            except Exception:
                LOG.exception('could not set node %s back to DEAD', node_id)
        try:
            left = serving_nodes(self.store.nodes.list(action['cluster_id']))
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
