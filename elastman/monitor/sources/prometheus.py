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
"""The ``prometheus`` metrics source: what a Prometheus server scraped.

For operators who already scrape their Cassandra nodes with the Prometheus
JMX exporter. With the rules of ``etc/elastman/jmx-exporter-cassandra.yaml``
the exporter publishes, per table, the coordinator request counters (exact,
so rates are as exact as JMX's) and the percentiles of Cassandra's decaying
reservoirs (the exporter cannot publish the cumulative bucket counts JMX's
``values`` operation gives: arrays are not exported). Percentiles are
therefore the reservoir's, recent requests weighing most (a mean lifetime of
about a minute), not those of exactly the sampling interval; under a steady
load they agree with the JMX source's within a bucket of Cassandra's
histogram. Several tables are combined as a mixture, each table weighted by
its one-minute request rate.

Each read is one instant query of the HTTP API: the node's series, the
time Prometheus scraped them and how long that scrape took, together, so
that all come from the same scrape (rates are over the time between two
scrapes, not between two queries; two separate queries could straddle a
scrape and stretch an interval by a scrape period). A reading is timed at
the middle of its scrape: Prometheus stamps a scrape with its start, and the
exporter reads the counters while the scrape runs, later on a busy host.
"""
from __future__ import annotations

import re

from oslo_log import log as logging
import requests

from elastman.monitor import readings
from elastman.monitor import sources

LOG = logging.getLogger(__name__)

_TABLE = 'cassandra_table_coordinator%s'
READ_LATENCY = _TABLE % 'readlatency'
WRITE_LATENCY = _TABLE % 'writelatency'
READ_SIZE = _TABLE % 'readsize'
WRITE_SIZE = 'cassandra_clientrequest_write_mutationsize'
NAMES = '|'.join((_TABLE % '.*', WRITE_SIZE + '_.*'))
# the label that marks the scrape's time and duration series in a reading's
# answer, and its values
SCRAPED_LABEL = 'elastman_scraped'
SCRAPE_TIME, SCRAPE_DURATION = 'time', 'duration'


def mixture_quantile(tables: list[tuple[float, dict[float, float]]],
                     q: float) -> float | None:
    """The q-quantile of a mixture of distributions, each known by a few of
    its quantiles ``{quantile: value}`` and weighted.

    A table's distribution function at x is the largest known quantile whose
    value is at most x (a step function: never above the truth, so the
    result never under-reports); the answer is the smallest known value at
    which the weighted mixture reaches q. With one table it is that table's
    own q-quantile whenever q is one of the known quantiles.
    """
    tables = [(w, points) for w, points in tables if w > 0 and points]
    if not tables:
        return None
    total = sum(w for w, _ in tables)
    for x in sorted({v for _, points in tables for v in points.values()}):
        reached = sum(w * max((p for p, v in points.items() if v <= x),
                              default=0.0) for w, points in tables) / total
        if reached >= q - 1e-9:
            return x
    return max(v for _, points in tables for v in points.values())


def _weighted(metric: str, tables: dict, keys: bool = False) -> list:
    """(weight, quantile points) of each table of ``metric``: its one-minute
    rate, or its request count while no table has a rate yet (the rate
    starts ticking seconds after the first request).
    """
    found = [((ks, tb), t) for (m, ks, tb), t in tables.items()
             if m == metric]
    by_rate = any(t.get('rate1m', 0.0) > 0 for _, t in found)
    out = []
    for key, t in found:
        weight = t.get('rate1m', 0.0) if by_rate else t.get('count', 0.0)
        points = tables.get((metric, key[0], key[1]), {}).get('points', {})
        out.append((weight, points, key) if keys else (weight, points))
    return out


class PrometheusSource(sources.MetricsSource):
    """Per-table coordinator metrics from a Prometheus server."""

    name = 'prometheus'

    def __init__(self, conf, excluded: frozenset[str],
                 session: requests.Session | None = None) -> None:
        super().__init__(conf, excluded)
        self.opts = conf.prometheus
        self.session = session or requests.Session()
        if self.opts.ca_file:
            self.session.verify = self.opts.ca_file

    @property
    def timeout(self) -> float:
        return self.opts.timeout

    def close(self) -> None:
        self.session.close()

    def _query(self, target: readings.Target, promql: str) -> list[dict]:
        url = self.opts.url.rstrip('/') + '/api/v1/query'
        where = '%s (%s)' % (target.address, self.opts.url)
        try:
            resp = self.session.get(url, params={'query': promql},
                                    timeout=self.opts.timeout)
            body = resp.json()
        except (requests.RequestException, ValueError) as exc:
            raise sources.SourceError(source=self.name, where=where,
                                      reason=str(exc))
        if resp.status_code != 200 or body.get('status') != 'success':
            raise sources.SourceError(
                source=self.name, where=where,
                reason='%s: %s' % (resp.status_code, body.get('error')
                                   or resp.text[:200]))
        return body['data']['result']

    def selector(self, target: readings.Target) -> str:
        # a regex, inside a PromQL double-quoted string (backslashes twice)
        return self.opts.node_selector.format(
            address=re.escape(target.address).replace('\\', '\\\\'),
            node_id=target.node_id or '', cluster_id=target.cluster_id or '')

    def query(self, target: readings.Target) -> str:
        """The node's series, and their scrape's start time and duration as
        two more series.
        """
        selector = self.selector(target)
        return ('{__name__=~"%s",%s}'
                ' or label_replace(max(timestamp(%s_count{%s})), "%s", "%s", "", "")'
                ' or label_replace(max(scrape_duration_seconds{%s}), "%s", "%s", "", "")'
                % (NAMES, selector, READ_LATENCY, selector, SCRAPED_LABEL, SCRAPE_TIME,
                   selector, SCRAPED_LABEL, SCRAPE_DURATION))

    def read(self, target: readings.Target) -> readings.Reading:
        found = self._query(target, self.query(target))
        # every series of one scrape has the scrape's start time
        scrape = {item['metric'][SCRAPED_LABEL]: float(item['value'][1])
                  for item in found if SCRAPED_LABEL in item['metric']}
        series = [item for item in found if SCRAPED_LABEL not in item['metric']]
        if SCRAPE_TIME not in scrape or not series:
            raise sources.SourceError(
                source=self.name, where=target.address,
                reason='Prometheus has no series {__name__=~"%s",%s}'
                % (NAMES, self.selector(target)))
        reading = self._reading(series)
        # the counters were read during the scrape (a federated or remote
        # series may have no duration: then at its start)
        reading.mono = scrape[SCRAPE_TIME] + scrape.get(SCRAPE_DURATION, 0.0) / 2.0
        return reading

    def _reading(self, found: list[dict]) -> readings.Reading:
        """Counts summed over the user tables; percentiles and sizes as
        gauges (sample keys).
        """
        counts = {READ_LATENCY: 0, WRITE_LATENCY: 0}
        tables: dict[tuple[str, str, str], dict] = {}
        write_size = None
        for item in found:
            labels, value = item['metric'], float(item['value'][1])
            name = labels.get('__name__', '')
            if name == WRITE_SIZE + '_mean':
                write_size = value
                continue
            keyspace = labels.get('keyspace')
            if keyspace is None or keyspace in self.excluded:
                continue
            base, _, suffix = name.rpartition('_')
            if suffix in ('count', 'rate1m', 'mean'):
                entry = tables.setdefault((base, keyspace, labels.get(
                    'table', '')), {'points': {}})
                entry[suffix] = value
                if suffix == 'count' and base in counts:
                    counts[base] += int(value)
            elif 'quantile' in labels and value == value:   # not NaN
                tables.setdefault((name, keyspace, labels.get('table', '')),
                                  {'points': {}})['points'][
                    float(labels['quantile'])] = value
        gauges: dict[str, float] = {}
        for metric, prefix in ((READ_LATENCY, 'read'),
                               (WRITE_LATENCY, 'write')):
            mixed = _weighted(metric, tables)
            for q, key in ((0.5, 'p50'), (0.95, 'p95'), (0.99, 'p99')):
                micros = mixture_quantile(mixed, q)
                if micros is not None:
                    gauges['%s_%s_ms' % (prefix, key)] = micros / 1000.0
        # a table's reads weigh its read sizes (a size histogram has no rate)
        weights = dict(((ks, tb), w) for w, _, (ks, tb) in
                       _weighted(READ_LATENCY, tables, keys=True))
        sizes = [(weights.get((ks, tb), 0.0), t['mean'])
                 for (m, ks, tb), t in tables.items()
                 if m == READ_SIZE and t.get('mean') is not None]
        weight = sum(w for w, _ in sizes)
        if weight > 0:
            gauges['read_bytes_mean'] = sum(w * m for w, m in sizes) / weight
        if write_size is not None and write_size == write_size:
            gauges['write_bytes_mean'] = write_size
        return readings.Reading(mono=0.0, source=self.name,
                                reads=counts[READ_LATENCY],
                                writes=counts[WRITE_LATENCY], gauges=gauges)
