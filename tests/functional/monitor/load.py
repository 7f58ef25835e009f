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
"""A paced CQL load: a known rate of reads and writes of a known size.

Requests are issued asynchronously on a fixed schedule (open loop), so the
offered rate does not depend on the latency; each request's latency is taken
from issue to completion on the client. With ``max_in_flight`` a request that
falls due while that many are outstanding is not sent but counted as shed
(the offered rate stays the schedule; an overloaded node's queue stays
bounded instead of growing until it stops answering altogether).

Each partition holds ``rows`` rows; a read returns a whole partition, or with
``count`` only the number of its rows (work for the node, not the client).
"""
from __future__ import annotations

import multiprocessing
import os
import threading
import time

from cassandra import cluster as cql_cluster
from cassandra import concurrent
from cassandra import policies
from cassandra import query

#: bytes of values one setup batch holds at most: an unlogged batch of one
#: partition is one mutation, and this stays below Cassandra's batch size
#: warning (5 KiB)
SETUP_BATCH_BYTES = 4096


class _Load:
    def __init__(self, contact_points: list[str], keyspace: str,
                 reads_per_s: float, writes_per_s: float, value_size: int,
                 keys: int = 1000, max_in_flight: int | None = None,
                 rows: int = 1, count: bool = False) -> None:
        self.max_in_flight = max_in_flight
        self.rows = rows
        self.in_flight = 0
        self.shed = 0
        self.cluster = cql_cluster.Cluster(
            contact_points=contact_points, protocol_version=5,
            load_balancing_policy=policies.TokenAwarePolicy(
                policies.RoundRobinPolicy()))
        self.session = self.cluster.connect()
        self.session.execute(
            "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = "
            "{'class': 'SimpleStrategy', 'replication_factor': 1}" % keyspace)
        self.session.execute('CREATE TABLE IF NOT EXISTS %s.kv (k int, '
                             'c int, v blob, PRIMARY KEY (k, c))' % keyspace)
        self.write = self.session.prepare(
            'INSERT INTO %s.kv (k, c, v) VALUES (?, ?, ?)' % keyspace)
        self.read = self.session.prepare(
            ('SELECT count(v) FROM %s.kv WHERE k = ?' if count else
             'SELECT v FROM %s.kv WHERE k = ?') % keyspace)
        self.value = os.urandom(value_size)
        self.keys = keys
        self._populate()
        self.rates = (reads_per_s, writes_per_s)
        self._rates_changed = threading.Event()
        self.lock = threading.Lock()
        self.done: list[tuple[float, str, float]] = []   # (end, kind, ms)
        self.errors = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _populate(self) -> None:
        """Write every row the reads will find: one insert per row, or for
        partitions of several rows, unlogged batches of rows of one
        partition (100,000 single inserts kept the Python client busy for
        most of a minute).
        """
        if self.rows == 1:
            concurrent.execute_concurrent_with_args(
                self.session, self.write,
                [(k, 0, self.value) for k in range(self.keys)],
                concurrency=32, raise_on_first_error=True)
            return
        per_batch = max(1, SETUP_BATCH_BYTES // (len(self.value) + 64))
        batches = []
        for k in range(self.keys):
            for first in range(0, self.rows, per_batch):
                batch = query.BatchStatement(
                    batch_type=query.BatchType.UNLOGGED)
                for c in range(first, min(self.rows, first + per_batch)):
                    batch.add(self.write, (k, c, self.value))
                batches.append((batch, ()))
        concurrent.execute_concurrent(self.session, batches, concurrency=16,
                                      raise_on_first_error=True)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def set_rates(self, reads_per_s: float, writes_per_s: float) -> None:
        """Change the offered rates; the new schedule starts now."""
        self.rates = (reads_per_s, writes_per_s)
        self._rates_changed.set()

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            if n == 0 or self._rates_changed.is_set():
                self._rates_changed.clear()
                reads, writes = self.rates
                total = reads + writes
                period = 1.0 / total
                start = time.monotonic()
                i = 0
            due = start + i * period
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            # interleave: exactly `writes` of every `total` requests write
            is_write = int((i + 1) * writes / total) > int(i * writes / total)
            key = (n * 7919) % self.keys
            n += 1
            if self.max_in_flight is not None:
                with self.lock:
                    if self.in_flight >= self.max_in_flight:
                        self.shed += 1
                        i += 1
                        continue
                    self.in_flight += 1
            t0 = time.monotonic()
            if is_write:
                future = self.session.execute_async(
                    self.write, (key, n % self.rows, self.value))
            else:
                future = self.session.execute_async(self.read, (key,))
            kind = 'write' if is_write else 'read'
            future.add_callbacks(self._ok, self._err,
                                 callback_args=(kind, t0),
                                 errback_args=(kind, t0))
            i += 1

    def _ok(self, rows, kind, t0):
        end = time.monotonic()
        with self.lock:
            self.done.append((end, kind, (end - t0) * 1000.0))
            if self.max_in_flight is not None:
                self.in_flight -= 1

    def _err(self, exc, kind, t0):
        with self.lock:
            self.errors += 1
            if self.max_in_flight is not None:
                self.in_flight -= 1

    def window(self, start: float, end: float, kind: str) -> list[float]:
        with self.lock:
            return [ms for t, k, ms in self.done
                    if start <= t < end and k == kind]

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(5)
        time.sleep(0.5)
        self.cluster.shutdown()


def _child(args, stop, ready, out, control) -> None:
    try:
        os.setpriority(os.PRIO_PROCESS, 0, -10)    # measure, do not queue
    except OSError:
        pass
    load = _Load(*args)
    load.start()
    ready.set()
    while not stop.is_set():
        if control.poll(0.05):
            load.set_rates(*control.recv())
    load.stop()
    out.put((load.done, load.errors, load.shed))


class PacedLoad:
    """Runs the load in a child process at high priority, so the client's
    latencies are not inflated by the test process's own threads.
    """

    def __init__(self, contact_points: list[str], keyspace: str,
                 reads_per_s: float, writes_per_s: float,
                 value_size: int, max_in_flight: int | None = None,
                 keys: int = 1000, rows: int = 1,
                 count: bool = False) -> None:
        ctx = multiprocessing.get_context('spawn')
        self._stop = ctx.Event()
        self._ready = ctx.Event()
        self._out = ctx.Queue()
        control, self._control = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(target=_child, daemon=True, args=(
            (contact_points, keyspace, reads_per_s, writes_per_s,
             value_size, keys, max_in_flight, rows, count),
            self._stop, self._ready, self._out, control))
        self.done: list[tuple[float, str, float]] = []
        self.errors = 0
        self.shed = 0

    def start(self, timeout: float = 120) -> None:
        self._proc.start()
        if not self._ready.wait(timeout):
            self._proc.kill()
            raise RuntimeError('load generator did not start')

    def set_rates(self, reads_per_s: float, writes_per_s: float) -> None:
        """Offer new rates from now on (a stepped load in one client)."""
        self._control.send((reads_per_s, writes_per_s))

    def stop(self) -> None:
        self._stop.set()
        self.done, self.errors, self.shed = self._out.get(timeout=60)
        self._proc.join(10)

    def window(self, start: float, end: float, kind: str) -> list[float]:
        return [ms for t, k, ms in self.done
                if start <= t < end and k == kind]


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(q * len(ordered)) - 1))]
