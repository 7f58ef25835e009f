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
"""Capacity summaries and cells, in pieces that change one at a time.

``capacity_summaries`` holds one row per VM and one per flavour of a
cluster (one partition per cluster): the model that answers for it, its
version, and for a VM its flavour and the revision of its cells (for a
flavour, of its memory: the cells of its departed VMs). The
actuator decides from these rows alone. ``capacity_cells`` holds each VM's
grid cells, one row per cell (one partition per VM): the trainer writes the
cells a round changed and reads a VM's cells when it refits a model that
needs them.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from oslo_utils import timeutils

from elastman.store import base

VM = 'vm'
FLAVOR = 'flavor'
#: summary fields and their columns (the model is JSON in a blob)
SUMMARY_FIELDS = ('flavor', 'version', 'revision', 'fitted_revision',
                  'sampled_until', 'imported', 'model')


class CapacityRepository(base.Repository):

    # -- summaries -------------------------------------------------------

    def summaries(self, cluster_id: str
                  ) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
        """``(vms, flavors)``: each key's summary (fields of SUMMARY_FIELDS,
        ``model`` a dict or None).
        """
        vms: dict[str, dict[str, Any]] = {}
        flavors: dict[str, dict[str, Any]] = {}
        for row in self._iterate(
                'SELECT scope, key, %s FROM capacity_summaries WHERE '
                'cluster_id = ?' % ', '.join(SUMMARY_FIELDS), (cluster_id,)):
            scope, key = row.pop('scope'), row.pop('key')
            row['model'] = base.loads(row['model'].decode('utf-8')) \
                if row['model'] else None
            (vms if scope == VM else flavors)[key] = row
        return vms, flavors

    def save_summaries(self, cluster_id: str, scope: str,
                       rows: Mapping[str, Mapping[str, Any]]) -> None:
        """Write the given fields of each key's summary (fields left out
        keep their stored values).
        """
        by_fields: dict[tuple[str, ...], list[tuple]] = {}
        now = timeutils.utcnow()
        for key, row in rows.items():
            fields = tuple(f for f in SUMMARY_FIELDS if f in row)
            values = tuple(_column(f, row[f]) for f in fields)
            by_fields.setdefault(fields, []).append(
                values + (now, cluster_id, scope, key))
        for fields, params in by_fields.items():
            sets = ', '.join('%s = ?' % f for f in fields + ('updated_at',))
            self._execute_many('UPDATE capacity_summaries SET %s WHERE '
                               'cluster_id = ? AND scope = ? AND key = ?'
                               % sets, params)

    def delete_summaries(self, cluster_id: str, scope: str,
                         keys: Iterable[str]) -> None:
        self._execute_many('DELETE FROM capacity_summaries WHERE cluster_id = ?'
                           ' AND scope = ? AND key = ?',
                           [(cluster_id, scope, k) for k in keys])

    def has_summaries(self, cluster_id: str) -> bool:
        return self._one('SELECT key FROM capacity_summaries WHERE '
                         'cluster_id = ? LIMIT 1', (cluster_id,)) is not None

    # -- cells -------------------------------------------------------------

    def cells(self, cluster_id: str, node_ids: Iterable[str]
              ) -> dict[str, dict[str, bytes]]:
        """The stored cells of each VM: ``{node: {cell name: data}}``."""
        nodes = list(node_ids)
        results = self._fetch_many('SELECT cell, data FROM capacity_cells '
                                   'WHERE cluster_id = ? AND node_id = ?',
                                   [(cluster_id, n) for n in nodes])
        return {node: {r['cell']: r['data'] for r in rows}
                for node, rows in zip(nodes, results)}

    def save_cells(self, cluster_id: str,
                   cells: Mapping[str, Mapping[str, bytes]]) -> int:
        """Write cells (``{node: {cell name: data}}``); returns how many."""
        params = [(cluster_id, node, name, data)
                  for node, by_name in cells.items()
                  for name, data in by_name.items()]
        self._execute_many('INSERT INTO capacity_cells (cluster_id, node_id, '
                           'cell, data) VALUES (?, ?, ?, ?)', params)
        return len(params)

    def drop_cells(self, cluster_id: str, node_ids: Iterable[str]) -> None:
        """Delete every stored cell of the given VMs."""
        self._execute_many('DELETE FROM capacity_cells WHERE cluster_id = ? '
                           'AND node_id = ?',
                           [(cluster_id, n) for n in node_ids])


def _column(field: str, value: Any) -> Any:
    if field == 'model':
        return None if value is None else \
            base.dumps(value).encode('utf-8')
    return value
