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
"""Client side of the elastman-monitor RPC API.

API version history:
    1.0 - status()
    1.1 - latest_samples(cluster_id=None): newest sample of each node
          sample_now(cluster_id): sample one cluster at once, return samples
"""
from elastman.common import rpc


class MonitorAPI(rpc.RPCClient):
    WORKER = 'monitor'
    VERSION = '1.1'

    def status(self, ctxt, server: str | None = None) -> dict:
        return self.call(ctxt, 'status', version='1.0', server=server)

    def latest_samples(self, ctxt, cluster_id: str | None = None,
                       server: str | None = None) -> list[dict]:
        return self.call(ctxt, 'latest_samples', version='1.1',
                         server=server,
                         cluster_id=str(cluster_id) if cluster_id else None)

    def sample_now(self, ctxt, cluster_id: str,
                   server: str | None = None) -> list[dict]:
        return self.call(ctxt, 'sample_now', version='1.1', server=server,
                         cluster_id=str(cluster_id))
