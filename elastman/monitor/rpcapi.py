"""Client side of the elastman-monitor RPC API.

API version history:
    1.0 - status()
"""
from elastman.common import rpc


class MonitorAPI(rpc.RPCClient):
    WORKER = 'monitor'
    VERSION = '1.0'

    def status(self, ctxt, server: str | None = None) -> dict:
        return self.call(ctxt, 'status', version='1.0', server=server)
