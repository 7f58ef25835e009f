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
"""Client side of the elastman-hostagent RPC API; the monitor is its caller.

API version history:
    1.0 - status(), list_domains(), get_domain(), push_latency(),
          controller_status()
    1.1 - push_latency() may carry the node's JMX endpoint (jmx_host,
          jmx_port), where the agent polls the VM's latency histogram
    2.0 - push_latency() only: the other methods had no caller and are gone
"""
from elastman.common import rpc


class HostAgentAPI(rpc.RPCClient):
    WORKER = 'hostagent'
    VERSION = '2.0'

    def push_latency(self, ctxt, server: str, vm: str,
                     latency_ms: float, jmx_host: str | None = None,
                     jmx_port: int | None = None) -> None:
        """Cast a VM's read p99 (and where its node's JMX endpoint is) to
        the agent of compute host ``server``.
        """
        self.cast(ctxt, 'push_latency', version='2.0', server=server,
                  vm=vm, latency_ms=latency_ms, jmx_host=jmx_host or None,
                  jmx_port=int(jmx_port) if jmx_host and jmx_port else None)
