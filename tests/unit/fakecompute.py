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
"""A compute driver whose servers live in a dict, for tests.

Subclasses say how a server is made (``create``); finding, listing and
deleting are the same for all.
"""
from __future__ import annotations

from elastman.compute import base as compute


class MemoryDriver(compute.ComputeDriver):
    """Servers in ``self.servers`` (id -> Server); one flavour, 'small'."""

    name = 'fake'

    def __init__(self, conf=None) -> None:
        super().__init__(conf)
        self.servers: dict[str, compute.Server] = {}
        self.deleted: list[str] = []

    def flavors(self):
        return {'small': {}}

    def get(self, server_id):
        if server_id not in self.servers:
            raise compute.ServerNotFound(id=server_id)
        return self.servers[server_id]

    def list(self, cluster_id=None):
        return [s for s in self.servers.values()
                if cluster_id is None or s.cluster_id == str(cluster_id)]

    def delete(self, server_id):
        if self.servers.pop(server_id, None) is not None:
            self.deleted.append(server_id)
