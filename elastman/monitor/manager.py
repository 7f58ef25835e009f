"""elastman-monitor: the RPC endpoint and periodic work of the monitor worker."""
import oslo_messaging as messaging

from elastman.common import manager


class MonitorManager(manager.Manager):
    WORKER = 'monitor'
    target = messaging.Target(version='1.0')

    def __init__(self, conf, store=None, transport=None) -> None:
        super().__init__(conf)
        self.store = store
        self.transport = transport
