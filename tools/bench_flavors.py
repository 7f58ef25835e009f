#!/usr/bin/env python3
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
"""Does a local flavour with half the CPU quota serve less? (issue 3)

Starts one single-node local-cloud server per flavour (same heap, different
CFS quota), loads it with a closed loop of 75% reads / 25% writes of
``--value-size`` bytes at increasing concurrency, and prints throughput and
client-side latency per step, the cgroup's throttling, and the highest
throughput each flavour sustained with p99 under ``--slo-ms``.

    python3 tools/bench_flavors.py [--flavors full:cpu=1,heap=512M \
        half:cpu=0.5,heap=512M] [--seconds 8] [--warmup 30] [--slo-ms 20] \
        [--cpu-period-us 100000]
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from cassandra import cluster as cql_cluster  # noqa: E402
from cassandra import policies  # noqa: E402
import localcloud  # noqa: E402

from elastman.compute import base  # noqa: E402


def closed_loop(session, read, write, value, keys, concurrency, seconds):
    """Keep ``concurrency`` requests in flight; (ops/s, latencies ms)."""
    lock = threading.Lock()
    lat: list[float] = []
    errors = [0]
    stop_at = time.monotonic() + seconds
    done = threading.Event()
    inflight = [0]
    counter = [0]

    def issue():
        i = counter[0]
        counter[0] += 1
        key = (i * 7919) % keys
        t0 = time.monotonic()
        if i % 4 == 3:
            fut = session.execute_async(write, (key, value))
        else:
            fut = session.execute_async(read, (key,))
        fut.add_callbacks(finish, failed, callback_args=(t0,),
                          errback_args=(t0,))

    def finish(_rows, t0):
        end = time.monotonic()
        with lock:
            lat.append((end - t0) * 1000.0)
            again = end < stop_at
            if not again:
                inflight[0] -= 1
                if inflight[0] == 0:
                    done.set()
        if again:
            with lock:
                issue()

    def failed(_exc, t0):
        errors[0] += 1
        finish(None, t0)

    start = time.monotonic()
    with lock:
        inflight[0] = concurrency
        for _ in range(concurrency):
            issue()
    done.wait(seconds + 30)
    elapsed = time.monotonic() - start
    return len(lat) / elapsed, sorted(lat), errors[0]


def pct(values, q):
    return values[min(len(values) - 1, int(q * len(values)))] if values \
        else float('nan')


def bench(driver, flavor, args):
    server = driver.create('bench-' + flavor, flavor,
                           {base.CLUSTER_TAG: str(uuid.uuid4())})
    try:
        node = driver.node(server.id)
        node.wait_for_cql(300)
        group = driver.cpu_cgroup(server.id)
        cluster = cql_cluster.Cluster(
            [server.address], protocol_version=5,
            load_balancing_policy=policies.RoundRobinPolicy())
        session = cluster.connect()
        session.execute("CREATE KEYSPACE IF NOT EXISTS bench WITH replication"
                        " = {'class': 'SimpleStrategy', "
                        "'replication_factor': 1}")
        session.execute('CREATE TABLE IF NOT EXISTS bench.kv (k int PRIMARY '
                        'KEY, v blob)')
        write = session.prepare('INSERT INTO bench.kv (k, v) VALUES (?, ?)')
        read = session.prepare('SELECT v FROM bench.kv WHERE k = ?')
        value = os.urandom(args.value_size)
        for k in range(args.keys):
            session.execute(write, (k, value))
        # JIT compilation and the first flushes would eat a small quota
        closed_loop(session, read, write, value, args.keys, 4, args.warmup)
        rows = []
        for conc in args.concurrency:
            before = group.stats() if group else {}
            ops, lat, errors = closed_loop(session, read, write, value,
                                           args.keys, conc, args.seconds)
            after = group.stats() if group else {}
            throttled = after.get('nr_throttled', 0) - before.get(
                'nr_throttled', 0)
            rows.append((conc, ops, pct(lat, 0.5), pct(lat, 0.99), errors,
                         throttled))
            print('%-6s conc=%-3d %7.0f ops/s  p50 %6.2f ms  p99 %7.2f ms  '
                  'errors %d  throttled periods %d' % (
                      flavor, conc, ops, pct(lat, 0.5), pct(lat, 0.99),
                      errors, throttled), flush=True)
        cluster.shutdown()
        return rows
    finally:
        driver.delete(server.id)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--flavors', nargs='+',
                        default=['full:cpu=1,heap=512M',
                                 'half:cpu=0.5,heap=512M'])
    parser.add_argument('--concurrency', type=int, nargs='+',
                        default=[1, 2, 4, 8, 16, 32])
    parser.add_argument('--seconds', type=float, default=8)
    parser.add_argument('--warmup', type=float, default=30,
                        help='seconds of load before the measured steps')
    parser.add_argument('--cpu-period-us', type=int, default=100000,
                        help='CFS period of the quotas ([local_cloud] '
                             'cpu_period_us)')
    parser.add_argument('--value-size', type=int, default=1024)
    parser.add_argument('--keys', type=int, default=2000)
    parser.add_argument('--slo-ms', type=float, default=20.0)
    parser.add_argument('--network', default='127.0.61.0/24')
    parser.add_argument('--jmx-port-base', type=int, default=17300)
    args = parser.parse_args(argv)

    results = {}
    with localcloud.private_cloud(
            'bench', args.flavors, args.network, args.jmx_port_base,
            cpu_period_us=args.cpu_period_us) as (_conf, driver, _state):
        for text in args.flavors:
            name = text.split(':', 1)[0]
            results[name] = bench(driver, name, args)
    print('\nhighest throughput with p99 <= %.0f ms:' % args.slo_ms)
    for name, rows in results.items():
        ok = [r[1] for r in rows if r[3] <= args.slo_ms]
        print('  %-6s %7.0f ops/s' % (name, max(ok) if ok else 0.0))
    return 0


if __name__ == '__main__':
    sys.exit(main())
