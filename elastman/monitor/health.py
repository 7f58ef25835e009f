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
"""Node health: when a node of a managed cluster counts as dead.

A node is DEAD when both hold:

* it missed its last ``[monitor] dead_after_missed`` samples (no CQL or JMX
  answer in those rounds), and
* ``[monitor] dead_confirmations`` live peers (nodes that answered this
  round) see it ``DN`` in ``nodetool status`` (all live peers when fewer
  are left), and none sees it up.

The first condition alone cannot tell a dead node from a network path that
only the monitor lost; the second asks Cassandra's own failure detector. The
node's row then says DEAD, why and since when; the actuator's healer replaces
it (``auto_heal``). A DEAD node that answers again goes back to UN.
"""
from __future__ import annotations

import uuid
from typing import Callable, Iterable

from oslo_log import log as logging

from elastman.cassandra import nodetool as nodetool_mod
from elastman.common import exception
from elastman.store import nodes as nodes_store

LOG = logging.getLogger(__name__)


class HealthChecker:
    """Marks nodes DEAD (and back UN) from the monitor's rounds."""

    def __init__(self, conf, store,
                 nodetool_factory: Callable[[str, int], object]
                 | None = None) -> None:
        self.conf = conf
        self.store = store
        self._nodetool = nodetool_factory or (
            lambda host, port, access=None: nodetool_mod.Nodetool(
                conf, host, port, access=access))

    def check(self, cluster_id: uuid.UUID, nodes: Iterable[dict],
              samples: Iterable[dict], access=None) -> list[dict]:
        """After one round: update the health of the cluster's nodes from
        this round's ``samples`` (``access``: the cluster's credentials and
        TLS, for nodetool); returns the changes made.
        """
        opts = self.conf.monitor
        up = {s['node_id']: bool(s.get('up')) for s in samples}
        nodes = list(nodes)
        changes = []
        suspects = []
        for node in nodes:
            node_id, state = node['node_id'], node.get('state')
            if node_id not in up:
                continue
            if up[node_id]:
                if state == nodes_store.DEAD and self.store.nodes.change_state(
                        cluster_id, node_id, nodes_store.UN, 'answering again',
                        (nodes_store.DEAD,)):
                    LOG.info('node %s of cluster %s answers again: UN',
                             node_id, cluster_id)
                    changes.append({'node_id': node_id, 'state': nodes_store.UN,
                                    'reason': 'answering again'})
                continue
            if state not in nodes_store.LIVE:
                continue
            missed = self._missed(cluster_id, node_id, opts.dead_after_missed)
            if missed >= opts.dead_after_missed:
                suspects.append(node)
        if not suspects:
            return changes
        live = [n for n in nodes if up.get(n['node_id'])
                and n.get('state') in nodes_store.LIVE]
        votes = self._ask_peers(live, suspects, opts.dead_confirmations,
                                access)
        for node in suspects:
            down, seen_up = votes.get(node['address'], ([], []))
            needed = min(opts.dead_confirmations, len(live))
            if seen_up or needed == 0 or len(down) < needed:
                LOG.warning(
                    'node %s of cluster %s missed %d samples but is not '
                    'confirmed dead (DN at %s, up at %s, %d live peers)',
                    node['node_id'], cluster_id, opts.dead_after_missed,
                    down or 'none', seen_up or 'none', len(live))
                continue
            reason = ('missed its last %d samples; DN at %s'
                      % (opts.dead_after_missed, ', '.join(down)))
            if self.store.nodes.change_state(cluster_id, node['node_id'],
                                             nodes_store.DEAD, reason,
                                             nodes_store.LIVE):
                LOG.warning('node %s (%s) of cluster %s is DEAD: %s',
                            node['node_id'], node['address'], cluster_id,
                            reason)
                changes.append({'node_id': node['node_id'],
                                'state': nodes_store.DEAD, 'reason': reason})
        return changes

    def _missed(self, cluster_id, node_id: str, count: int) -> int:
        """How many of the node's newest ``count`` samples are misses."""
        rows = self.store.samples.for_node(cluster_id, node_id, limit=count)
        missed = 0
        for row in rows:
            if row.get('up') is not False:
                break
            missed += 1
        return missed

    def _ask_peers(self, live: list[dict], suspects: list[dict],
                   wanted: int, access=None
                   ) -> dict[str, tuple[list[str], list[str]]]:
        """Ask live peers how they see the suspects: address -> (peers that
        see it down, peers that see it up). Stops after ``wanted`` peers
        answered.
        """
        votes: dict[str, tuple[list[str], list[str]]] = {
            n['address']: ([], []) for n in suspects}
        answered = 0
        for peer in live:
            if answered >= wanted:
                break
            host = peer.get('jmx_host') or '127.0.0.1'
            port = peer.get('jmx_port') or 7199
            tool = (self._nodetool(host, port) if access is None
                    else self._nodetool(host, port, access=access))
            try:
                ring = {s.address: s for s in tool.status()}
            except exception.NodetoolError as exc:
                LOG.info('peer %s cannot tell the ring: %s', peer['node_id'],
                         exc)
                continue
            answered += 1
            for address, (down, seen_up) in votes.items():
                entry = ring.get(address)
                if entry is None:
                    continue
                (down if entry.status == 'D' else seen_up).append(
                    peer.get('address') or peer['node_id'])
        return votes
