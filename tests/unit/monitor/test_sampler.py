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
import datetime
import uuid

import pytest

from elastman.monitor import readings
from elastman.monitor import sampler

CID = uuid.uuid4()
TS = datetime.datetime(2025, 1, 1, 12, 0, 0)


def reading(mono, reads, writes, lat_bucket=None, lat_count=0,
            size_bucket=None, size_count=0, source='jmx'):
    lat = [0] * 128
    size = [0] * 165
    if lat_bucket is not None:
        lat[lat_bucket] = lat_count
    if size_bucket is not None:
        size[size_bucket] = size_count
    return readings.Reading(mono=mono, source=source, reads=reads,
                            writes=writes, read_latency=lat,
                            write_latency=list(lat), read_size=size,
                            write_size=list(size))


def test_keys_are_the_trainer_contract():
    sample = sampler.compute(CID, 'n1', TS, None, None, 10)
    assert tuple(sample) == sampler.SAMPLE_KEYS
    assert sample['up'] is False
    assert all(sample[k] is None for k in sampler.METRIC_KEYS)


def test_first_reading_has_no_rates():
    sample = sampler.compute(CID, 'n1', TS, reading(5, 10, 10), None, 10)
    assert sample['up'] is True and sample['reads_per_s'] is None


def test_rates_sizes_and_percentiles_over_interval():
    before = reading(100.0, 1000, 500, lat_bucket=27, lat_count=1000,
                     size_bucket=34, size_count=100)
    after = reading(110.0, 1500, 700, lat_bucket=27, lat_count=1000,
                    size_bucket=34, size_count=300)
    after.read_latency[31] = 100        # only new, slow requests count
    sample = sampler.compute(CID, 'n1', TS, after, before, 10)
    assert sample['interval_s'] == 10.0
    assert sample['reads_per_s'] == pytest.approx(50.0)
    assert sample['writes_per_s'] == pytest.approx(20.0)
    assert sample['read_p50_ms'] == pytest.approx(0.642)
    assert sample['read_p99_ms'] == pytest.approx(0.642)
    assert sample['write_p99_ms'] is None       # no writes timed in window
    assert sample['read_bytes_mean'] == pytest.approx((924 + 1109) / 2)


def test_counter_reset_gives_no_rates():
    sample = sampler.compute(CID, 'n1', TS, reading(20, 5, 5),
                             reading(10, 100, 100), 10)
    assert sample['up'] is True and sample['reads_per_s'] is None


def test_cql_fallback_has_rates_but_no_latency():
    sample = sampler.compute(
        CID, 'n1', TS,
        readings.Reading(mono=20, source='cql', reads=300, writes=100),
        readings.Reading(mono=10, source='cql', reads=100, writes=0), 10)
    assert sample['reads_per_s'] == 20 and sample['writes_per_s'] == 10
    assert sample['read_p99_ms'] is None


def test_cluster_total():
    a = dict(up=True, reads_per_s=10.0, writes_per_s=1.0)
    b = dict(up=False, reads_per_s=None, writes_per_s=None)
    c = dict(up=True, reads_per_s=None, writes_per_s=None)
    assert sampler.cluster_total([a, b, c]) == {
        'reads_per_s': 10.0, 'writes_per_s': 1.0, 'nodes_up': 2,
        'nodes_total': 3}


def _queued(reading_, bucket, count):
    reading_.queue_wait = [0] * 128
    reading_.queue_wait[bucket] = count
    return reading_


def _queued_round():
    """Two readings 10 s apart: 100 new reads at 642 us, each after a wait
    of 642 us in the queue.
    """
    before = _queued(reading(100.0, 1000, 500, lat_bucket=27,
                             lat_count=1000), 27, 100)
    after = _queued(reading(110.0, 1500, 700, lat_bucket=27,
                            lat_count=1000), 27, 100)
    after.read_latency[31] = 100
    after.queue_wait[31] = 40
    return before, after


def test_queue_wait_and_read_latency_with_it():
    before, after = _queued_round()
    extras = sampler.queue_extras(after, before)
    assert extras['queue_p99_ms'] == pytest.approx(0.642)
    assert extras['read_with_queue_p99_ms'] == pytest.approx(1.284)


def test_probe_round_trips_are_reported_beside_the_timers():
    before, after = _queued_round()
    # the probes waited longer than any timer of the node saw: reported,
    # and the timers' metric is left as they measured it
    after.probe_ms = [3.0, 4.5, 9.25]
    extras = sampler.queue_extras(after, before)
    assert extras['probe_max_ms'] == 9.25
    assert extras['read_with_queue_p99_ms'] == pytest.approx(1.284)
    assert extras['queue_p99_ms'] == pytest.approx(0.642)
    # without the queue's timer, or the node's first reading: the probe only
    plain = reading(110.0, 1500, 700, lat_bucket=27, lat_count=1000)
    plain.probe_ms = [7.0]
    assert sampler.queue_extras(plain, before) == {'probe_max_ms': 7.0}
    assert sampler.queue_extras(plain, None) == {'probe_max_ms': 7.0}


def test_cluster_latency_is_the_p99_over_every_read_of_the_round():
    # a busy fast node (990 new reads at 310 us) and a quiet slow one
    # (20 new reads at 8.2 ms): 2% of the cluster's reads were slow
    fast = (reading(110.0, 1990, 0, lat_bucket=27, lat_count=1990),
            reading(100.0, 1000, 0, lat_bucket=27, lat_count=1000))
    slow = (reading(110.0, 40, 0, lat_bucket=45, lat_count=40),
            reading(100.0, 20, 0, lat_bucket=45, lat_count=20))
    got = sampler.cluster_latency([fast, slow])
    assert got == {'read_p99_ms': 8.239}       # no queue timer: no other key
    # each node alone: the fast one is fast, the slow one slow
    assert sampler.compute(CID, 'f', TS, *fast, 10)['read_p99_ms'] == 0.31
    assert sampler.cluster_latency([fast])['read_p99_ms'] == 0.31
    # a node that did not answer, or answered for the first time, is left out
    assert sampler.cluster_latency([fast, (None, slow[1]), (slow[0], None)]) == {
        'read_p99_ms': 0.31}
    assert sampler.cluster_latency([]) == {}


def test_cluster_latency_with_the_queue_wait():
    fast = (_queued(reading(110.0, 1990, 0, lat_bucket=27, lat_count=1990), 0, 0),
            _queued(reading(100.0, 1000, 0, lat_bucket=27, lat_count=1000), 0, 0))
    queued = (_queued(reading(110.0, 40, 0, lat_bucket=27, lat_count=40), 45, 40),
              _queued(reading(100.0, 20, 0, lat_bucket=27, lat_count=20), 45, 20))
    got = sampler.cluster_latency([fast, queued])
    # the fast node queued nothing; the other's reads each waited 8.2 ms
    assert got['read_p99_ms'] == 0.31
    assert got['read_with_queue_p99_ms'] == pytest.approx(8.239 + 0.31)
    # a node without the queue's timer: no queue-inclusive cluster metric
    plain = (reading(110.0, 40, 0, lat_bucket=27, lat_count=40),
             reading(100.0, 20, 0, lat_bucket=27, lat_count=20))
    assert 'read_with_queue_p99_ms' not in sampler.cluster_latency([fast, plain])


def test_no_queue_extras_without_both_histograms():
    plain = reading(110.0, 1500, 700, lat_bucket=27, lat_count=1000)
    queued = _queued(reading(100.0, 1000, 500), 27, 10)
    assert sampler.queue_extras(plain, queued) == {}
    assert sampler.queue_extras(queued, None) == {}
    idle = _queued(reading(110.0, 1000, 500), 27, 10)
    assert sampler.queue_extras(idle, queued) == {}     # nothing queued
    waited = _queued(reading(110.0, 1000, 500), 27, 20)
    assert sampler.queue_extras(waited, queued) == {'queue_p99_ms': 0.31}


def test_gauges_fill_what_the_histograms_cannot_give():
    before = readings.Reading(mono=100.0, source='prometheus', reads=1000,
                              writes=500)
    gauges = {'read_p99_ms': 4.0, 'read_p50_ms': 1.0, 'write_p99_ms': 2.0,
              'read_bytes_mean': 120.0, 'reads_per_s': 1e9, 'bogus': 1.0}
    after = readings.Reading(mono=110.0, source='prometheus', reads=1500,
                             writes=500, gauges=gauges)
    sample = sampler.compute(CID, 'n1', TS, after, before, 10)
    assert sample['reads_per_s'] == pytest.approx(50.0)   # from the counts
    assert sample['read_p99_ms'] == 4.0 and sample['read_p50_ms'] == 1.0
    assert sample['read_bytes_mean'] == 120.0
    assert sample['write_p99_ms'] is None       # no writes in the interval
    assert 'bogus' not in sample


def test_interval_histograms_win_over_gauges():
    before = reading(100.0, 1000, 500, lat_bucket=27, lat_count=1000)
    after = reading(110.0, 1100, 500, lat_bucket=27, lat_count=1100)
    after.gauges = {'read_p99_ms': 99.0}
    sample = sampler.compute(CID, 'n1', TS, after, before, 10)
    assert sample['read_p99_ms'] == pytest.approx(0.310)
