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
