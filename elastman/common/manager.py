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
"""Base class of every worker's logic."""
from __future__ import annotations

from typing import Callable

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import timeutils

LOG = logging.getLogger(__name__)

PeriodicTask = tuple[Callable[[], None], float]


class Manager:
    """One worker's logic: periodic tasks, and RPC methods when it has some.

    ``WORKER`` names the worker (and its RPC topic). ``target`` carries the
    newest RPC API version the manager implements; None (the default)
    means the worker has no RPC API and serves no topic: it works from the
    store alone. ``RPC_METHODS`` names the methods :class:`RPCEndpoint`
    serves.
    """

    WORKER: str = ''
    target: messaging.Target | None = None
    # the methods served on the bus; every other method stays local
    RPC_METHODS: tuple[str, ...] = ()

    def __init__(self, conf) -> None:
        self.conf = conf
        self.started_at = None

    # lifecycle -----------------------------------------------------------
    def start(self) -> None:
        """Called once before the RPC server (if any) starts."""
        self.started_at = timeutils.utcnow()

    def stop(self) -> None:
        """Called once after the RPC server (if any) stopped."""

    def periodic_tasks(self) -> list[PeriodicTask]:
        """(callable, interval in seconds) pairs run by the service."""
        return []

    def describe(self) -> str:
        """A short account of the worker's current job, for the log."""
        return 'nothing to do yet'


class RPCEndpoint:
    """What a worker serves on its topic: its manager's ``RPC_METHODS`` and
    nothing else (oslo.messaging would otherwise dispatch to any public
    method of the object, such as a periodic task).
    """

    def __init__(self, manager: Manager) -> None:
        self.target = manager.target
        for name in manager.RPC_METHODS:
            setattr(self, name, getattr(manager, name))
