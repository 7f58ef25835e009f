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
"""The monitor against a real 3-node local cluster under a paced load."""
import datetime
import statistics
import time

import pytest

from elastman.monitor import manager as monitor_manager
from tests.functional.compute import cluster as shared
from tests.functional.monitor import load as load_mod

INTERVAL = 10
READS, WRITES, SIZE = 150.0, 50.0, 2000


@pytest.fixture(scope='module')
def cluster(conf, request):
    return shared.acquire(conf, request.config)


@pytest.fixture
def monitored(cluster, store, keyspace_conf):
    """The cluster registered in the store and a monitor over it."""
    keyspace_conf.set_override('sampling_interval', INTERVAL, 'monitor')
    keyspace_conf.set_override('jmx_timeout', 10.0, 'monitor')
    record = store.clusters.create('test', 'monitored', {'local': True},
                                   cluster_id=None)
    for server in cluster.servers:
        store.nodes.upsert(record['id'], server.id, server_id=server.id,
                           address=server.address, flavor=server.flavor,
                           state='ACTIVE', cql_port=server.cql_port,
                           jmx_host=server.jmx_host, jmx_port=server.jmx_port)
    mgr = monitor_manager.MonitorManager(keyspace_conf, store=store)
    mgr.start()
    yield mgr, record['id']
    mgr.stop()
    keyspace_conf.clear_override('sampling_interval', 'monitor')
    keyspace_conf.clear_override('jmx_timeout', 'monitor')


def _rounds(mgr, count):
    out = []
    for _ in range(count):
        t0 = time.monotonic()
        samples = mgr.sample_all()
        out.append(((t0 + time.monotonic()) / 2, samples))
        time.sleep(max(0.0, INTERVAL - (time.monotonic() - t0)))
    return out


def test_samples_match_a_known_load(cluster, monitored, store):
    mgr, cluster_id = monitored
    began = datetime.datetime.now(datetime.timezone.utc)
    load = load_mod.PacedLoad([s.address for s in cluster.servers],
                              'monload', READS, WRITES, SIZE)
    load.start()
    try:
        mgr.sample_all()                 # opens the JMX/CQL connections
        time.sleep(2)
        t0 = time.monotonic()
        mgr.sample_all()                 # the reference reading
        t_start = (t0 + time.monotonic()) / 2
        time.sleep(INTERVAL)
        rounds = _rounds(mgr, 3)
    finally:
        load.stop()
    t_end = rounds[-1][0]
    checked = []
    bounds = [t_start] + [t for t, _ in rounds]
    for (t_a, t_b), (_, samples) in zip(zip(bounds, bounds[1:]), rounds):
        assert all(s['up'] for s in samples)
        reads = sum(s['reads_per_s'] for s in samples)
        writes = sum(s['writes_per_s'] for s in samples)
        # what the client really completed in the same interval (on a
        # loaded 2-core host the open loop can fall behind its schedule)
        done_r = len(load.window(t_a, t_b, 'read')) / (t_b - t_a)
        done_w = len(load.window(t_a, t_b, 'write')) / (t_b - t_a)
        checked.append((round(reads, 1), round(done_r, 1), round(writes, 1),
                        round(done_w, 1)))
        # a round's ends are the moments its JMX reads ran, which on a
        # busy host lie up to a second or two from the midpoints of the
        # sampling calls the client's window uses: 10% of one interval
        # (measured: 162.8 reads/s against 147.9 completed)
        assert reads == pytest.approx(done_r, rel=0.20)
        assert writes == pytest.approx(done_w, rel=0.20)
        assert done_r == pytest.approx(READS, rel=0.25)
        for s in samples:
            if s['reads_per_s'] > 5:
                assert s['read_bytes_mean'] == pytest.approx(SIZE, rel=0.10)
            if s['writes_per_s'] > 5:
                assert s['write_bytes_mean'] == pytest.approx(SIZE, rel=0.10)
    # over the three rounds the same skew weighs a third as much: what the
    # monitor counted (rate times each node's own interval) is what the
    # client completed between the reference reading and the last one
    counted = {kind: sum(s[kind + 's_per_s'] * s['interval_s']
                         for _, samples in rounds for s in samples)
               for kind in ('read', 'write')}
    for kind, counts in counted.items():
        assert counts == pytest.approx(
            len(load.window(t_start, t_end, kind)), rel=0.10), (kind, checked)
    # p99: request-weighted mean over nodes and rounds vs the client's p99
    weighted = [(s['read_p99_ms'], s['reads_per_s'])
                for _, samples in rounds for s in samples
                if s['read_p99_ms'] is not None]
    monitor_p99 = sum(p * w for p, w in weighted) / sum(
        w for _, w in weighted)
    client = load.window(t_start, t_end, 'read')
    client_p99 = load_mod.p(client, 0.99)
    print('rates (monitor, client) %s; read p99 monitor %.2f ms, client %.2f ms (client p50 '
          '%.2f ms, %d reads)' % (checked, monitor_p99, client_p99,
                                  statistics.median(client), len(client)))
    # Stated bound: the coordinator's p99 never exceeds the client's by more
    # than one histogram bucket (20%) + 1 ms, and it is a real latency (the
    # system_views reservoir reports values 1000x too small: microseconds).
    # The client's p99 exceeds it by the time spent outside Cassandra
    # (loopback hop, driver, Python) which, with three JVMs and the client
    # on a 2-core host, has no useful upper bound: seen from 4 to 450 ms.
    assert monitor_p99 <= client_p99 * 1.2 + 1.0
    assert monitor_p99 >= 0.1
    # the native-transport queue wait (Cassandra 5's Client/Queued timer)
    # is read beside the coordinator latency, and adding it never lowers
    # the read p99
    queued = [s for _, samples in rounds for s in samples
              if 'read_with_queue_p99_ms' in s['extra']]
    assert len(queued) >= len(cluster.servers), [
        s['extra'] for _, samples in rounds for s in samples]
    for s in queued:
        assert 0 < s['extra']['queue_p99_ms'] <= s['extra']['read_with_queue_p99_ms']
        assert s['read_p99_ms'] <= s['extra']['read_with_queue_p99_ms']
    # every node that answered was probed from the monitor's side of the
    # socket: a real round trip, within the CQL timeout
    probed = [s['extra'].get('probe_max_ms')
              for _, samples in rounds for s in samples if s['up']]
    assert probed and all(
        p is not None and 0 < p <= mgr.conf.monitor.cql_timeout * 1000
        for p in probed), probed
    stored = store.samples.for_node(cluster_id, cluster.servers[0].id,
                                    limit=3)
    assert len(stored) == 3 and stored[0]['reads_per_s'] is not None
    assert stored[0]['extra']['probe_max_ms'] > 0
    # the cluster's totals, which the predictor reads, one row per round
    totals = store.samples.cluster_workload(cluster_id, began)
    assert len(totals) >= 3
    assert totals[-1]['reads_per_s'] == pytest.approx(
        sum(s['reads_per_s'] for s in rounds[-1][1]))


def test_killed_node_reported_down_others_sampled(cluster, monitored):
    mgr, cluster_id = monitored
    victim = cluster.servers[-1]
    mgr.sample_all()
    time.sleep(INTERVAL / 2)            # kill mid-interval
    cluster.driver.node(victim.id).kill()
    killed_at = time.monotonic()
    down_after = None
    for _ in range(2):
        time.sleep(max(0.0, INTERVAL - (time.monotonic() - killed_at)
                       % INTERVAL))
        samples = {s['node_id']: s for s in mgr.sample_all()}
        others = [s for n, s in samples.items() if n != victim.id]
        assert len(others) == len(cluster.servers) - 1
        assert all(s['up'] for s in others)
        if not samples[victim.id]['up']:
            down_after = time.monotonic() - killed_at
            break
    print('killed node reported down after %.1fs' % down_after)
    assert down_after is not None and down_after <= 2 * INTERVAL
    assert cluster.driver.get(victim.id).status == 'ERROR'
