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
"""Client side of the elastman-actuator RPC API; the API is its caller.

API version history:
    1.0 - status()
    1.1 - scale()
    2.0 - scale() only: status() had no caller and is gone
"""
from elastman.common import rpc


class ActuatorAPI(rpc.RPCClient):
    WORKER = 'actuator'
    VERSION = '2.0'

    def scale(self, ctxt, cluster_id: str, count: int,
              flavor: str | None = None, action_id: str | None = None,
              retry: int | None = None) -> None:
        """Ask for ``count`` nodes (of ``flavor``); the request is already
        journalled as the PENDING action ``action_id``.

        ``retry`` bounds how often the broker is retried (None: forever).
        """
        cctxt = self._client.prepare(version='2.0', retry=retry)
        cctxt.cast(ctxt, 'scale', cluster_id=cluster_id, count=count,
                   flavor=flavor, action_id=action_id)
