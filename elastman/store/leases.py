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
"""Leases: at most one holder of a name at a time, expiring by TTL.

Used so that, with several copies of a worker, one cluster's control period
runs in exactly one of them.
"""
from __future__ import annotations

from oslo_utils import timeutils

from elastman.store import base


class LeaseRepository(base.Repository):

    def acquire(self, name: str, holder: str, ttl: int) -> bool:
        """Take the lease, or renew it if ``holder`` has it already."""
        if self._applied('INSERT INTO leases (name, holder, acquired_at) '
                         'VALUES (?, ?, ?) IF NOT EXISTS USING TTL ?',
                         (name, holder, timeutils.utcnow(), ttl)):
            return True
        return self._applied('UPDATE leases USING TTL ? SET holder = ?, '
                             'acquired_at = ? WHERE name = ? IF holder = ?',
                             (ttl, holder, timeutils.utcnow(), name, holder))

    def holder(self, name: str) -> str | None:
        row = self._one('SELECT holder FROM leases WHERE name = ?', (name,))
        return row['holder'] if row else None

    def remaining(self, name: str) -> tuple[str | None, int]:
        """The holder and the seconds until the lease expires ((None, 0)
        when nobody holds it).
        """
        row = self._one('SELECT holder, TTL(holder) AS ttl FROM leases '
                        'WHERE name = ?', (name,))
        if row is None or row['holder'] is None:
            return None, 0
        return row['holder'], int(row['ttl'] or 0)

    def release(self, name: str, holder: str) -> bool:
        return self._applied('DELETE FROM leases WHERE name = ? IF holder = ?',
                             (name, holder))
