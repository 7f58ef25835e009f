"""Base class of the RPC endpoint each worker serves."""
from __future__ import annotations

from typing import Callable

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import timeutils

from elastman import version

LOG = logging.getLogger(__name__)

PeriodicTask = tuple[Callable[[], None], float]


class Manager:
    """One worker's logic: RPC methods plus periodic tasks.

    ``WORKER`` names the topic; ``target`` carries the newest RPC API version
    the manager implements (clients pin older versions per method).
    """

    WORKER: str = ''
    target = messaging.Target(version='1.0')

    def __init__(self, conf) -> None:
        self.conf = conf
        self.started_at = None

    # lifecycle -----------------------------------------------------------
    def start(self) -> None:
        """Called once before the RPC server starts."""
        self.started_at = timeutils.utcnow()

    def stop(self) -> None:
        """Called once after the RPC server stopped."""

    def periodic_tasks(self) -> list[PeriodicTask]:
        """(callable, interval in seconds) pairs run by the service."""
        return []

    # RPC API 1.0 ---------------------------------------------------------
    def status(self, ctxt) -> dict:
        """Who answers, since when, and what it does."""
        return {'worker': self.WORKER,
                'host': self.conf.host,
                'version': version.version_info.version_string(),
                'rpc_api_version': self.target.version,
                'started_at': self.started_at.isoformat()
                if self.started_at else None,
                'detail': self.describe()}

    def describe(self) -> str:
        """A short account of the worker's current job, for status()."""
        return 'nothing to do yet'
