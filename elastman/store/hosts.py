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
"""Compute-host agents and the interference reports they send."""
from __future__ import annotations

import datetime

from oslo_utils import timeutils

from elastman.common import exception
from elastman.common import timestamps
from elastman.store import base


class HostRepository(base.Repository):

    def report(self, host: str, vms: dict,
               ts: datetime.datetime | None = None) -> None:
        """Record an agent's interference report (``{vm: {...}}``); the
        host's escalation details stay as they are.
        """
        ts = ts or timeutils.utcnow()
        self._execute('UPDATE host_agents SET last_report_at = ? WHERE host = ?',
                      (ts, host))
        self._execute('INSERT INTO host_reports (host, ts, vms) '
                      'VALUES (?, ?, ?)', (host, ts, base.dumps(vms)))

    def escalate(self, host: str, details: dict) -> None:
        """Record the agent's newest escalation as the host's ``details``.
        It writes no report: the host's newest interference index stays
        the one its last report gave.
        """
        self._execute('UPDATE host_agents SET details = ? WHERE host = ?',
                      (base.dumps(details), host))

    def latest_vms(self, host: str, now: float, max_age: float) -> dict:
        """``{vm: {...}}`` of the host's newest report, or ``{}`` when the
        host has none or the newest is more than ``max_age`` s before
        ``now`` (epoch seconds).
        """
        page = self.reports(host, limit=1)
        if not page:
            return {}
        latest = page[0]
        if now - timestamps.epoch(latest['ts']) > max_age:
            return {}
        return latest['vms'] if isinstance(latest['vms'], dict) else {}

    def interference(self, nodes, now: float, max_age: float
                     ) -> dict[str, float]:
        """Each node's interference index from the newest report of its
        compute host's agent: ``{node_id: index}``.

        ``nodes`` are node rows (``node_id``, ``host``, ``server_id``); a node
        whose host has no report within ``max_age`` s, or whose server the
        report does not name, is left out.
        """
        reports: dict[str, dict] = {}
        found = {}
        for node in nodes:
            host, server = node.get('host'), node.get('server_id')
            if not host or not server:
                continue
            if host not in reports:
                reports[host] = self.latest_vms(host, now, max_age)
            vm = reports[host].get(server)
            if isinstance(vm, dict) and \
                    vm.get('interference_index') is not None:
                found[node['node_id']] = float(vm['interference_index'])
        return found

    def get(self, host: str) -> dict:
        row = self._one('SELECT * FROM host_agents WHERE host = ?', (host,))
        if row is None:
            raise exception.NotFound(kind='host', id=host)
        row['details'] = base.loads(row['details'])
        return row

    def list(self, limit: int = 100, marker: str | None = None) -> base.Page:
        return self._page('SELECT * FROM host_agents', (), limit, marker,
                          ('details',))

    def reports(self, host: str, limit: int = 100,
                marker: str | None = None) -> base.Page:
        return self._page('SELECT * FROM host_reports WHERE host = ?',
                          (host,), limit, marker, ('vms',))
