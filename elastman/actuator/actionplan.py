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
"""What an action will do: the servers it adds, the nodes it removes and the
nodes it cleans up.

A ``replace`` action heals a dead node: a new server of its flavour boots with
``replace_address_first_boot`` and takes over the dead node's tokens, then the
dead server is deleted. Where that is impossible (the flavour is gone, or the
compute driver cannot pass the option), ``nodetool removenode`` drops the dead
node from the ring first, then a scale-out by one adds a new node and cleans
up (:func:`replacement` says which).
"""
from __future__ import annotations

from typing import Callable

from elastman.actuator import decision as decision_mod
from elastman.actuator import members
from elastman.actuator import policy as policy_mod
from elastman.common import exception
from elastman.compute import base as compute
from elastman.store import nodes as nodes_store


def plan(store, cloud: Callable[[], compute.ComputeDriver],
         action: dict) -> dict:
    """Turn a request into servers to add and nodes to remove.

    ``cloud`` gives the driver acting on the cluster's servers (asked for
    only when healing a dead node needs it).
    """
    params = action.get('params') or {}
    cluster = store.clusters.get(action['cluster_id'])
    spec = cluster.get('spec') or {}
    nodes = members.serving_nodes(store.nodes.list(action['cluster_id']))
    kind = action['kind']
    flavor = params.get('flavor') or spec.get('flavor')
    policy = policy_mod.ScalingPolicy.for_cluster(cluster)
    if kind == 'scale_out':
        return with_cleanup(policy, nodes, {
            'add': int(params['count']), 'flavor': params['flavor'],
            'remove': [], 'previous': [n['node_id'] for n in nodes]})
    if kind == 'scale_in':
        by_id = {n['node_id']: n for n in nodes}
        keep = [n for n in params['nodes']
                if n in by_id and not members.removable(by_id[n])]
        if keep:
            raise exception.ElastmanException(
                'node(s) %s have no server elastman manages; elastman '
                'does not remove them' % ', '.join(keep))
        return with_cleanup(policy, nodes, {
            'add': 0, 'flavor': None, 'remove': list(params['nodes']),
            'previous': [n['node_id'] for n in nodes]})
    if kind == 'replace':
        return with_cleanup(
            policy, nodes, plan_replace(store, cloud(), action, cluster, nodes))
    if kind == 'delete':
        return {'add': 0, 'flavor': None, 'delete_cluster': True,
                'remove': [n['node_id'] for n in
                           store.nodes.list(action['cluster_id'])],
                'previous': []}
    if kind in ('create', 'scale'):
        target = int(params['count'])
        delta = target - len(nodes)
        if delta >= 0:
            if delta and not flavor:
                raise exception.ElastmanException(
                    'no flavour to grow cluster %s with' % cluster['id'])
            return with_cleanup(policy, nodes, {
                'add': delta, 'flavor': flavor, 'remove': [],
                'previous': [n['node_id'] for n in nodes]})
        infos = [decision_mod.NodeInfo(n['node_id'], n.get('flavor') or '',
                                       bool(n.get('seed')),
                                       removable=members.removable(n))
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
        return with_cleanup(policy, nodes, {
            'add': 0, 'flavor': None, 'remove': remove,
            'previous': [n['node_id'] for n in nodes]})
    raise exception.ElastmanException('unknown action kind %r' % kind)


def with_cleanup(policy: policy_mod.ScalingPolicy, nodes: list[dict],
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


def plan_replace(store, cloud: compute.ComputeDriver, action: dict,
                 cluster: dict, serving: list[dict]) -> dict:
    """Replace a dead node in place, or remove it and add a new one."""
    params = action.get('params') or {}
    dead = store.nodes.get(action['cluster_id'], params['node'])
    mode, why, flavor = replacement(cloud, cluster, dead,
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
    store.nodes.upsert(action['cluster_id'], dead['node_id'],
                       state=nodes_store.REPLACING)
    return plan


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
