"""Cumulative counters of one node at one instant, from JMX or CQL.

A reading holds only monotonically growing numbers (request counts and
histogram bucket counts); samples are differences of two readings.
"""
from __future__ import annotations

import dataclasses
import re
import time

from cassandra import cluster as cql_cluster
from cassandra import policies
from oslo_log import log as logging

from elastman.monitor import histogram
from elastman.monitor import jmx

LOG = logging.getLogger(__name__)

SYSTEM_KEYSPACES = frozenset({
    'system', 'system_schema', 'system_auth', 'system_distributed',
    'system_traces', 'system_views', 'system_virtual_schema',
    'system_cluster_metadata'})

_METRICS = 'org.apache.cassandra.metrics'
TABLE_PATTERN = _METRICS + ':type=Table,name=%s,*'
WRITE_SIZE = _METRICS + ':type=ClientRequest,scope=Write,' \
                        'name=MutationSizeHistogram'
# time requests wait in the native-transport queue before the coordinator's
# timer starts (Cassandra 4.1+; absent before)
QUEUE_WAIT = _METRICS + ':type=Client,name=Queued'
_KEYSPACE = re.compile(r'[:,]keyspace=([^,]+)')


@dataclasses.dataclass
class Reading:
    """Cumulative counters of one node; ``mono`` orders readings in time."""

    mono: float
    source: str                                  # 'jmx' or 'cql'
    reads: int
    writes: int
    read_latency: list[int] | None = None        # microsecond buckets
    write_latency: list[int] | None = None
    read_size: list[int] | None = None           # byte buckets
    write_size: list[int] | None = None
    queue_wait: list[int] | None = None          # microsecond buckets


@dataclasses.dataclass
class Target:
    """Where a node answers."""

    address: str
    cql_port: int = 9042
    jmx_host: str | None = None
    jmx_port: int | None = None


class JmxReader:
    """Per-table coordinator metrics (user keyspaces only) over JMX."""

    def __init__(self, bridge: jmx.JmxBridge, excluded: frozenset[str]):
        self.bridge = bridge
        self.excluded = excluded

    def read(self, target: Target) -> Reading:
        host = target.jmx_host or target.address
        port = target.jmx_port or 7199
        submit = self.bridge.submit
        futures = {
            'read': submit(host, port, TABLE_PATTERN
                           % 'CoordinatorReadLatency', ('Count',),
                           ('values',)),
            'write': submit(host, port, TABLE_PATTERN
                            % 'CoordinatorWriteLatency', ('Count',),
                            ('values',)),
            'read_size': submit(host, port, TABLE_PATTERN
                                % 'CoordinatorReadSize', ('Count',),
                                ('values',)),
            'write_size': submit(host, port, WRITE_SIZE, ('Count',),
                                 ('values',)),
            'queue': submit(host, port, QUEUE_WAIT, ('Count',), ('values',)),
        }
        results = {k: self.bridge.result(f) for k, f in futures.items()}
        mono = time.monotonic()
        reads, read_buckets = self._sum(results['read'])
        writes, write_buckets = self._sum(results['write'])
        _, read_size = self._sum(results['read_size'])
        _, write_size = self._sum(results['write_size'], filtered=False)
        _, queue_wait = self._sum(results['queue'], filtered=False)
        return Reading(mono=mono, source='jmx', reads=reads, writes=writes,
                       read_latency=read_buckets,
                       write_latency=write_buckets, read_size=read_size,
                       write_size=write_size, queue_wait=queue_wait)

    def _sum(self, mbeans: list[dict], filtered: bool = True
             ) -> tuple[int, list[int] | None]:
        count, buckets = 0, None
        for mbean in mbeans:
            if filtered:
                match = _KEYSPACE.search(mbean['name'])
                if match is None or match.group(1) in self.excluded:
                    continue
            count += int(mbean['attrs'].get('Count') or 0)
            buckets = histogram.add(buckets, mbean['ops'].get('values'))
        return count, buckets


class CqlReader:
    """A one-connection session per node: liveness and fallback counts.

    Counts come from ``system_views.coordinator_{read,write}_latency``; their
    latency columns are not used (in 5.0.6 they are the decaying reservoir,
    and scaled wrongly by 1000).
    """

    def __init__(self, timeout: float, excluded: frozenset[str]) -> None:
        self.timeout = timeout
        self.excluded = excluded
        self._sessions: dict[tuple[str, int], object] = {}

    def _session(self, target: Target):
        key = (target.address, target.cql_port)
        session = self._sessions.get(key)
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
                schema_metadata_enabled=False, token_metadata_enabled=False)
            try:
                session = cluster.connect()
            except Exception:
                cluster.shutdown()
                raise
            session.default_timeout = self.timeout
            self._sessions[key] = session
        return session

    def ping(self, target: Target) -> None:
        """Raise unless the node answers a query now."""
        self._session(target).execute(
            'SELECT release_version FROM system.local',
            timeout=self.timeout)

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
        return Reading(mono=time.monotonic(), source='cql', reads=counts[0],
                       writes=counts[1])

    def forget(self, keep: set[tuple[str, int]]) -> None:
        """Close sessions of nodes no longer monitored."""
        for key in list(self._sessions):
            if key not in keep:
                self._sessions.pop(key).cluster.shutdown()

    def close(self) -> None:
        self.forget(set())
