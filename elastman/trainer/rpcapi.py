"""Client side of the elastman-trainer RPC API.

API version history:
    1.0 - status()
"""
from elastman.common import rpc


class TrainerAPI(rpc.RPCClient):
    WORKER = 'trainer'
    VERSION = '1.0'

    def status(self, ctxt, server: str | None = None) -> dict:
        return self.call(ctxt, 'status', version='1.0', server=server)
