"""elastman-actuator: the RPC endpoint and periodic work of the actuator worker."""
import oslo_messaging as messaging

from elastman.common import manager


class ActuatorManager(manager.Manager):
    WORKER = 'actuator'
    target = messaging.Target(version='1.0')

    def __init__(self, conf, store=None, transport=None) -> None:
        super().__init__(conf)
        self.store = store
        self.transport = transport
