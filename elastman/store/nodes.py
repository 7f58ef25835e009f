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
"""Cassandra nodes of the managed clusters, one row per node."""
from __future__ import annotations

import uuid

from oslo_utils import timeutils

from elastman.common import exception
from elastman.store import base

_FIELDS = ('server_id', 'address', 'flavor', 'state', 'seed', 'cql_port',
           'jmx_host', 'jmx_port', 'host', 'details', 'state_reason')

#: Node states. JOINING, UN, LEAVING: the actuator's; DEAD: the monitor's
#: health check (missed samples and DN at live peers); REPLACING: a replace
#: action took the dead node over; UNKNOWN: a registered node never sampled.
JOINING = 'JOINING'
UN = 'UN'
LEAVING = 'LEAVING'
UNKNOWN = 'UNKNOWN'
DEAD = 'DEAD'
REPLACING = 'REPLACING'
#: States of a node in the ring that the health check may turn into DEAD.
LIVE = (UN, UNKNOWN)


class NodeRepository(base.Repository):

    def upsert(self, cluster_id: uuid.UUID, node_id: str, **fields) -> dict:
        unknown = set(fields) - set(_FIELDS)
        if unknown:
            raise ValueError('unknown node fields %s'
                             % ', '.join(sorted(unknown)))
        if 'details' in fields:
            fields['details'] = base.dumps(fields['details'])
        now = timeutils.utcnow()
        fields['updated_at'] = now
        if 'state' in fields:
            fields.setdefault('state_reason', None)
            fields['state_changed_at'] = now
        existing = self._one('SELECT created_at FROM nodes WHERE '
                             'cluster_id = ? AND node_id = ?',
                             (cluster_id, node_id))
        if existing is None:
            fields['created_at'] = now
        names = sorted(fields)
        self._execute(
            'UPDATE nodes SET %s WHERE cluster_id = ? AND node_id = ?'
            % ', '.join('%s = ?' % n for n in names),
            tuple(fields[n] for n in names) + (cluster_id, node_id))
        return self.get(cluster_id, node_id)

    def get(self, cluster_id: uuid.UUID, node_id: str) -> dict:
        row = self._one('SELECT * FROM nodes WHERE cluster_id = ? AND '
                        'node_id = ?', (cluster_id, node_id))
        if row is None:
            raise exception.NotFound(kind='node', id=node_id)
        row['details'] = base.loads(row['details'])
        return row

    def list(self, cluster_id: uuid.UUID) -> list[dict]:
        rows = list(self._iterate('SELECT * FROM nodes WHERE cluster_id = ?',
                                  (cluster_id,)))
        for row in rows:
            row['details'] = base.loads(row['details'])
        return rows

    def change_state(self, cluster_id: uuid.UUID, node_id: str, state: str,
                     reason: str | None, expected: tuple[str, ...]) -> bool:
        """Set ``state`` (with why, and now as its time) only while the node
        is in one of ``expected`` (a lightweight transaction); True if so.
        """
        now = timeutils.utcnow()
        return self._applied(
            'UPDATE nodes SET state = ?, state_reason = ?, '
            'state_changed_at = ?, updated_at = ? WHERE cluster_id = ? AND '
            'node_id = ? IF state IN ?',
            (state, reason, now, now, cluster_id, node_id, list(expected)))

    def list_many(self, cluster_ids: list[uuid.UUID]
                  ) -> dict[uuid.UUID, list[dict]]:
        """:meth:`list` of many clusters, ``[store] concurrency`` queries in
        flight.
        """
        ids = list(cluster_ids)
        found = self._fetch_many('SELECT * FROM nodes WHERE cluster_id = ?',
                                 [(c,) for c in ids])
        for rows in found:
            for row in rows:
                row['details'] = base.loads(row['details'])
        return dict(zip(ids, found))

    def delete(self, cluster_id: uuid.UUID, node_id: str) -> None:
        self._execute('DELETE FROM nodes WHERE cluster_id = ? AND '
                      'node_id = ?', (cluster_id, node_id))
