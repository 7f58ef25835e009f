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
