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
"""Client side of the elastman-hostagent RPC API.

API version history:
    1.0 - status(), list_domains(), get_domain(), push_latency(),
          controller_status()
    1.1 - push_latency() may carry the node's JMX endpoint (jmx_host,
          jmx_port), where the agent polls the VM's latency histogram
"""
from elastman.common import rpc


class HostAgentAPI(rpc.RPCClient):
    WORKER = 'hostagent'
    VERSION = '1.1'

    def status(self, ctxt, server: str | None = None) -> dict:
        return self.call(ctxt, 'status', version='1.0', server=server)

    def list_domains(self, ctxt, server: str) -> list:
        return self.call(ctxt, 'list_domains', version='1.0', server=server)

    def get_domain(self, ctxt, server: str, uuid: str) -> dict | None:
        return self.call(ctxt, 'get_domain', version='1.0', server=server,
                         uuid=uuid)

    def push_latency(self, ctxt, server: str, vm: str,
                     latency_ms: float, jmx_host: str | None = None,
                     jmx_port: int | None = None) -> None:
        if jmx_host and jmx_port:
            self.cast(ctxt, 'push_latency', version='1.1', server=server,
                      vm=vm, latency_ms=latency_ms, jmx_host=jmx_host,
                      jmx_port=int(jmx_port))
        else:
            self.cast(ctxt, 'push_latency', version='1.0', server=server,
                      vm=vm, latency_ms=latency_ms)

    def controller_status(self, ctxt, server: str) -> dict:
        return self.call(ctxt, 'controller_status', version='1.0',
                         server=server)
