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
"""How many reads a slow replica serves on real Cassandra.

Starts three local-cloud nodes of one flavour, loads YCSB's table at
replication factor 3 (every node holds every row), finds the cluster's
unthrottled read throughput, then runs YCSB at ``--load`` of it, at
consistency ONE, once per entry of ``--cuts``: before each phase the third
node's CPU quota is set to that fraction of its flavour's (the other two
keep theirs). Each phase prints, per node, the share of the reads its
replica executed (the ``ReadLatency`` count of the table), the share it
coordinated (``CoordinatorReadLatency``), its speculative retries, and
the client's throughput and read p99 over the phase.

    python3 tools/bench_read_routing.py [--records 20000] [--duration 60] \
        [--load 0.5] [--cuts 1,0.5,0.25,0.1] [--client ycsb|python]

The client is YCSB on elastman's binding (the DataStax Java driver 4 and
its default load-balancing policy, which puts a replica with many requests
in flight behind the others), or with ``--client python`` a paced reader on
the Python driver's default policy (token-aware round robin, which does
not look at a replica's speed).

"Capacity share" is what each node would serve if reads went in
proportion to token share times CPU quota, as ``elastman-manage simulate
--read-routing capacity`` sends them; ``token`` gives every VM its token
share whatever its speed (doc/source/slo-first.rst, "How reads reach a
slow replica").
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import random
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from cassandra import cluster as cql_cluster  # noqa: E402
from cassandra import policies  # noqa: E402
import localcloud  # noqa: E402

from elastman.cassandra import nodetool  # noqa: E402
from elastman.compute import base  # noqa: E402
from elastman.evaluation import ycsb  # noqa: E402
from elastman.monitor import jmx  # noqa: E402

KEYSPACE, TABLE = 'routing', 'usertable'
TABLE_METRIC = ('org.apache.cassandra.metrics:type=Table,keyspace=%s,'
                'scope=%s,name=%%s' % (KEYSPACE, TABLE))
COUNTERS = {'local': 'ReadLatency', 'coordinated': 'CoordinatorReadLatency',
            'speculative': 'SpeculativeRetries'}


def counts(bridge: jmx.JmxBridge, servers: list[base.Server]
           ) -> list[dict[str, int]]:
    """Each node's read counters of the benchmark's table."""
    found = []
    for server in servers:
        mine = {}
        for key, name in COUNTERS.items():
            beans = bridge.query(server.jmx_host, server.jmx_port,
                                 TABLE_METRIC % name, ('Count',))
            mine[key] = sum(int((b.get('attrs') or {}).get('Count') or 0)
                            for b in beans)
        found.append(mine)
    return found


def wait_un(tool: nodetool.Nodetool, server: base.Server,
            timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if {n.address: n.code for n in tool.status()}.get(
                    server.address) == 'UN':
                return
        except Exception:
            pass
        time.sleep(2)
    raise RuntimeError('%s is not UN after %.0f s' % (server.address, timeout))


@dataclasses.dataclass
class Measured:
    """What the client saw over one phase."""

    throughput: float
    p99_ms: float
    failures: int


def run_ycsb(runner: ycsb.Runner, name: str, duration: float, rate: float,
             threads: int) -> Measured:
    result = runner.run(ycsb.Phase(name, duration, rate, read_proportion=1.0,
                                   update_proportion=0.0, threads=threads))
    row = result.row()
    return Measured(row['throughput'] or 0.0, row.get('read_p99_ms') or -1.0,
                    ycsb.failures(result.summary))


class PythonReader:
    """Reads of random rows of the table at a fixed rate, on the Python
    driver's default load-balancing policy; a read that falls due while
    ``max_in_flight`` are outstanding is counted as failed.
    """

    def __init__(self, hosts: list[str], port: int,
                 max_in_flight: int = 256) -> None:
        self.cluster = cql_cluster.Cluster(
            hosts, port=port, protocol_version=5,
            load_balancing_policy=policies.TokenAwarePolicy(
                policies.DCAwareRoundRobinPolicy()))
        self.session = self.cluster.connect(KEYSPACE)
        self.keys = [r.y_id for r in self.session.execute(
            'SELECT y_id FROM %s LIMIT 5000' % TABLE)]
        self.select = self.session.prepare(
            'SELECT * FROM %s WHERE y_id = ?' % TABLE)
        self.max_in_flight = max_in_flight

    def run(self, duration: float, rate: float) -> Measured:
        latencies: list[float] = []
        failed = [0]
        in_flight = [0]
        lock = threading.Lock()

        def done(_rows, started):
            with lock:
                in_flight[0] -= 1
                latencies.append(time.monotonic() - started)

        def error(_exc, started):
            with lock:
                in_flight[0] -= 1
                failed[0] += 1

        started = time.monotonic()
        sent = 0
        while True:
            now = time.monotonic()
            if now - started >= duration:
                break
            due = int((now - started) * rate)
            while sent < due:
                sent += 1
                with lock:
                    if in_flight[0] >= self.max_in_flight:
                        failed[0] += 1
                        continue
                    in_flight[0] += 1
                future = self.session.execute_async(
                    self.select, (random.choice(self.keys),))
                future.add_callbacks(done, error, callback_args=(now,),
                                     errback_args=(now,))
            time.sleep(0.002)
        deadline = time.monotonic() + 15
        while in_flight[0] and time.monotonic() < deadline:
            time.sleep(0.1)
        with lock:
            ordered = sorted(latencies)
        p99 = ordered[int(0.99 * (len(ordered) - 1))] * 1000 if ordered \
            else -1.0
        return Measured(len(ordered) / duration, p99, failed[0])

    def close(self) -> None:
        self.cluster.shutdown()


def share(values: list[int]) -> list[float]:
    total = sum(values)
    return [v / total if total else 0.0 for v in values]


def measure(args: argparse.Namespace, conf, driver, state: str) -> int:
    """Start the three nodes, load them, and run the phases."""
    cuts = [float(c) for c in args.cuts.split(',')]
    flavor = args.flavor.split(':')[0]
    tag = {base.CLUSTER_TAG: str(uuid.uuid4())}
    bridge = jmx.JmxBridge(conf, timeout=20.0)
    reader = None
    try:
        servers = [driver.create('routing1', flavor, tag)]
        driver.node(servers[0].id).wait_for_cql(args.timeout)
        tool = nodetool.Nodetool(conf, servers[0].jmx_host,
                                 servers[0].jmx_port,
                                 log_dir=os.path.join(state, 'nodetool'))
        for i in (2, 3):
            server = driver.create('routing%d' % i, flavor, tag,
                                   seeds=[servers[0].address])
            wait_un(tool, server, args.timeout)
            servers.append(server)
        slow = driver.cpu_cgroup(servers[2].id)
        if slow is None or slow.quota() is None:
            print('no cgroup CPU quota on this host: a node cannot be slowed')
            return 2
        full = slow.quota()
        print('three nodes UN: %s; quota %.2f CPU each'
              % (', '.join(s.address for s in servers), full))

        target = ycsb.Target(hosts=[s.address for s in servers],
                             port=servers[0].cql_port, keyspace=KEYSPACE,
                             recordcount=args.records, replication_factor=3,
                             consistency='ONE')
        runner = ycsb.Runner(target, os.path.join(state, 'ycsb'))
        loaded = runner.load(ycsb.Phase('load', 1, 0, threads=16))
        if loaded.returncode != 0:
            raise RuntimeError('YCSB load failed: see %s' % loaded.log_path)
        bridge.start()
        top = run_ycsb(runner, 'max', 60, 0, args.threads)
        rate = args.rate or args.load * top.throughput
        print('unthrottled YCSB reads: %.0f ops/s (p99 %.1f ms); phases at '
              '%.0f reads/s from %s' % (top.throughput, top.p99_ms, rate,
                                        args.client))
        if args.client == 'python':
            reader = PythonReader(target.hosts, target.port)
        print('%-6s %-9s %-22s %-22s %-22s %-9s %-8s %s' % (
            'quota', 'capacity', 'local reads (share)', 'coordinated',
            'speculative', 'reads/s', 'p99 ms', 'failures'))
        for cut in cuts:
            slow.set_quota(full * cut)
            time.sleep(5)
            before = counts(bridge, servers)
            if reader is not None:
                seen = reader.run(args.duration, rate)
            else:
                seen = run_ycsb(runner, 'cut-%g' % cut, args.duration, rate,
                                args.threads)
            after = counts(bridge, servers)
            delta = {k: [a[k] - b[k] for a, b in zip(after, before)]
                     for k in COUNTERS}
            print('%-6g %-9.3f %-22s %-22s %-22s %-9.0f %-8.1f %d' % (
                cut, cut / (2.0 + cut),
                ' '.join('%.3f' % s for s in share(delta['local'])),
                ' '.join('%.3f' % s for s in share(delta['coordinated'])),
                ' '.join('%d' % s for s in delta['speculative']),
                seen.throughput, seen.p99_ms, seen.failures))
            sys.stdout.flush()
        slow.set_quota(full)
        return 0
    finally:
        if reader is not None:
            reader.close()
        bridge.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--flavor', default='r:cpu=0.5,heap=384M')
    ap.add_argument('--network', default='127.0.85.0/25')
    ap.add_argument('--jmx-port-base', type=int, default=18200)
    ap.add_argument('--records', type=int, default=20000)
    ap.add_argument('--duration', type=float, default=60.0,
                    help='seconds of each measured phase')
    ap.add_argument('--load', type=float, default=0.5,
                    help='the phases\' target, as a fraction of the '
                    'unthrottled throughput measured first')
    ap.add_argument('--cuts', default='1,0.5,0.25,0.1',
                    help='the third node\'s CPU quota in each phase, as '
                    'fractions of its flavour\'s')
    ap.add_argument('--threads', type=int, default=32,
                    help='YCSB\'s client threads')
    ap.add_argument('--client', choices=('ycsb', 'python'), default='ycsb')
    ap.add_argument('--rate', type=float, default=0.0,
                    help='the phases\' reads per second (0: --load of the '
                    'measured throughput)')
    ap.add_argument('--timeout', type=float, default=300.0)
    args = ap.parse_args()
    with localcloud.private_cloud('routing', [args.flavor], args.network,
                                  args.jmx_port_base) as cloud:
        return measure(args, *cloud)


if __name__ == '__main__':
    sys.exit(main())
