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
"""Client side of the elastman-predictor RPC API.

API version history:
    1.0 - status()
    1.1 - forecast()
"""
from elastman.common import rpc


class PredictorAPI(rpc.RPCClient):
    WORKER = 'predictor'
    VERSION = '1.1'

    def status(self, ctxt, server: str | None = None) -> dict:
        return self.call(ctxt, 'status', version='1.0', server=server)

    def forecast(self, ctxt, cluster_id: str, metric: str) -> dict:
        return self.call(ctxt, 'forecast', version='1.1',
                         cluster_id=str(cluster_id), metric=metric)
