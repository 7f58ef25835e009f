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
"""From two readings of a node to one sample (the trainer's contract).

Sample keys: cluster_id, node_id, ts, up, interval_s, reads_per_s,
writes_per_s, read_bytes_mean, write_bytes_mean, read_p50_ms, read_p95_ms,
read_p99_ms, write_p50_ms, write_p95_ms, write_p99_ms (and ``extra``, see
:func:`queue_extras`).
"""
from __future__ import annotations

import datetime
from typing import Iterable
import uuid

from elastman.cassandra import histogram
from elastman.monitor import readings

METRIC_KEYS = ('reads_per_s', 'writes_per_s', 'read_bytes_mean',
               'write_bytes_mean', 'read_p50_ms', 'read_p95_ms',
               'read_p99_ms', 'write_p50_ms', 'write_p95_ms', 'write_p99_ms')
SAMPLE_KEYS = ('cluster_id', 'node_id', 'ts', 'up', 'interval_s') + \
    METRIC_KEYS


def _ms(micros: float | None) -> float | None:
    return None if micros is None else micros / 1000.0


def _latency(buckets: list[int] | None, prefix: str) -> dict:
    out = {}
    for q, name in ((0.5, 'p50'), (0.95, 'p95'), (0.99, 'p99')):
        out['%s_%s_ms' % (prefix, name)] = _ms(
            histogram.percentile(buckets, q)) if buckets else None
    return out


def _delta(now, before):
    if now is None or before is None:
        return None
    return histogram.delta(now, before)


def compute(cluster_id: uuid.UUID, node_id: str, ts: datetime.datetime,
            current: readings.Reading | None,
            previous: readings.Reading | None,
            interval_s: float, up: bool | None = None) -> dict:
    """One sample. Without two comparable readings the metrics are None.

    ``interval_s`` is the nominal interval, used when a rate cannot be
    measured; with two readings it is the time between them.
    """
    sample = {'cluster_id': cluster_id, 'node_id': node_id, 'ts': ts,
              'up': bool(current is not None if up is None else up),
              'interval_s': float(interval_s)}
    sample.update({k: None for k in METRIC_KEYS})
    if current is None or previous is None:
        return sample
    elapsed = current.mono - previous.mono
    reads = current.reads - previous.reads
    writes = current.writes - previous.writes
    if elapsed <= 0 or reads < 0 or writes < 0:
        return sample           # restarted node: counters began again
    sample['interval_s'] = round(elapsed, 3)
    sample['reads_per_s'] = reads / elapsed
    sample['writes_per_s'] = writes / elapsed
    read_lat = _delta(current.read_latency, previous.read_latency)
    write_lat = _delta(current.write_latency, previous.write_latency)
    sample.update(_latency(read_lat, 'read'))
    sample.update(_latency(write_lat, 'write'))
    read_size = _delta(current.read_size, previous.read_size)
    write_size = _delta(current.write_size, previous.write_size)
    sample['read_bytes_mean'] = histogram.mean(read_size) if read_size \
        else None
    sample['write_bytes_mean'] = histogram.mean(write_size) if write_size \
        else None
    _fill_from_gauges(sample, current.gauges, reads, writes)
    return sample


def _fill_from_gauges(sample: dict, gauges: dict[str, float] | None,
                      reads: int, writes: int) -> None:
    """Take what the histograms left open from the source's own gauges,
    for the kinds of request the interval had (as a histogram would).
    """
    for key, value in (gauges or {}).items():
        if key not in METRIC_KEYS or key.endswith('_per_s') or \
                sample[key] is not None or value is None:
            continue
        if (key.startswith('read_') and reads) or \
                (key.startswith('write_') and writes):
            sample[key] = float(value)


def queue_extras(current: readings.Reading | None,
                 previous: readings.Reading | None) -> dict[str, float]:
    """What the coordinator latency leaves out: the wait in the node's
    native-transport queue over the interval (``queue_p99_ms``, all requests)
    and the read p99 with that wait added (``read_with_queue_p99_ms``, the two
    taken as independent); and the slowest round trip of the monitor's probe
    requests (``probe_max_ms``), which also waited where no timer of the
    node looks. Without the queue's histogram (missing or reset), only
    ``probe_max_ms``.
    """
    out = {}
    probe = current.probe_ms if current is not None else None
    if probe:
        out['probe_max_ms'] = round(max(probe), 3)
    if current is None or previous is None:
        return out
    queue = _delta(current.queue_wait, previous.queue_wait)
    if not queue or histogram.total(queue) == 0:
        return out
    out['queue_p99_ms'] = _ms(histogram.percentile(queue, 0.99))
    reads = _delta(current.read_latency, previous.read_latency)
    if reads and histogram.total(reads):
        value = _ms(histogram.sum_percentile(reads, queue, 0.99))
        if value is not None:
            out['read_with_queue_p99_ms'] = value
    return out


def cluster_latency(pairs: Iterable[tuple[readings.Reading | None,
                                          readings.Reading | None]]
                    ) -> dict[str, float]:
    """The cluster's own read latency over the round, from each node's
    (current, previous) readings: ``read_p99_ms`` of the nodes' read
    histograms added together, and ``read_with_queue_p99_ms`` of the
    mixture of each node's read latency plus its queue wait (mixed by the
    nodes' reads). This is the p99 over every read the cluster coordinated,
    which is what an SLO on the cluster means; a key is absent when no node
    gave its histograms.
    """
    merged: list[int] | None = None
    with_queue: list | None = []
    for current, previous in pairs:
        if current is None or previous is None:
            continue
        reads = _delta(current.read_latency, previous.read_latency)
        if not reads or histogram.total(reads) == 0:
            continue
        merged = histogram.add(merged, reads)
        queue = _delta(current.queue_wait, previous.queue_wait)
        if queue is None:
            with_queue = None       # a node without the queue's timer
        elif with_queue is not None:
            # a node that queued nothing: its reads waited only inside
            # the coordinator
            with_queue.append(histogram.sum_distribution(reads, queue)
                              if histogram.total(queue)
                              else histogram.distribution(reads))
    out = {}
    if merged is not None:
        out['read_p99_ms'] = _ms(histogram.percentile(merged, 0.99))
        value = histogram.weighted_quantile(with_queue or [], 0.99)
        if value is not None:
            out['read_with_queue_p99_ms'] = _ms(value)
    return out


def cluster_total(samples: list[dict]) -> dict:
    """Cluster workload: the sum over nodes that were sampled."""
    up = [s for s in samples if s['up']]
    return {
        'reads_per_s': sum(s['reads_per_s'] or 0.0 for s in up),
        'writes_per_s': sum(s['writes_per_s'] or 0.0 for s in up),
        'nodes_up': len(up),
        'nodes_total': len(samples),
    }
