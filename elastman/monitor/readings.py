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
"""What a metrics source reads from one node at one instant.

A reading holds monotonically growing numbers (request counts, histogram
bucket counts), from which samples are differences of two readings, and
optionally gauges: values a source has already measured over a window of
its own (a Prometheus exporter's decaying percentiles). The CQL reader here
checks that a node serves CQL and, when the configured source cannot read a
node, counts its requests from the virtual tables.
"""
from __future__ import annotations

import dataclasses
import socket
import threading
import time

from cassandra import cluster as cql_cluster
from cassandra import policies
from oslo_log import log as logging

from elastman.cassandra import access as access_mod

LOG = logging.getLogger(__name__)

SYSTEM_KEYSPACES = frozenset({
    'system', 'system_schema', 'system_auth', 'system_distributed',
    'system_traces', 'system_views', 'system_virtual_schema',
    'system_cluster_metadata'})
#: ``Reading.source`` of the CQL fallback (counts only)
CQL = 'cql'
#: what the monitor's probe requests ask a node
PROBE_QUERY = 'SELECT release_version FROM system.local'


@dataclasses.dataclass
class Reading:
    """Cumulative counters of one node; ``mono`` orders readings in time
    (seconds on any clock that is the same for two readings of the node).
    """

    mono: float
    source: str                                  # a source name, or 'cql'
    reads: int
    writes: int
    read_latency: list[int] | None = None        # microsecond buckets
    write_latency: list[int] | None = None
    read_size: list[int] | None = None           # byte buckets
    write_size: list[int] | None = None
    queue_wait: list[int] | None = None          # microsecond buckets
    # sample keys (sampler.METRIC_KEYS) a source measured itself; used where
    # the two readings give no interval histogram
    gauges: dict[str, float] | None = None
    # round trips (ms) of the monitor's own probe requests to the node at
    # this reading, timed on the monitor's side of the socket
    probe_ms: list[float] | None = None


@dataclasses.dataclass
class Target:
    """Where a node answers, and how to log in to it."""

    address: str
    cql_port: int = 9042
    jmx_host: str | None = None
    jmx_port: int | None = None
    #: credentials and TLS of the node's cluster (None: neither)
    access: access_mod.Access | None = None
    node_id: str | None = None
    cluster_id: str | None = None


class CqlReader:
    """A one-connection session per node: liveness and fallback counts.

    Counts come from ``system_views.coordinator_{read,write}_latency``; their
    latency columns are not used (in 5.0.6 they are the decaying reservoir,
    and scaled wrongly by 1000).
    """

    def __init__(self, timeout: float, excluded: frozenset[str]) -> None:
        self.timeout = timeout
        self.excluded = excluded
        # (address, port) -> (fingerprint of the access, session)
        self._sessions: dict[tuple[str, int], tuple[str, object]] = {}

    def _session(self, target: Target):
        key = (target.address, target.cql_port)
        fingerprint = target.access.fingerprint() if target.access else ''
        known, session = self._sessions.get(key, (None, None))
        if session is not None and known != fingerprint:
            # the cluster's credentials changed: log in again
            self._sessions.pop(key)
            session.cluster.shutdown()
            session = None
        if session is None:
            cluster = cql_cluster.Cluster(
                contact_points=[target.address], port=target.cql_port,
                load_balancing_policy=policies.WhiteListRoundRobinPolicy(
                    [target.address]),
                connect_timeout=self.timeout,
                control_connection_timeout=self.timeout,
                reconnection_policy=policies.ConstantReconnectionPolicy(
                    max(1.0, self.timeout)),
                protocol_version=5, idle_heartbeat_interval=10,
                schema_metadata_enabled=False, token_metadata_enabled=False,
                # the probes go out together, and each is timed: no
                # coalescing of small writes (the Java driver's default)
                sockopts=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
                **access_mod.cql_options(target.access, target.address))
            try:
                session = cluster.connect()
            except Exception as exc:
                cluster.shutdown()
                reason = access_mod.denial(exc)
                if reason:
                    raise access_mod.AccessDenied(
                        service='CQL', where='%s:%d' % key,
                        who=access_mod.who(target.access), reason=reason)
                raise
            session.default_timeout = self.timeout
            self._sessions[key] = (fingerprint, session)
        return session

    def ping(self, target: Target, requests: int = 1) -> list[float]:
        """Send ``requests`` probe queries to the node at once and return
        the round trip of each in milliseconds, as a client sees it: it
        includes any wait before the node's own timers start. A probe that
        fails or is not answered within the timeout counts as the timeout.
        Raise when none is answered.
        """
        session = self._session(target)
        lock = threading.Lock()
        done = threading.Event()
        times: list[float] = []
        errors: list[BaseException] = []
        left = [requests]

        def record(started: float, error: BaseException | None) -> None:
            with lock:
                if error is None:
                    times.append((time.monotonic() - started) * 1000.0)
                else:
                    errors.append(error)
                left[0] -= 1
                if not left[0]:
                    done.set()

        for _ in range(requests):
            started = time.monotonic()
            future = session.execute_async(PROBE_QUERY, timeout=self.timeout)
            future.add_callbacks(lambda _rows, t: record(t, None),
                                 lambda exc, t: record(t, exc),
                                 callback_args=(started,),
                                 errback_args=(started,))
        done.wait(self.timeout + 1.0)
        with lock:
            if not times:
                raise errors[0] if errors else TimeoutError(
                    'no answer from %s:%d within %.1f s' % (
                        target.address, target.cql_port, self.timeout))
            return sorted(times) + [self.timeout * 1000.0] * (
                requests - len(times))

    def read(self, target: Target) -> Reading:
        session = self._session(target)
        counts = []
        for table in ('coordinator_read_latency',
                      'coordinator_write_latency'):
            rows = session.execute('SELECT keyspace_name, count FROM '
                                   'system_views.%s' % table,
                                   timeout=self.timeout)
            counts.append(sum(r.count or 0 for r in rows
                              if r.keyspace_name not in self.excluded))
        return Reading(mono=time.monotonic(), source=CQL, reads=counts[0],
                       writes=counts[1])

    def forget(self, keep: set[tuple[str, int]]) -> None:
        """Close sessions of nodes no longer monitored."""
        for key in list(self._sessions):
            if key not in keep:
                self._sessions.pop(key)[1].cluster.shutdown()

    def close(self) -> None:
        self.forget(set())
