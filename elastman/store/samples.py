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
"""Workload and latency samples, per node and per cluster, with a TTL."""
from __future__ import annotations

import datetime
import uuid

from elastman.store import base

SAMPLE_FIELDS = ('up', 'interval_s', 'reads_per_s', 'writes_per_s',
                 'read_bytes_mean', 'write_bytes_mean', 'read_p50_ms',
                 'read_p95_ms', 'read_p99_ms', 'write_p50_ms', 'write_p95_ms',
                 'write_p99_ms', 'extra')


class SampleRepository(base.Repository):

    def add(self, sample: dict) -> None:
        """Store one node sample (keys: cluster_id, node_id, ts, and any of
        SAMPLE_FIELDS); it expires after ``[store] sample_ttl``.
        """
        fields = [f for f in SAMPLE_FIELDS if sample.get(f) is not None]
        cols = ['cluster_id', 'node_id', 'ts'] + fields
        self._execute(
            'INSERT INTO samples (%s) VALUES (%s) USING TTL ?'
            % (', '.join(cols), ', '.join('?' * len(cols))),
            tuple(sample[c] for c in cols) + (self._conf.store.sample_ttl,))

    def for_node(self, cluster_id: uuid.UUID, node_id: str,
                 since: datetime.datetime | None = None,
                 limit: int | None = None) -> list[dict]:
        """Newest first; all since ``since``, or the newest ``limit``."""
        cql = 'SELECT * FROM samples WHERE cluster_id = ? AND node_id = ?'
        params: tuple = (cluster_id, node_id)
        if since is not None:
            cql += ' AND ts >= ?'
            params += (since,)
        if limit is not None:
            cql += ' LIMIT ?'
            params += (limit,)
        return list(self._iterate(cql, params))

    def for_nodes(self, cluster_id: uuid.UUID,
                  since: dict[str, datetime.datetime | None]
                  ) -> dict[str, list[dict]]:
        """:meth:`for_node` for many nodes at once (``{node: since}``),
        ``[store] concurrency`` queries in flight.
        """
        nodes = list(since)
        after = [n for n in nodes if since[n] is not None]
        every = [n for n in nodes if since[n] is None]
        out = dict(zip(after, self._fetch_many(
            'SELECT * FROM samples WHERE cluster_id = ? AND node_id = ? '
            'AND ts >= ?', [(cluster_id, n, since[n]) for n in after])))
        out.update(zip(every, self._fetch_many(
            'SELECT * FROM samples WHERE cluster_id = ? AND node_id = ?',
            [(cluster_id, n) for n in every])))
        return {n: out[n] for n in nodes}

    def newest(self, cluster_id: uuid.UUID, node_ids: list[str],
               limit: int = 1) -> dict[str, list[dict]]:
        """Each node's newest ``limit`` samples, newest first (nodes without
        any are left out), ``[store] concurrency`` queries in flight.
        """
        nodes = list(node_ids)
        rows = self._fetch_many('SELECT * FROM samples WHERE cluster_id = ? '
                                'AND node_id = ? LIMIT ?',
                                [(cluster_id, n, limit) for n in nodes])
        return {n: r for n, r in zip(nodes, rows) if r}

    def add_many(self, samples: list[dict]) -> None:
        """:meth:`add` for many samples, ``[store] concurrency`` writes in
        flight (samples with the same fields share one statement).
        """
        groups: dict[tuple[str, ...], list[tuple]] = {}
        for sample in samples:
            fields = tuple(f for f in SAMPLE_FIELDS
                           if sample.get(f) is not None)
            cols = ('cluster_id', 'node_id', 'ts') + fields
            groups.setdefault(cols, []).append(
                tuple(sample[c] for c in cols) + (self._conf.store.sample_ttl,))
        for cols, params in groups.items():
            self._execute_many(
                'INSERT INTO samples (%s) VALUES (%s) USING TTL ?'
                % (', '.join(cols), ', '.join('?' * len(cols))), params)

    def add_cluster_workload(self, cluster_id: uuid.UUID,
                             ts: datetime.datetime, reads_per_s: float,
                             writes_per_s: float, nodes_up: int,
                             nodes_total: int,
                             read_p99_ms: float | None = None,
                             read_with_queue_p99_ms: float | None = None
                             ) -> None:
        """One monitor round of the cluster: its total load and, where the
        nodes gave their histograms, its own read p99 (with and without the
        queue wait).
        """
        self._execute(
            'INSERT INTO cluster_workload (cluster_id, ts, reads_per_s, '
            'writes_per_s, nodes_up, nodes_total, read_p99_ms, '
            'read_with_queue_p99_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?) '
            'USING TTL ?',
            (cluster_id, ts, reads_per_s, writes_per_s, nodes_up,
             nodes_total, read_p99_ms, read_with_queue_p99_ms,
             self._conf.store.sample_ttl))

    def cluster_workload(self, cluster_id: uuid.UUID,
                         since: datetime.datetime) -> list[dict]:
        """The cluster's total workload since ``since``, oldest first."""
        rows = list(self._iterate(
            'SELECT * FROM cluster_workload WHERE cluster_id = ? AND ts >= ?',
            (cluster_id, since)))
        rows.reverse()
        return rows
