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
