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
"""The ``jmx`` metrics source: Cassandra's per-table coordinator metrics.

Counts and the cumulative, never-decaying bucket counts of the Timers and
Histograms (their ``values`` operation), read through one long-lived JMX
bridge JVM (:mod:`elastman.monitor.jmx`). Summed over the tables of user
keyspaces; the difference of two readings is the exact histogram of the
interval.
"""
from __future__ import annotations

import re
import time

from elastman.cassandra import histogram
from elastman.monitor import jmx
from elastman.monitor import readings
from elastman.monitor import sources

_METRICS = 'org.apache.cassandra.metrics'
TABLE_PATTERN = _METRICS + ':type=Table,name=%s,*'
WRITE_SIZE = _METRICS + ':type=ClientRequest,scope=Write,' \
                        'name=MutationSizeHistogram'
# time requests wait in the native-transport queue before the coordinator's
# timer starts (Cassandra 4.1+; absent before)
QUEUE_WAIT = _METRICS + ':type=Client,name=Queued'
_KEYSPACE = re.compile(r'[:,]keyspace=([^,]+)')


class JmxSource(sources.MetricsSource):
    """Per-table coordinator metrics (user keyspaces only) over JMX."""

    name = 'jmx'

    def __init__(self, conf, excluded: frozenset[str],
                 bridge: jmx.JmxBridge | None = None) -> None:
        super().__init__(conf, excluded)
        self.bridge = bridge or jmx.JmxBridge(conf)

    @property
    def timeout(self) -> float:
        return self.bridge.timeout

    def start(self) -> None:
        self.bridge.start()

    def close(self) -> None:
        self.bridge.close()

    def read(self, target: readings.Target) -> readings.Reading:
        host = target.jmx_host or target.address
        port = target.jmx_port or 7199

        def submit(pattern):
            return self.bridge.submit(host, port, pattern, ('Count',),
                                      ('values',), access=target.access)
        futures = {
            'read': submit(TABLE_PATTERN % 'CoordinatorReadLatency'),
            'write': submit(TABLE_PATTERN % 'CoordinatorWriteLatency'),
            'read_size': submit(TABLE_PATTERN % 'CoordinatorReadSize'),
            'write_size': submit(WRITE_SIZE),
            'queue': submit(QUEUE_WAIT),
        }
        try:
            results = {k: self.bridge.result(f) for k, f in futures.items()}
        except jmx.JmxError as exc:
            denied = isinstance(exc, jmx.JmxAccessDenied)
            raise sources.SourceError(
                source=self.name, where='%s:%s' % (host, port),
                reason=str(exc) if denied else exc.kwargs.get('reason', exc)
            ) from exc
        mono = time.monotonic()
        reads, read_buckets = self._sum(results['read'])
        writes, write_buckets = self._sum(results['write'])
        _, read_size = self._sum(results['read_size'])
        _, write_size = self._sum(results['write_size'], filtered=False)
        _, queue_wait = self._sum(results['queue'], filtered=False)
        return readings.Reading(
            mono=mono, source=self.name, reads=reads, writes=writes,
            read_latency=read_buckets, write_latency=write_buckets,
            read_size=read_size, write_size=write_size,
            queue_wait=queue_wait)

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
