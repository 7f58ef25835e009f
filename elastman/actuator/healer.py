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
"""Self-healing: what to do about a node the monitor marked DEAD.

Each actuator round, for a cluster with a DEAD node (the oldest first): once
it has been dead for the policy's ``heal_grace_s``, a ``replace`` action is
due. With ``auto_heal`` on (and not in dry-run) the actuator journals it; the
executor boots a server of the dead node's flavour that takes over its tokens
(``replace_address_first_boot``), or, where that is impossible, runs
``nodetool removenode`` and a scale-out by one; then it deletes the dead
server. Otherwise the replacement is only recommended in the decision record.
"""
from __future__ import annotations

from typing import Callable

from oslo_log import log as logging

from elastman.actuator import decision as decision_mod
from elastman.actuator import policy as policy_mod
from elastman.common import timestamps
from elastman.store import nodes as nodes_store

LOG = logging.getLogger(__name__)

REPLACE = 'replace'


def dead_nodes(nodes: list[dict]) -> list[dict]:
    """DEAD nodes, longest dead first."""
    dead = [n for n in nodes if n.get('state') == nodes_store.DEAD]
    return sorted(dead, key=lambda n: (
        timestamps.epoch(n.get('state_changed_at')) or 0.0, n['node_id']))


#: ``how(dead node) -> (mode, why, flavour)``: whether a new server can take
#: over the node's tokens ('replace') or the node is removed and a node of
#: ``flavour`` added ('removenode', and why); None when it cannot tell.
How = Callable[[dict], 'tuple | None']


def heal_decision(policy: policy_mod.ScalingPolicy, nodes: list[dict],
                  now: float, how: How | None = None
                  ) -> decision_mod.Decision | None:
    """What to do about the cluster's dead nodes now (None: none is dead).

    A ``replace`` decision that acts when auto_heal is on and not in
    dry-run; a recommendation (``dry_run`` set) otherwise; ``none`` while
    the grace period runs or when the node cannot be replaced here. With
    ``how``, the decision says how the node is replaced and why.
    """
    dead = dead_nodes(nodes)
    if not dead:
        return None
    node = dead[0]
    since = timestamps.epoch(node.get('state_changed_at')) or now
    age = now - since
    what = ('node %s (%s, flavour %s) DEAD for %.0f s: %s'
            % (node['node_id'], node.get('address'), node.get('flavor'),
               age, node.get('state_reason') or 'no reason recorded'))
    inputs = {'dead_node': node['node_id'], 'address': node.get('address'),
              'dead_since': since, 'dead_for_s': age,
              'dead_reason': node.get('state_reason'),
              'heal_grace_s': policy.heal_grace_s,
              'auto_heal': policy.auto_heal,
              'dead_nodes': [n['node_id'] for n in dead]}
    d = decision_mod.Decision(kind=decision_mod.NONE, reason='', at=now,
                              flavor=node.get('flavor'), inputs=inputs,
                              dry_run=policy.dry_run or not policy.auto_heal)
    if not node.get('server_id'):
        d.reason = ('no action: %s; elastman manages no server for it: '
                    'replace it by hand' % what)
        d.blocked_by = 'unmanaged'
        return d
    if age < policy.heal_grace_s:
        d.reason = ('no action yet: %s; heal_grace_s=%g leaves %.0f s'
                    % (what, policy.heal_grace_s, policy.heal_grace_s - age))
        d.blocked_by = 'grace'
        return d
    d.kind, d.count, d.remove_nodes = REPLACE, 1, [node['node_id']]
    d.reason = 'replace %s, beyond heal_grace_s=%g' % (
        what, policy.heal_grace_s)
    found = how(node) if how is not None else None
    if found is not None:
        mode, why, flavor = found
        d.inputs['mode'] = mode
        if mode == 'replace':
            d.reason += ('; a new server of flavour %s takes over its tokens'
                         % flavor)
        else:
            d.inputs['why_removenode'] = why
            d.reason += ('; no replacement can take over its tokens (%s): '
                         'nodetool removenode, then a scale-out by one of '
                         'flavour %s' % (why, flavor))
    if policy.dry_run:
        d.reason = 'recommended (dry-run): ' + d.reason
    elif not policy.auto_heal:
        d.reason = 'recommended (auto_heal off): ' + d.reason
    return d
