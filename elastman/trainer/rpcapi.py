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
"""Client side of the elastman-trainer RPC API.

API version history:
    1.0 - status()
    1.1 - capacities(), model_versions()
"""
from elastman.common import rpc


class TrainerAPI(rpc.RPCClient):
    WORKER = 'trainer'
    VERSION = '1.1'

    def status(self, ctxt, server: str | None = None) -> dict:
        return self.call(ctxt, 'status', version='1.0', server=server)

    def capacities(self, ctxt, cluster_id: str,
                   workloads: dict[str, dict]) -> dict[str, dict]:
        return self.call(ctxt, 'capacities', version='1.1',
                         cluster_id=str(cluster_id), workloads=workloads)

    def model_versions(self, ctxt, cluster_id: str) -> dict:
        return self.call(ctxt, 'model_versions', version='1.1',
                         cluster_id=str(cluster_id))
