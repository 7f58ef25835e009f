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
"""Which of a cluster's nodes serve, and which of them elastman may remove."""
from __future__ import annotations

from elastman.store import nodes as nodes_store

#: Node states that count in the cluster (``UNKNOWN``/None: not yet read).
SERVING = nodes_store.LIVE + (None,)


def serving_nodes(nodes: list[dict]) -> list[dict]:
    """Nodes that count in the cluster (not joining, leaving or failed)."""
    return [n for n in nodes if n.get('state') in SERVING]


def removable(node: dict) -> bool:
    """Whether elastman may remove ``node``: it has a server elastman can
    delete (one it created, or one of the cluster's project it mapped).
    """
    return bool(node.get('server_id'))
