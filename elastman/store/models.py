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
"""Fitted capacity models (versioned) and the grid cells they learn from."""
from __future__ import annotations

from oslo_utils import timeutils

from elastman.common import exception
from elastman.store import base


class ModelRepository(base.Repository):

    def save(self, scope: str, model_id: str, payload: bytes,
             params: dict, summary: dict | None = None) -> int:
        """Store a new version of a model and return its number.

        Versions are claimed with a lightweight transaction, so two trainers
        saving the same model never overwrite each other.
        """
        latest = self.latest_version(scope, model_id)
        for _attempt in range(10):
            version = latest + 1
            if self._applied(
                    'INSERT INTO models (scope, model_id, version, params, '
                    'payload, summary, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)'
                    ' IF NOT EXISTS',
                    (scope, model_id, version, base.dumps(params), payload,
                     base.dumps(summary or {}), timeutils.utcnow())):
                return version
            latest = self.latest_version(scope, model_id)
        raise exception.Conflict(reason='could not claim a version of model '
                                        '%s/%s' % (scope, model_id))

    def put(self, scope: str, model_id: str, version: int, payload: bytes,
            params: dict, summary: dict | None = None) -> int:
        """Write ``version`` of a model as is: one plain write, no read and
        no lightweight transaction.

        For documents that one worker owns under its lease and that only
        cache what it can compute again (the predictor's states): a copy
        that writes the same version during a take-over replaces a document
        of the same series, and nothing is lost.
        """
        self._execute(
            'INSERT INTO models (scope, model_id, version, params, payload, '
            'summary, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
            (scope, model_id, version, base.dumps(params), payload,
             base.dumps(summary or {}), timeutils.utcnow()))
        return version

    def latest_version(self, scope: str, model_id: str) -> int:
        row = self._one('SELECT version FROM models WHERE scope = ? AND '
                        'model_id = ? LIMIT 1', (scope, model_id))
        return row['version'] if row else 0

    def get(self, scope: str, model_id: str,
            version: int | None = None) -> dict:
        """A model version (the latest by default)."""
        if version is None:
            row = self._one('SELECT * FROM models WHERE scope = ? AND '
                            'model_id = ? LIMIT 1', (scope, model_id))
        else:
            row = self._one('SELECT * FROM models WHERE scope = ? AND '
                            'model_id = ? AND version = ?',
                            (scope, model_id, version))
        if row is None:
            raise exception.NotFound(kind='model', id='%s/%s' % (scope,
                                                                 model_id))
        row['params'] = base.loads(row['params'])
        row['summary'] = base.loads(row['summary'])
        return row

    def prune(self, scope: str, model_id: str, keep: int,
              latest: int | None = None) -> None:
        """Drop all but the newest ``keep`` versions; ``latest``, when the
        caller knows it, saves reading it.
        """
        if latest is None:
            latest = self.latest_version(scope, model_id)
        if latest > keep:
            self._execute('DELETE FROM models WHERE scope = ? AND model_id = ?'
                          ' AND version <= ?', (scope, model_id,
                                                latest - keep))

    def save_cells(self, scope: str, model_id: str,
                   cells: dict[str, bytes]) -> None:
        now = timeutils.utcnow()
        for cell, payload in cells.items():
            self._execute('INSERT INTO model_cells (scope, model_id, cell, '
                          'payload, updated_at) VALUES (?, ?, ?, ?, ?)',
                          (scope, model_id, cell, payload, now))

    def cells(self, scope: str, model_id: str) -> dict[str, bytes]:
        return {row['cell']: row['payload'] for row in self._iterate(
            'SELECT cell, payload FROM model_cells WHERE scope = ? AND '
            'model_id = ?', (scope, model_id))}

    def delete_cells(self, scope: str, model_id: str) -> None:
        self._execute('DELETE FROM model_cells WHERE scope = ? AND '
                      'model_id = ?', (scope, model_id))
