"""Compute-host agents and the interference reports they send."""
from __future__ import annotations

import datetime

from oslo_utils import timeutils

from elastman.common import exception
from elastman.store import base


class HostRepository(base.Repository):

    def report(self, host: str, vms: dict, ts: datetime.datetime | None = None,
               details: dict | None = None) -> None:
        """Record an agent's interference report (``{vm: {...}}``)."""
        ts = ts or timeutils.utcnow()
        self._execute('UPDATE host_agents SET last_report_at = ?, '
                      'details = ? WHERE host = ?',
                      (ts, base.dumps(details or {}), host))
        self._execute('INSERT INTO host_reports (host, ts, vms) '
                      'VALUES (?, ?, ?)', (host, ts, base.dumps(vms)))

    def get(self, host: str) -> dict:
        row = self._one('SELECT * FROM host_agents WHERE host = ?', (host,))
        if row is None:
            raise exception.NotFound(kind='host', id=host)
        row['details'] = base.loads(row['details'])
        return row

    def list(self, limit: int = 100, marker: str | None = None) -> base.Page:
        page = self._page('SELECT * FROM host_agents', (), limit, marker)
        for row in page:
            row['details'] = base.loads(row['details'])
        return page

    def reports(self, host: str, limit: int = 100,
                marker: str | None = None) -> base.Page:
        page = self._page('SELECT * FROM host_reports WHERE host = ?',
                          (host,), limit, marker)
        for row in page:
            row['vms'] = base.loads(row['vms'])
        return page
