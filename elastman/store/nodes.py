"""Cassandra nodes of the managed clusters, one row per node."""
from __future__ import annotations

import uuid

from oslo_utils import timeutils

from elastman.common import exception
from elastman.store import base

_FIELDS = ('server_id', 'address', 'flavor', 'state', 'seed', 'cql_port',
           'jmx_host', 'jmx_port', 'host', 'details')


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

    def list_many(self, cluster_ids: list[uuid.UUID]
                  ) -> dict[uuid.UUID, list[dict]]:
        """:meth:`list` of many clusters, ``[store] concurrency`` queries in
        flight."""
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
