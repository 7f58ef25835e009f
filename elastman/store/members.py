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
"""The live copies of each worker: one row per copy, kept alive by a TTL."""
from __future__ import annotations

from oslo_utils import timeutils

from elastman.store import base


class MemberRepository(base.Repository):

    def heartbeat(self, worker: str, holder: str, ttl: int) -> None:
        """``holder`` (a copy of ``worker``) is alive for ``ttl`` s more."""
        self._execute('INSERT INTO worker_members (worker, holder, seen_at) '
                      'VALUES (?, ?, ?) USING TTL ?',
                      (worker, holder, timeutils.utcnow(), int(ttl)))

    def members(self, worker: str) -> list[str]:
        """The copies of ``worker`` whose heartbeat has not expired."""
        return sorted(r['holder'] for r in self._iterate(
            'SELECT holder FROM worker_members WHERE worker = ?', (worker,)))

    def leave(self, worker: str, holder: str) -> None:
        self._execute('DELETE FROM worker_members WHERE worker = ? AND '
                      'holder = ?', (worker, holder))
