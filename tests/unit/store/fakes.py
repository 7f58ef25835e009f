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
"""In-memory stand-ins of the store repositories the trainer state uses.

They keep what the real ones keep (tests/functional/trainer checks those
against a real store) and count the rows and bytes written.
"""
from __future__ import annotations

import copy

from elastman.store import capacity as capacity_store


class FakeModels:
    """``models``: versioned documents, and the cells of the old layout."""

    def __init__(self):
        self.rows, self.cell_rows = {}, {}

    def save(self, scope, key, payload, params=None, summary=None):
        versions = self.rows.setdefault((scope, key), [])
        versions.append({'payload': payload, 'params': params or {},
                         'summary': summary or {}})
        return len(versions)

    def put(self, scope, key, version, payload, params=None, summary=None):
        versions = self.rows.setdefault((scope, key), [])
        del versions[version - 1:]
        versions.extend([None] * (version - 1 - len(versions)))
        versions.append({'payload': payload, 'params': params or {},
                         'summary': summary or {}})
        return version

    def latest_version(self, scope, key):
        return len(self.rows.get((scope, key), []))

    def prune(self, scope, key, keep, latest=None):
        pass

    def get(self, scope, key):
        from elastman.common import exception
        if not self.rows.get((scope, key)):
            raise exception.NotFound(kind='model', id=key)
        return self.rows[(scope, key)][-1]

    def save_cells(self, scope, key, cells):
        self.cell_rows.setdefault((scope, key), {}).update(cells)

    def cells(self, scope, key):
        return dict(self.cell_rows.get((scope, key), {}))

    def delete_cells(self, scope, key):
        self.cell_rows.pop((scope, key), None)


class FakeCapacity:
    """``capacity_summaries`` and ``capacity_cells``."""

    def __init__(self):
        self.summary_rows = {}      # (cluster, scope, key) -> fields
        self.cell_rows = {}         # (cluster, node) -> {cell: data}
        self.cells_written = 0
        self.bytes_written = 0
        self.cells_read = []        # node ids, one entry per VM read

    def summaries(self, cluster_id):
        vms, flavors = {}, {}
        for (cid, scope, key), row in self.summary_rows.items():
            if cid == cluster_id:
                full = {f: None for f in capacity_store.SUMMARY_FIELDS}
                full.update(copy.deepcopy(row))
                (vms if scope == 'vm' else flavors)[key] = full
        return vms, flavors

    def save_summaries(self, cluster_id, scope, rows):
        for key, row in rows.items():
            self.summary_rows.setdefault((cluster_id, scope, key), {}).update(
                copy.deepcopy(dict(row)))
            self.bytes_written += len(repr(row))

    def delete_summaries(self, cluster_id, scope, keys):
        for key in keys:
            self.summary_rows.pop((cluster_id, scope, key), None)

    def cells(self, cluster_id, node_ids):
        node_ids = list(node_ids)
        self.cells_read.extend(node_ids)
        return {n: dict(self.cell_rows.get((cluster_id, n), {}))
                for n in node_ids}

    def save_cells(self, cluster_id, cells):
        for node, by_name in cells.items():
            self.cell_rows.setdefault((cluster_id, node), {}).update(by_name)
            self.cells_written += len(by_name)
            self.bytes_written += sum(len(d) for d in by_name.values())
        return sum(len(c) for c in cells.values())

    def drop_cells(self, cluster_id, node_ids):
        for node in node_ids:
            self.cell_rows.pop((cluster_id, node), None)


class FakeStateStore:
    """The two repositories :mod:`elastman.store.model_state` uses."""

    def __init__(self):
        self.models = FakeModels()
        self.capacity = FakeCapacity()


class FakeLeases:
    """``leases`` with expiry on a clock the test moves."""

    def __init__(self, clock=None):
        self.clock = clock or (lambda: 0.0)
        self.rows = {}            # name -> (holder, expires_at)

    def _live(self, name):
        row = self.rows.get(name)
        if row is not None and row[1] <= self.clock():
            del self.rows[name]
            row = None
        return row

    def acquire(self, name, holder, ttl):
        row = self._live(name)
        if row is not None and row[0] != holder:
            return False
        self.rows[name] = (holder, self.clock() + ttl)
        return True

    def holder(self, name):
        row = self._live(name)
        return row[0] if row else None

    def remaining(self, name):
        row = self._live(name)
        if row is None:
            return None, 0
        return row[0], int(row[1] - self.clock())

    def release(self, name, holder):
        row = self._live(name)
        if row is not None and row[0] == holder:
            del self.rows[name]
            return True
        return False


class FakeMembers:
    """``members``: heartbeats with expiry on the same clock."""

    def __init__(self, clock=None):
        self.clock = clock or (lambda: 0.0)
        self.rows = {}            # (worker, holder) -> expires_at

    def heartbeat(self, worker, holder, ttl):
        self.rows[(worker, holder)] = self.clock() + ttl

    def members(self, worker):
        now = self.clock()
        return sorted(h for (w, h), until in self.rows.items()
                      if w == worker and until > now)

    def leave(self, worker, holder):
        self.rows.pop((worker, holder), None)
