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
"""Managed Cassandra clusters."""
from __future__ import annotations

import uuid

from oslo_utils import timeutils

from elastman.common import exception
from elastman.store import base

_JSON_FIELDS = ('spec', 'policy')
_UPDATABLE = ('name', 'state', 'status_reason', 'spec', 'policy')


def _decode(row: dict | None) -> dict | None:
    if row is not None:
        for field in _JSON_FIELDS:
            row[field] = base.loads(row[field])
    return row


class ClusterRepository(base.Repository):

    def create(self, project_id: str, name: str, spec: dict,
               policy: dict | None = None, state: str = 'ACTIVE',
               cluster_id: uuid.UUID | None = None) -> dict:
        now = timeutils.utcnow()
        cluster_id = cluster_id or uuid.uuid4()
        applied = self._applied(
            'INSERT INTO clusters (id, project_id, name, state, spec, policy,'
            ' created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'
            ' IF NOT EXISTS',
            (cluster_id, project_id, name, state, base.dumps(spec),
             base.dumps(policy or {}), now, now))
        if not applied:
            raise exception.Conflict(reason='cluster %s exists' % cluster_id)
        return self.get(cluster_id)

    def get(self, cluster_id: uuid.UUID) -> dict:
        row = _decode(self._one('SELECT * FROM clusters WHERE id = ?',
                                (cluster_id,)))
        if row is None:
            raise exception.NotFound(kind='cluster', id=cluster_id)
        return row

    def list(self, project_id: str | None = None, limit: int = 100,
             marker: str | None = None) -> base.Page:
        if project_id is None:
            page = self._page('SELECT * FROM clusters', (), limit, marker)
        else:
            page = self._page('SELECT * FROM clusters WHERE project_id = ?',
                              (project_id,), limit, marker)
        for row in page:
            _decode(row)
        return page

    def all(self) -> list[dict]:
        """Every cluster, read page by page (for the workers). A list, not
        a generator: a worker's round walks it more than once.
        """
        return [_decode(row) for row in self._iterate('SELECT * FROM clusters')]

    def update(self, cluster_id: uuid.UUID, **fields) -> dict:
        unknown = set(fields) - set(_UPDATABLE)
        if unknown:
            raise ValueError('cannot update %s' % ', '.join(sorted(unknown)))
        self.get(cluster_id)
        for name in _JSON_FIELDS:
            if name in fields:
                fields[name] = base.dumps(fields[name])
        fields['updated_at'] = timeutils.utcnow()
        names = sorted(fields)
        self._execute('UPDATE clusters SET %s WHERE id = ?'
                      % ', '.join('%s = ?' % n for n in names),
                      tuple(fields[n] for n in names) + (cluster_id,))
        return self.get(cluster_id)

    def delete(self, cluster_id: uuid.UUID) -> None:
        """The cluster's row and its credentials."""
        self._execute('DELETE FROM cluster_credentials WHERE cluster_id = ?',
                      (cluster_id,))
        self._execute('DELETE FROM clusters WHERE id = ?', (cluster_id,))
