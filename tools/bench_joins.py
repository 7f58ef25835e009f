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
"""How a +2 scale-out joins on real Cassandra: one node after the other,
two at once, and two at once allowed to bootstrap together.

Starts a one-node local-cloud cluster holding ``--rows`` rows, then

1. adds two servers one at a time, each once the previous one is ``UN``,
   as the actuator's executor does by default, printing each one's time
   from create to ``UN``;
2. creates two more servers back to back and watches ``nodetool status``
   until each is ``UN`` or its Cassandra process has exited, printing when
   each was seen joining and joined, and the line of the log of a node that
   exited about why;
3. creates two more back to back (``--stagger`` seconds apart), each given
   its tokens (``elastman_initial_tokens``: ``initial_token`` from
   :func:`elastman.cassandra.tokens.allocate` and
   ``cassandra.consistent.rangemovement=false``, as the executor does with
   ``[actuator] concurrent_joins`` above 1), and watches them the same way;
   then prints every node's token count and ownership and counts the rows
   at consistency ALL, which must all still be there.

    python3 tools/bench_joins.py [--rows 20000] [--value-size 1000] \
        [--timeout 300] [--stagger 0]

The simulator joins the nodes of a +k scale-out in parallel
(``--join-slots 0``); this is the measurement that says when Cassandra does.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from cassandra import cluster as cql_cluster  # noqa: E402
from cassandra import concurrent  # noqa: E402
from cassandra import ConsistencyLevel  # noqa: E402
from cassandra import policies  # noqa: E402
import localcloud  # noqa: E402

from elastman.cassandra import nodetool  # noqa: E402
from elastman.cassandra import tokens  # noqa: E402
from elastman.compute import base  # noqa: E402
from elastman.compute import local  # noqa: E402

REASONS = ('Other bootstrapping', 'collision', 'Exception', 'ERROR', 'bootstrap')


def load(server: base.Server, rows: int, value_size: int) -> None:
    """A keyspace of ``rows`` rows on the first node, for the joins to
    stream.
    """
    cluster = cql_cluster.Cluster(
        [server.address], port=server.cql_port, protocol_version=5,
        load_balancing_policy=policies.WhiteListRoundRobinPolicy(
            [server.address]))
    try:
        session = cluster.connect()
        session.execute("CREATE KEYSPACE IF NOT EXISTS joins WITH "
                        "replication = {'class': 'SimpleStrategy', "
                        "'replication_factor': 1}")
        session.execute('CREATE TABLE IF NOT EXISTS joins.t '
                        '(k int PRIMARY KEY, v blob)')
        insert = session.prepare('INSERT INTO joins.t (k, v) VALUES (?, ?)')
        value = os.urandom(value_size)
        concurrent.execute_concurrent_with_args(
            session, insert, [(k, value) for k in range(rows)],
            concurrency=64)
    finally:
        cluster.shutdown()


def count_rows(server: base.Server) -> int:
    """Rows of the benchmark's table, read at consistency ALL."""
    cluster = cql_cluster.Cluster(
        [server.address], port=server.cql_port, protocol_version=5)
    try:
        session = cluster.connect()
        statement = cql_cluster.SimpleStatement(
            'SELECT count(*) FROM joins.t',
            consistency_level=ConsistencyLevel.ALL)
        return int(session.execute(statement, timeout=120).one()[0])
    finally:
        cluster.shutdown()


def status(tool: nodetool.Nodetool) -> dict[str, str]:
    try:
        return {n.address: n.code for n in tool.status()}
    except Exception:
        return {}


def why_exited(driver: local.LocalDriver, server_id: str) -> str:
    """The log line of an exited node that says why, best first."""
    path = os.path.join(driver.node(server_id).log_dir, 'system.log')
    try:
        with open(path, errors='replace') as f:
            lines = f.readlines()
    except OSError as exc:
        return 'no log: %s' % exc
    for word in REASONS:
        for line in lines:
            if word in line:
                return line.strip()[:300]
    return (lines[-1].strip() if lines else 'empty log')[:300]


def log_tail(driver: local.LocalDriver, server_id: str,
             lines: int = 6) -> list[str]:
    path = os.path.join(driver.node(server_id).log_dir, 'system.log')
    try:
        with open(path, errors='replace') as f:
            return [line.rstrip()[:240] for line in f.readlines()[-lines:]]
    except OSError as exc:
        return ['no log: %s' % exc]


def watch(driver, tool, servers, started, timeout) -> dict[str, dict]:
    """Until every server is UN or exited: when each was first seen UJ and
    UN (seconds since ``started``), or that it exited and why.
    """
    seen = {s.id: {} for s in servers}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        codes = status(tool)
        now = time.monotonic() - started
        for s in servers:
            record = seen[s.id]
            if 'UN' in record or 'exited' in record:
                continue
            code = codes.get(s.address)
            if code in ('UJ', 'UN') and code not in record:
                record[code] = now
            if code != 'UN' and driver.get(s.id).status == base.ERROR:
                record['exited'] = now
                record['why'] = why_exited(driver, s.id)
        if all('UN' in r or 'exited' in r for r in seen.values()):
            break
        time.sleep(2)
    return seen


def wait_un(driver, tool, server, timeout) -> float:
    started = time.monotonic()
    seen = watch(driver, tool, [server], started, timeout)[server.id]
    if 'UN' not in seen:
        raise RuntimeError('%s did not join: %s' % (server.address, seen))
    return seen['UN']


def throttle(conf, driver: local.LocalDriver, state: str, mbps: int) -> None:
    """Cap the streaming of every running node at ``mbps`` MiB/s (0: leave
    it).
    """
    if not mbps:
        return
    for server in driver.list():
        if driver.get(server.id).status == base.ACTIVE:
            nodetool.Nodetool(conf, server.jmx_host, server.jmx_port,
                              log_dir=os.path.join(state, 'nodetool')).run(
                'setstreamthroughput', str(mbps))


def _at(record: dict, key: str) -> str:
    return '%.1f' % record[key] if key in record else '-'


def report_pair(driver, tool, pair, started, timeout) -> None:
    """Watch two new servers and print when each joined, or why not."""
    seen = watch(driver, tool, pair, started, timeout)
    for server in pair:
        record = seen[server.id]
        print('  %s: joining at %s s, UN at %s s, exited at %s s%s' % (
            server.address, _at(record, 'UJ'), _at(record, 'UN'),
            _at(record, 'exited'),
            ('\n    ' + record['why']) if 'why' in record else ''))
        if 'UN' not in record and 'why' not in record:
            print('    not UN after %.0f s; its log ends:\n      %s'
                  % (timeout, '\n      '.join(log_tail(driver, server.id))))


def steps(args: argparse.Namespace, conf, driver: local.LocalDriver,
          state: str) -> int:
    """The three steps of the module's docstring."""
    flavor = args.flavor.split(':')[0]
    tag = {base.CLUSTER_TAG: str(uuid.uuid4())}
    first = driver.create('join0', flavor, tag)
    driver.node(first.id).wait_for_cql(args.timeout)
    tool = nodetool.Nodetool(conf, first.jmx_host, first.jmx_port,
                             log_dir=os.path.join(state, 'nodetool'))
    load(first, args.rows, args.value_size)
    print('first node %s UN, %d rows of %d bytes'
          % (first.address, args.rows, args.value_size))

    throttle(conf, driver, state, args.stream_mbps)
    print('two servers one at a time:')
    total = 0.0
    for i in (() if args.only_concurrent else (1, 2)):
        started = time.monotonic()
        server = driver.create('join%d' % i, flavor, tag,
                               seeds=[first.address])
        took = wait_un(driver, tool, server, args.timeout)
        total += took
        print('  %s: UN %.1f s after its create' % (server.address, took))
    print('  both: %.1f s' % total)

    throttle(conf, driver, state, args.stream_mbps)
    started = time.monotonic()
    pair = [] if args.only_concurrent else [
        driver.create('join%d' % i, flavor, tag, seeds=[first.address])
        for i in (3, 4)]
    print('two servers created back to back in %.1f s:'
          % (time.monotonic() - started))
    report_pair(driver, tool, pair, started, args.timeout)

    throttle(conf, driver, state, args.stream_mbps)
    started = time.monotonic()
    pair = []
    given = tokens.allocate(tool.ring_tokens(), 2,
                            conf.local_cloud.num_tokens)
    for i, mine in zip((5, 6), given):
        if pair and args.stagger:
            time.sleep(args.stagger)
        pair.append(driver.create(
            'join%d' % i, flavor,
            {**tag, base.INITIAL_TOKENS: ','.join(map(str, mine))},
            seeds=[first.address]))
    print('two servers given their tokens, created %.1f s apart:'
          % (time.monotonic() - started))
    report_pair(driver, tool, pair, started, args.timeout)
    print('ring:')
    for node in tool.status():
        print('  %s %s%s tokens %d owns %s' % (
            node.address, node.status, node.state, node.tokens,
            '?' if node.owns is None else '%.1f%%' % node.owns))
    print('rows at ALL: %d of %d' % (count_rows(first), args.rows))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--rows', type=int, default=20000)
    ap.add_argument('--value-size', type=int, default=1000)
    ap.add_argument('--flavor', default='j:cpu=1,heap=384M')
    ap.add_argument('--network', default='127.0.84.0/25')
    ap.add_argument('--jmx-port-base', type=int, default=18000)
    ap.add_argument('--timeout', type=float, default=300.0,
                    help='seconds to wait for the nodes of one step')
    ap.add_argument('--stream-mbps', type=int, default=0,
                    help='before each step, cap every node\'s streaming at '
                    'this many MiB/s (nodetool setstreamthroughput; 0: '
                    'leave it), so that a join lasts as long as its data '
                    'takes to stream')
    ap.add_argument('--only-concurrent', action='store_true',
                    help='skip steps 1 and 2')
    ap.add_argument('--stagger', type=float, default=0.0,
                    help='seconds between the creates of the concurrent '
                    'pair (step 3)')
    args = ap.parse_args()
    with localcloud.private_cloud('joins', [args.flavor], args.network,
                                  args.jmx_port_base) as cloud:
        return steps(args, *cloud)


if __name__ == '__main__':
    sys.exit(main())
