"""Client side of the elastman-predictor RPC API.

API version history:
    1.0 - status()
"""
from elastman.common import rpc


class PredictorAPI(rpc.RPCClient):
    WORKER = 'predictor'
    VERSION = '1.0'

    def status(self, ctxt, server: str | None = None) -> dict:
        return self.call(ctxt, 'status', version='1.0', server=server)
