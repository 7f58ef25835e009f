"""elastman-trainer: the RPC endpoint and periodic work of the trainer worker."""
import oslo_messaging as messaging

from elastman.common import manager


class TrainerManager(manager.Manager):
    WORKER = 'trainer'
    target = messaging.Target(version='1.0')

    def __init__(self, conf, store=None, transport=None) -> None:
        super().__init__(conf)
        self.store = store
        self.transport = transport
