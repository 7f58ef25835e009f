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
"""elastman at scale, measured against a real store node.

Every subcommand but ``decide`` starts a private single-node Cassandra store
on ``--address`` (a loopback address of its own; ``--store HOST:PORT`` uses
a running node instead) and prints one JSON line per measured size, with the
machine's load average beside the figures. Synthetic samples stand in for
the workload; what runs is elastman's own code against the real store. The
results and the commands are in doc/source/scale.rst.

  decide      decide() and the planning step (estimates + decide) alone
  period      one full control period of an N-node cluster, in a fresh
              process (the actuator's): store reads, capacity estimates,
              decision, decision record; its time and resident memory
  trainer     what a trainer round writes when a fraction of the VMs took a
              sample, and what a refit round reads and writes
  monitor     one monitor round over N nodes, every node read from the store
              node itself over JMX and CQL
  clusters    C clusters of K nodes, two copies of each worker in processes
              of their own: round times against their periods; then one
              copy of each is killed and the time until the other holds its
              clusters is measured
  predictor   a predictor round over C clusters with a full history window,
              keeping the window between rounds or reading it whole; a
              restarted predictor's first round against steady rounds
  store-size  bytes on disk per node and day of samples, and at their TTL
  plot        the growth of each cost with size, from the JSON lines above

    python3 tools/bench_scale.py decide --nodes 100 1000
    python3 tools/bench_scale.py period --nodes 100 1000
    python3 tools/bench_scale.py trainer --nodes 1000 --changed 0.01 0.1 1
    python3 tools/bench_scale.py monitor --nodes 10 100 1000
    python3 tools/bench_scale.py clusters --clusters 100 1000 --nodes 10
    python3 tools/bench_scale.py predictor --clusters 40 --history-hours 67
    python3 tools/bench_scale.py store-size --nodes 100
"""
from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import datetime
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Iterable, Iterator
import uuid

from cassandra import query as cql_query
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)


from elastman.capacity import params as params_mod  # noqa: E402
from elastman.capacity import registry as registry_mod  # noqa: E402
from elastman.cassandra import node as cassandra_node  # noqa: E402
from elastman.cassandra import nodetool as nodetool_mod  # noqa: E402
from elastman.common import config as em_config  # noqa: E402
from elastman.common import ports  # noqa: E402
from elastman import store as em_store  # noqa: E402
from elastman.store import connection  # noqa: E402
from elastman.store import model_state  # noqa: E402
from elastman.store import schema  # noqa: E402

GRAN = {'read_rate': 100, 'write_rate': 100, 'data_size': 512}
FLAVOR = 'm1.large'
WORKERS = ('monitor', 'trainer', 'predictor', 'actuator')


def emit(result: dict) -> None:
    result['load_avg'] = [round(x, 1) for x in os.getloadavg()]
    result['cpus'] = os.cpu_count()
    print(json.dumps(result), flush=True)


def rss_mb() -> dict:
    """Resident memory of this process now and at its peak (MB).

    The peak is the kernel's high-water mark of this process's own memory
    (``VmHWM``), not ``ru_maxrss``: a child started by ``subprocess``
    inherits in ``ru_maxrss`` the resident size its parent had when it was
    spawned.
    """
    status = {}
    with open('/proc/self/status') as f:
        for line in f:
            key, _, value = line.partition(':')
            status[key] = value
    return {'rss_mb': round(int(status['VmRSS'].split()[0]) / 1024.0, 1),
            'peak_rss_mb': round(int(status['VmHWM'].split()[0]) / 1024.0, 1)}


# -- the store ---------------------------------------------------------------

class StoreNode:
    """A private single-node store (or a running one, ``--store``)."""

    def __init__(self, args) -> None:
        self.conf = em_config.CONF
        self.conf([], project='elastman', default_config_files=[])
        self.node = None
        self.base = None
        if args.store:
            host, _, port = args.store.partition(':')
            self.address, self.port = host, int(port or 9042)
            self.jmx_port = args.store_jmx_port
            return
        self.base = tempfile.mkdtemp(prefix='elastman-bench-store-')
        self.address, self.port = args.address, 9042
        self.jmx_port = ports.free()
        self.node = cassandra_node.LocalNode(self.conf, cassandra_node.NodeSpec(
            name='bench-store', base_dir=self.base, address=self.address,
            jmx_port=self.jmx_port, cluster_name='elastman-bench',
            heap=args.heap))
        self.node.start()
        try:
            self.node.wait_for_cql()
        except Exception:
            self.close()
            raise

    def configure(self, keyspace: str):
        conf = self.conf
        conf.set_override('contact_points', [self.address], 'store')
        conf.set_override('port', self.port, 'store')
        conf.set_override('keyspace', keyspace, 'store')
        conf.set_override('request_timeout', 60.0, 'store')
        return conf

    def open(self, keyspace: str) -> em_store.Store:
        conf = self.configure(keyspace)
        session = connection.connect(conf)
        schema.sync(session, conf)
        connection.close(session)
        return em_store.Store.open(conf)

    def drop(self, keyspace: str) -> None:
        session = connection.connect(self.configure(keyspace))
        session.execute('DROP KEYSPACE IF EXISTS %s' % keyspace)
        connection.close(session)

    @contextlib.contextmanager
    def keyspace(self, keyspace: str) -> Iterator[em_store.Store]:
        """A fresh keyspace's store; closed and the keyspace dropped after."""
        store = self.open(keyspace)
        try:
            yield store
        finally:
            store.close()
            self.drop(keyspace)

    def keyspaces(self, prefix: str,
                  sizes: Iterable[int]) -> Iterator[tuple[int, em_store.Store]]:
        """``(size, store)`` for each size, in a fresh keyspace
        ``<prefix>_<size>`` dropped before the next one.
        """
        for n in sizes:
            with self.keyspace('%s_%d' % (prefix, n)) as store:
                yield n, store

    def config_file(self, path: str, keyspace: str, **groups) -> str:
        groups.setdefault('DEFAULT', {})
        groups['DEFAULT'].setdefault('transport_url', 'fake://')
        groups['DEFAULT'].setdefault('state_path', os.path.dirname(path))
        store = groups.setdefault('store', {})
        store.update({'contact_points': self.address, 'port': self.port,
                      'keyspace': keyspace, 'request_timeout': 60})
        with open(path, 'w') as f:
            for group, options in groups.items():
                f.write('[%s]\n' % group)
                for key, value in options.items():
                    f.write('%s = %s\n' % (key, value))
        return path

    def nodetool(self) -> nodetool_mod.Nodetool:
        return nodetool_mod.Nodetool(self.conf, '127.0.0.1', self.jmx_port)

    def close(self) -> None:
        if self.node is not None:
            self.node.destroy()
            self.node = None
        if self.base:
            shutil.rmtree(self.base, ignore_errors=True)


@contextlib.contextmanager
def store_node(args):
    node = StoreNode(args)
    try:
        yield node
    finally:
        node.close()


class Spy:
    """Counts what a store session sends: statements per table and verb,
    and the bytes bound to the writes of each table.
    """

    def __init__(self, session) -> None:
        self.session = session
        self.reset()
        self._orig = session.execute_async, session.execute
        session.execute_async = self._wrap(self._orig[0])
        session.execute = self._wrap(self._orig[1])

    def reset(self) -> None:
        self.statements: dict[str, int] = {}
        self.bytes: dict[str, int] = {}

    def _wrap(self, fn):
        def call(statement, *args, **kwargs):
            if isinstance(statement, cql_query.PreparedStatement):
                params = args[0] if args else kwargs.pop('parameters', None)
                statement = statement.bind(params)
                args = args[1:]
            text = getattr(getattr(statement, 'prepared_statement', None),
                           'query_string', None) or str(statement)
            verb = text.split()[0].upper()
            table = _table_of(text)
            key = '%s %s' % (verb, table)
            self.statements[key] = self.statements.get(key, 0) + 1
            if verb in ('INSERT', 'UPDATE'):
                values = getattr(statement, 'values', None) or []
                self.bytes[table] = self.bytes.get(table, 0) + sum(
                    len(v) for v in values if v is not None)
            return fn(statement, *args, **kwargs)
        return call

    def close(self) -> None:
        self.session.execute_async, self.session.execute = self._orig


def _table_of(cql: str) -> str:
    m = re.search(r'\b(?:FROM|INTO|UPDATE)\s+([\w.]+)', cql, re.I)
    return m.group(1).split('.')[-1] if m else '?'


# -- synthetic VMs -------------------------------------------------------------

def vm_capacity(share: float, size: float, factor: float) -> float:
    """Requests/s a VM serves at the SLO (a plane, as in bench_capacity)."""
    return factor * (1 - size / 16384) / (share / 8000 + (1 - share) / 12000)


def p99_of(load: float, share: float, size: float, factor: float,
           rng) -> float:
    u = load / vm_capacity(share, size, factor)
    base = 2000.0 if 0.9 * u >= 0.9999 else min(
        2000.0, 35.0 * 0.1 / (1 - 0.9 * u))
    return base * float(rng.lognormal(0, 0.25))


def fill_grid(grid, cells: int, samples: int, rng, factor: float,
              now: float) -> None:
    """``cells`` cells of one VM around its SLO boundary."""
    g = grid.granularity
    seen = set()
    while len(seen) < cells:
        share, size = rng.uniform(0.2, 0.9), rng.uniform(512, 4096)
        load = rng.uniform(0.1, 1.8) * vm_capacity(share, size, factor)
        point = (share * load, (1 - share) * load, size)
        key = grid.key_of(point)
        if key in seen:
            continue
        seen.add(key)
        centre = (np.asarray(key) + 0.5) * g
        for _ in range(samples):
            grid.add(centre, p99_of(float(centre[0] + centre[1]), share,
                                    size, factor, rng),
                     now - rng.uniform(0, 3600))


def trained_registry(cluster_id: str, nodes: list[str], cells: int,
                     now: float, seed: int = 0, workers: int = 2
                     ) -> registry_mod.ModelRegistry:
    """A registry whose VMs have their own cells and fitted models."""
    params = params_mod.ModelParams(granularity=GRAN)
    reg = registry_mod.ModelRegistry(cluster_id, params)
    rng = np.random.default_rng(seed)
    for node in nodes:
        reg.register_node(node, FLAVOR)
        fill_grid(reg.grids[node], cells, 3, rng, rng.uniform(0.8, 1.2), now)
    with concurrent.futures.ProcessPoolExecutor(workers) as pool:
        reg.refit(now, executor=pool)
    return reg


def node_ids(n: int) -> list[str]:
    return ['vm-%05d' % i for i in range(n)]


def sample_row(cluster_id, node: str, ts: datetime.datetime, rng,
               factor: float = 1.0) -> dict:
    share, size = rng.uniform(0.4, 0.8), rng.uniform(1024, 2048)
    load = rng.uniform(0.3, 0.7) * vm_capacity(share, size, factor)
    p99 = p99_of(load, share, size, factor, rng)
    return {'cluster_id': cluster_id, 'node_id': node, 'ts': ts, 'up': True,
            'interval_s': 60.0, 'reads_per_s': share * load,
            'writes_per_s': (1 - share) * load, 'read_bytes_mean': size,
            'write_bytes_mean': size, 'read_p50_ms': p99 / 4,
            'read_p95_ms': p99 / 2, 'read_p99_ms': p99, 'write_p50_ms': 1.0,
            'write_p95_ms': 2.0, 'write_p99_ms': 3.0,
            'extra': {'jmx': 1.0}}


def utc(ts: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc
                                           ).replace(tzinfo=None)


def parallel(fn, items, threads: int = 8) -> list:
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        return list(pool.map(fn, items))


def policy(size: int, **extra) -> dict:
    return dict({'min_size': 3, 'max_size': 2 * size, 'warmup_s': 0,
                 'slo_threshold_ms': 35.0}, **extra)


def make_cluster(store, name: str, size: int, now: float, rng,
                 pol: dict | None = None, with_nodes: bool = True) -> dict:
    """A cluster of ``size`` serving nodes, each with its newest samples
    (one per monitor round over the guard's window) and a forecast.
    """
    cluster = store.clusters.create('bench', name, spec={'size': size},
                                    policy=pol or policy(size))
    cid = cluster['id']
    nodes = node_ids(size)
    if with_nodes:
        parallel(lambda n: store.nodes.upsert(
            cid, n, flavor=FLAVOR, state='UN', address='10.%d.%d.%d' % (
                rng.integers(0, 255), rng.integers(0, 255),
                rng.integers(1, 255)), seed=n == nodes[0]), nodes)
    rows = [sample_row(cid, n, utc(now - 60 * k), rng)
            for n in nodes for k in range(3)]
    store.samples.add_many(rows)
    for metric, value in (('reads_per_s', 600.0), ('writes_per_s', 300.0)):
        store.forecasts.add(cid, metric, utc(now - 10), 60,
                            [value * size * (1 + 0.01 * i) for i in range(30)],
                            'arima_110', {'arima_110': 1.0, 'arima_010': 0.4})
    return cluster


# -- decide ---------------------------------------------------------------------

def cmd_decide(args) -> None:
    from elastman.actuator import decision as dec
    from elastman.actuator import planning
    from elastman.actuator import policy as policy_mod
    now = 1.8e9
    for n in args.nodes:
        nodes = node_ids(n)
        reg = trained_registry('bench', nodes, args.cells, now)
        rng = np.random.default_rng(1)
        pol = policy_mod.ScalingPolicy.for_cluster(
            {'policy': policy(n, max_size=2 * n)})
        state = dec.ClusterState(
            nodes=[dec.NodeInfo(node, FLAVOR, i == 0) for i, node in
                   enumerate(nodes)])
        current = {node: sample_row('bench', node, None, rng)
                   for node in nodes}
        peak = {'reads_per_s': sum(c['reads_per_s'] for c in current.values()),
                'writes_per_s': sum(c['writes_per_s']
                                    for c in current.values())}
        flavors = {node: FLAVOR for node in nodes}
        per_vm = planning.workload.split_workload(peak, current)
        estimates = planning.estimates_for(reg, per_vm, flavors)
        plan_ms, decide_ms, plan_cpu, decide_cpu = [], [], [], []
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            planning.plan(pol, state, current, peak, reg, now, flavors)
            plan_ms.append(1000 * (time.perf_counter() - t0))
            plan_cpu.append(1000 * (time.process_time() - c0))
            t0, c0 = time.perf_counter(), time.process_time()
            result = dec.decide(pol, state, estimates, now, {})
            decide_ms.append(1000 * (time.perf_counter() - t0))
            decide_cpu.append(1000 * (time.process_time() - c0))

        def med(xs):
            return round(float(np.median(xs)), 2)
        emit({'bench': 'decide', 'nodes': n,
              'decide_ms_median': med(decide_ms),
              'decide_ms_max': round(max(decide_ms), 2),
              'decide_cpu_ms_median': med(decide_cpu),
              'plan_ms_median': med(plan_ms), 'plan_ms_max': round(max(plan_ms), 2),
              'plan_cpu_ms_median': med(plan_cpu),
              'decision': result.kind, 'repeat': args.repeat})


# -- one control period -----------------------------------------------------------

def cmd_period(args) -> None:
    with store_node(args) as node:
        for n in args.nodes:
            keyspace = 'bench_period_%d' % n
            with node.keyspace(keyspace) as store:
                now = time.time()
                rng = np.random.default_rng(n)
                t0 = time.perf_counter()
                cluster = make_cluster(store, 'c%d' % n, n, now, rng)
                reg = trained_registry(str(cluster['id']), node_ids(n),
                                       args.cells, now)
                model_state.save_state(store, reg)
                setup_s = time.perf_counter() - t0
                store.close()
                path = node.config_file(os.path.join(node.base or tempfile.gettempdir(),
                                                     'period.conf'), keyspace)
                out = subprocess.run(
                    [sys.executable, __file__, '_period', '--config-file', path,
                     '--cluster', str(cluster['id']), '--repeat',
                     str(args.repeat)], capture_output=True, text=True,
                    timeout=1800)
                if out.returncode != 0:
                    sys.exit(out.stderr)
                result = json.loads(out.stdout.strip().splitlines()[-1])
                result.update({'bench': 'period', 'nodes': n,
                               'cells_per_vm': args.cells,
                               'setup_s': round(setup_s, 1)})
                emit(result)


def _timed(obj, name: str, times: dict) -> None:
    """Wrap ``obj.name`` so that its calls add to ``times[name]``."""
    fn = getattr(obj, name)

    def timed(*a, **kw):
        t0 = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            times[name] = times.get(name, 0.0) + time.perf_counter() - t0
    setattr(obj, name, timed)


def child_period(args) -> None:
    """The actuator's side of ``period``: a fresh process."""
    from elastman.actuator import controller as controller_mod
    from elastman.actuator import planning
    conf = em_config.parse_args(['bench', '--config-file', args.config_file])
    store = em_store.Store.open(conf)
    cluster = store.clusters.get(uuid.UUID(args.cluster))
    ctl = controller_mod.Controller(conf, store)
    times: dict[str, float] = {}
    _timed(model_state, 'load_capacity', times)
    _timed(store.samples, 'newest', times)
    _timed(store.nodes, 'list', times)
    _timed(planning, 'plan', times)
    _timed(store.actions, 'record_decision', times)
    _timed(ctl, '_forecast', times)
    _timed(ctl, '_joins', times)
    _timed(ctl, '_interference', times)
    periods, guards, cpu = [], [], []
    record_bytes = 0
    for i in range(args.repeat):
        if i == 1:
            times.clear()
        t0, c0 = time.perf_counter(), time.process_time()
        result = ctl.decide(cluster, record=True)
        periods.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        record_bytes = len(json.dumps(result.to_dict()))
        t0 = time.perf_counter()
        ctl.guard(cluster, record=False)
        guards.append(time.perf_counter() - t0)
    warm = max(1, args.repeat - 1)
    out = {'period_s_first': round(periods[0], 3),
           'period_s_warm': round(float(np.median(periods[1:] or periods)), 3),
           'period_cpu_s_warm': round(float(np.median(cpu[1:] or cpu)), 3),
           'guard_s_warm': round(float(np.median(guards[1:] or guards)), 3),
           'breakdown_s_warm': {k: round(v / warm, 3)
                                for k, v in sorted(times.items())},
           'decision': result.kind, 'vms_estimated': len(result.vms),
           'record_bytes': record_bytes}
    out.update(rss_mb())
    store.close()
    print(json.dumps(out))


# -- the trainer's writes -------------------------------------------------------

def cmd_trainer(args) -> None:
    from elastman.trainer import manager as trainer_manager
    with store_node(args) as node:
        for n, store in node.keyspaces('bench_trainer', args.nodes):
            conf = node.conf
            now = time.time()
            rng = np.random.default_rng(n)
            cluster = make_cluster(store, 'c%d' % n, n, now - 7200, rng)
            cid = cluster['id']
            nodes = node_ids(n)
            reg = trained_registry(str(cid), nodes, args.cells, now - 600)
            spy = Spy(store.session)
            t0 = time.perf_counter()
            model_state.save_state(store, reg)
            full = {'save_s': round(time.perf_counter() - t0, 2),
                    'bytes': sum(spy.bytes.values()),
                    'cells': spy.statements.get('INSERT capacity_cells', 0)}
            # a trainer takes the cluster over; its first refit reads cells
            trainer = trainer_manager.TrainerManager(conf, store=store)
            conf.set_override('update_period', 300, 'trainer')
            t_round = now
            spy.reset()
            t0 = time.perf_counter()
            trainer.train_cluster(cluster, now=t_round)
            first = {'round_s': round(time.perf_counter() - t0, 2),
                     'cells_read_vms': spy.statements.get(
                         'SELECT capacity_cells', 0),
                     'bytes_written': sum(spy.bytes.values())}
            rounds = []
            for i, fraction in enumerate(args.changed):
                t_round += 10
                changed = rng.choice(nodes, max(1, int(round(fraction * n))),
                                     replace=False)
                store.samples.add_many([sample_row(cid, v, utc(t_round - 1),
                                                   rng) for v in changed])
                spy.reset()
                t0 = time.perf_counter()
                trainer.train_cluster(cluster, now=t_round)   # no refit due
                rounds.append({
                    'changed_vms': len(changed),
                    'changed_fraction': fraction,
                    'round_s': round(time.perf_counter() - t0, 2),
                    'bytes_written': sum(spy.bytes.values()),
                    'bytes_by_table': dict(spy.bytes),
                    'cell_writes': spy.statements.get(
                        'INSERT capacity_cells', 0)})
            # a refit round after the last one
            spy.reset()
            t0 = time.perf_counter()
            updates = trainer.train_cluster(cluster, now=t_round + 400)
            refit = {'round_s': round(time.perf_counter() - t0, 2),
                     'models_changed': len(updates),
                     'cells_read_vms': spy.statements.get(
                         'SELECT capacity_cells', 0),
                     'bytes_written': sum(spy.bytes.values())}
            spy.close()
            conf.clear_override('update_period', 'trainer')
            emit({'bench': 'trainer', 'nodes': n, 'cells_per_vm': args.cells,
                  'full_save': full, 'takeover_round': first,
                  'rounds': rounds, 'refit_round': refit})


# -- the monitor -------------------------------------------------------------------

def cmd_monitor(args) -> None:
    from elastman.monitor import manager as monitor_manager
    with store_node(args) as node:
        for n, store in node.keyspaces('bench_monitor', args.nodes):
            conf = node.conf
            conf.set_override('max_parallel', args.max_parallel, 'monitor')
            conf.set_override('push_latency_to_hosts', False, 'monitor')
            clusters = max(1, n // args.cluster_size)
            for c in range(clusters):
                cluster = store.clusters.create('bench', 'm%d' % c, spec={})
                size = args.cluster_size if n >= args.cluster_size else n
                parallel(lambda i: store.nodes.upsert(
                    cluster['id'], 'n%04d' % i, flavor=FLAVOR, state='UN',
                    address=node.address, cql_port=node.port,
                    jmx_host='127.0.0.1', jmx_port=node.jmx_port),
                    range(size))
            mgr = monitor_manager.MonitorManager(conf, store=store)
            mgr.start()
            try:
                times, ups = [], []
                for i in range(args.rounds + 1):
                    t0 = time.perf_counter()
                    samples = mgr.sample_all()
                    if i:
                        times.append(time.perf_counter() - t0)
                        ups.append(sum(1 for s in samples if s['up']))
                    time.sleep(1.0)
            finally:
                mgr.stop()
            emit({'bench': 'monitor', 'nodes': n, 'clusters': clusters,
                  'max_parallel': args.max_parallel,
                  'round_s_median': round(float(np.median(times)), 3),
                  'round_s_max': round(max(times), 3),
                  'nodes_up_min': min(ups), 'rounds': args.rounds,
                  'source': conf.monitor.metrics_source})
            conf.clear_override('max_parallel', 'monitor')


# -- the store's size -----------------------------------------------------------------

def _space_used(node: StoreNode, keyspace: str) -> dict[str, int]:
    tool = node.nodetool()
    tool.run('flush', keyspace, timeout=600)
    out = tool.run('tablestats', keyspace, timeout=300)
    used, table = {}, None
    for line in out.splitlines():
        line = line.strip()
        if line.startswith('Table:'):
            table = line.split(':', 1)[1].strip()
        elif line.startswith('Space used (live):') and table:
            used[table] = int(line.split(':', 1)[1].strip().split()[0])
    return used


def cmd_store_size(args) -> None:
    with store_node(args) as node:
        keyspace = 'bench_size'
        with node.keyspace(keyspace) as store:
            rng = np.random.default_rng(0)
            interval = args.interval
            per_day = int(86400 / interval)
            clusters = max(1, args.nodes // args.cluster_size)
            start = time.time() - 86400
            t0 = time.perf_counter()
            for c in range(clusters):
                cid = uuid.uuid4()
                nodes = ['n%03d' % i for i in range(args.cluster_size)]
                for k in range(0, per_day, 60):
                    batch = [sample_row(cid, v, utc(start + (k + j) * interval),
                                        rng)
                             for j in range(min(60, per_day - k)) for v in nodes]
                    store.samples.add_many(batch)
                for k in range(per_day):
                    store.samples.add_cluster_workload(
                        cid, utc(start + k * interval), 1000.0, 500.0,
                        len(nodes), len(nodes))
            write_s = time.perf_counter() - t0
            used = _space_used(node, keyspace)
            n = clusters * args.cluster_size
            ttl_days = node.conf.store.sample_ttl / 86400.0
            samples = used.get('samples', 0)
            totals = used.get('cluster_workload', 0)
            emit({'bench': 'store-size', 'nodes': n, 'interval_s': interval,
                  'samples_per_node_day': per_day, 'write_s': round(write_s, 1),
                  'samples_bytes_per_node_day': round(samples / n),
                  'cluster_workload_bytes_per_node_day': round(totals / n),
                  'sample_ttl_days': ttl_days,
                  'samples_bytes_per_node_at_ttl': round(samples / n * ttl_days),
                  'space_used_by_table': used})


# -- the predictor's round against the store -----------------------------------

def cmd_predictor(args) -> None:
    """A predictor round over C clusters whose workload history fills the
    window: a predictor that keeps the window between rounds against one
    that reads it whole every round (its kept rows dropped before each);
    then a restarted predictor's first round against the steady rounds of
    one that stores its state.
    """
    from elastman.predictor import manager as predictor_mod
    with store_node(args) as node:
        keyspace = 'bench_predictor'
        with node.keyspace(keyspace) as store:
            now = time.time()
            t0 = time.perf_counter()
            ids = _setup_clusters(args, store, args.clusters, now)
            setup_s = time.perf_counter() - t0
            work = tempfile.mkdtemp(prefix='bench-predictor-')
            try:
                path = node.config_file(os.path.join(work, 'p.conf'),
                                        keyspace, DEFAULT={'host': 'bench'})
                conf = em_config.parse_args(['bench', '--config-file', path])
            finally:
                shutil.rmtree(work, ignore_errors=True)
            # neither stores its series state, so neither takes up the
            # other's: both do the same forecasting, only their reads differ
            kept = predictor_mod.PredictorManager(conf, store=store)
            whole = predictor_mod.PredictorManager(conf, store=store)
            for m in (kept, whole):
                m._save = lambda scope, key, doc, end: None
            clusters = store.clusters.all()
            rng = np.random.default_rng(0)
            rounds: dict[str, list] = {'kept': [], 'whole': []}
            for k in range(1, args.rounds + 2):
                t = now + 60 * k
                _add_workload_row(store, ids, t, rng, args.nodes)
                for name, m in (('kept', kept), ('whole', whole)):
                    if name == 'whole':
                        m._windows.clear()
                    c0, w0 = time.process_time(), time.perf_counter()
                    for cluster in clusters:
                        m.predict_cluster(cluster, t + 1)
                    if k > 1:       # the first round reads it all in both
                        rounds[name].append(
                            (1000 * (time.process_time() - c0) / len(ids),
                             1000 * (time.perf_counter() - w0) / len(ids)))
            t = now + 60 * (args.rounds + 1)
            rounds.update(_predictor_restart(args, conf, store, clusters,
                                             ids, t, rng))
            out = {'bench': 'predictor', 'clusters': len(ids),
                   'history_hours': args.history_hours,
                   'rows_per_cluster': int(args.history_hours * 60),
                   'setup_s': round(setup_s, 1), 'rounds': args.rounds}
            for name, values in rounds.items():
                cpu, wall = np.median(np.array(values), axis=0)
                out['%s_cpu_ms_per_cluster' % name] = round(float(cpu), 1)
                out['%s_wall_ms_per_cluster' % name] = round(float(wall), 1)
            for unit in ('cpu', 'wall'):
                restarted = out['restarted_%s_ms_per_cluster' % unit]
                steady = out['steady_%s_ms_per_cluster' % unit]
                out['restart_over_steady_%s' % unit] = round(
                    restarted / steady, 2)
            emit(out)


def _add_workload_row(store, ids: list, t: float, rng, nodes: int) -> None:
    """One new monitor round of each cluster's workload at ``t``."""
    for cid in ids:
        store.samples.add_cluster_workload(
            cid, utc(t), 1000 + rng.normal(0, 20), 400 + rng.normal(0, 10),
            nodes, nodes)


def _predictor_restart(args, conf, store, clusters: list, ids: list,
                       start: float, rng) -> dict[str, list]:
    """A predictor that stores its state, as the service's does: its
    steady rounds (its first, the first estimations, left out), then a
    new predictor's first round on the same store, as after a restart:
    it reads each cluster's whole window and takes up the stored states.
    """
    from elastman.predictor import manager as predictor_mod

    def one_round(manager, t: float) -> tuple[float, float]:
        _add_workload_row(store, ids, t, rng, args.nodes)
        c0, w0 = time.process_time(), time.perf_counter()
        for cluster in clusters:
            manager.predict_cluster(cluster, t + 1)
        return (1000 * (time.process_time() - c0) / len(ids),
                1000 * (time.perf_counter() - w0) / len(ids))

    first = predictor_mod.PredictorManager(conf, store=store)
    steady = [one_round(first, start + 60 * k)
              for k in range(args.rounds + 1)][1:]
    restarted = predictor_mod.PredictorManager(conf, store=store)
    cold = one_round(restarted, start + 60 * (args.rounds + 1))
    return {'steady': steady, 'restarted': [cold]}


# -- many clusters, two copies of each worker -----------------------------------

def cmd_clusters(args) -> None:
    with store_node(args) as node:
        for c in args.clusters:
            _clusters_run(args, node, c)


def _setup_clusters(args, store, count: int, now: float) -> list:
    rng = np.random.default_rng(count)
    pol = policy(args.nodes, min_size=args.nodes, max_size=args.nodes,
                 dry_run=True)

    def one(i):
        r = np.random.default_rng(i)
        cluster = store.clusters.create('bench', 'k%04d' % i,
                                        spec={'size': args.nodes}, policy=pol)
        for v in node_ids(args.nodes):
            store.nodes.upsert(cluster['id'], v, flavor=FLAVOR, state='UN',
                               address='10.%d.%d.%d' % (i // 250, i % 250,
                                                        r.integers(1, 255)))
        if args.history_hours:
            points = int(args.history_hours * 3600 / 60)
            for k in range(points):
                store.samples.add_cluster_workload(
                    cluster['id'], utc(now - 60 * (points - k)),
                    1000.0 * (1 + 0.3 * np.sin(k / 240.0)) + r.normal(0, 20),
                    400.0 * (1 + 0.3 * np.sin(k / 240.0)) + r.normal(0, 10),
                    args.nodes, args.nodes)
        return cluster['id']
    del rng
    return parallel(one, range(count), threads=16)


def _leases(store) -> dict[str, str]:
    return {r['name']: r['holder'] for r in store.session.execute(
        'SELECT name, holder FROM %s.leases' % store.leases._keyspace)}


def _clusters_run(args, node: StoreNode, count: int) -> None:
    keyspace = 'bench_clusters_%d' % count
    with node.keyspace(keyspace) as store:
        now = time.time()
        t0 = time.perf_counter()
        _setup_clusters(args, store, count, now)
        setup_s = time.perf_counter() - t0
        work = tempfile.mkdtemp(prefix='elastman-bench-clusters-')
        procs = {}
        try:
            for worker in WORKERS:
                for copy in ('a', 'b'):
                    host = '%s-%s' % (worker, copy)
                    path = node.config_file(os.path.join(work, host + '.conf'),
                                            keyspace,
                                            DEFAULT={'host': host},
                                            monitor={'push_latency_to_hosts':
                                                     'false'})
                    stats = os.path.join(work, host + '.jsonl')
                    procs[host] = (subprocess.Popen(
                        [sys.executable, __file__, '_worker', '--name', worker,
                         '--config-file', path, '--stats', stats],
                        stdout=subprocess.DEVNULL,
                        stderr=open(os.path.join(work, host + '.log'), 'w')),
                        stats)
            started = time.time()
            cpu_start = _cpu_seconds(node, procs)
            time.sleep(args.minutes * 60)
            before = _leases(store)
            cpu_used = {k: round(v - cpu_start.get(k, 0.0), 1)
                        for k, v in _cpu_seconds(node, procs).items()}
            killed_at = time.time()
            for worker in WORKERS:
                procs['%s-b' % worker][0].send_signal(signal.SIGKILL)
            takeover = _watch_takeover(store, before, killed_at,
                                       args.takeover_timeout)
            time.sleep(args.after_minutes * 60)
            stopped = time.time()
        finally:
            for proc, _ in procs.values():
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
            for proc, _ in procs.values():
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    proc.kill()
        rounds = {host: _read_stats(stats) for host, (_, stats) in procs.items()}
        summary = {}
        for worker in WORKERS:
            entry = {}
            for label, hosts, lo, hi in (
                    ('two_copies', ('%s-a' % worker, '%s-b' % worker), started,
                     killed_at),
                    ('one_copy', ('%s-a' % worker,), killed_at, stopped)):
                rs = [r for h in hosts for r in rounds[h]
                      if lo <= r['start'] < hi]
                # a round's first run after start includes warming caches
                if not rs:
                    continue
                period = rs[0]['period']
                steady = [r for r in rs if r['n'] > 1] or rs
                entry[label] = {
                    'period_s': period, 'rounds': len(rs),
                    'max_s': round(max(r['duration'] for r in steady), 2),
                    'median_s': round(float(np.median(
                        [r['duration'] for r in steady])), 2),
                    'first_s': round(max(r['duration'] for r in rs
                                         if r['n'] == 1), 2)
                    if any(r['n'] == 1 for r in rs) else None,
                    'over_period': sum(1 for r in steady
                                       if r['duration'] > period),
                    # rounds that left clusters for the next one (budget spent)
                    'deferring_rounds': sum(1 for r in rs if r.get('deferred')),
                    'caught_up_after_s': _caught_up(
                        [[r for r in rounds[h] if lo <= r['start'] < hi]
                         for h in hosts], lo),
                    'clusters_per_copy': sorted({r.get('held') for r in rs
                                                 if r.get('held') is not None})[-2:]}
            entry['takeover'] = takeover.get(worker)
            summary[worker] = entry
        emit({'bench': 'clusters', 'clusters': count, 'nodes_per_cluster':
              args.nodes, 'setup_s': round(setup_s, 1), 'minutes': args.minutes,
              'history_hours': args.history_hours, 'workers': summary,
              # CPU seconds of each process over the minutes with two copies
              'cpu_s': cpu_used, 'cpu_window_s': round(killed_at - started, 1),
              'logs': work})


_TICKS = os.sysconf('SC_CLK_TCK')


def _cpu_seconds(node: StoreNode, procs: dict) -> dict[str, float]:
    """User + system CPU seconds so far of each worker copy and of the
    store node (its JVM), by name.
    """
    pids = {host: proc.pid for host, (proc, _) in procs.items()}
    store_pid = node.node.pid() if node.node is not None else None
    if store_pid:
        pids['store'] = store_pid
    used = {}
    for name, pid in pids.items():
        try:
            with open('/proc/%d/stat' % pid) as f:
                # the fields after the command's closing parenthesis; utime
                # and stime are the stat file's 14th and 15th
                fields = f.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        used[name] = (int(fields[11]) + int(fields[12])) / _TICKS
    return used


def _watch_takeover(store, before: dict[str, str], killed_at: float,
                    timeout: float) -> dict:
    """Poll the leases until each killed copy's clusters are held by the
    other copy: per worker, the killed copy's cluster count, the seconds
    until the last one moved, and the lease TTL.
    """
    pending = {}
    for name, holder in before.items():
        worker = name.split('/', 1)[0]
        if holder == '%s-b' % worker:
            pending.setdefault(worker, set()).add(name)
    counts = {w: len(names) for w, names in pending.items()}
    moved: dict[str, float] = {}
    while pending and time.time() - killed_at < timeout:
        time.sleep(1.0)
        leases = _leases(store)
        for worker in list(pending):
            pending[worker] = {n for n in pending[worker]
                               if leases.get(n) != '%s-a' % worker}
            if not pending[worker]:
                moved[worker] = time.time() - killed_at
                del pending[worker]
    return {w: {'clusters': counts[w],
                'moved_after_s': round(moved[w], 1) if w in moved else None,
                'not_moved': len(pending.get(w, ()))}
            for w in counts}


def _caught_up(per_copy: list[list[dict]], since: float) -> float | None:
    """Seconds from ``since`` to the end of each copy's first round that
    left no cluster for the next one after its last round that did (the
    latest over the copies; 0 if no round left any; None if a copy's last
    round still did).
    """
    ends = [0.0]
    for rounds in per_copy:
        rounds = sorted(rounds, key=lambda r: r['start'])
        late = [i for i, r in enumerate(rounds) if r.get('deferred')]
        if not late:
            continue
        if late[-1] + 1 >= len(rounds):
            return None
        after = rounds[late[-1] + 1]
        ends.append(after['start'] + after['duration'] - since)
    return round(max(ends), 1)


def _read_stats(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def child_worker(args) -> None:
    """One copy of a worker, its periodic rounds timed into ``--stats``."""
    from elastman.cmd import workers
    conf = em_config.parse_args(['bench', '--config-file', args.config_file])
    if args.name == 'monitor':
        _synthetic_monitor()
    launcher, store = workers.build_launcher(conf, (args.name,))
    manager = launcher.services[0].manager
    tasks = manager.periodic_tasks()
    stats = open(args.stats, 'a', buffering=1)
    counts: dict[str, int] = {}

    def timed(func, period):
        def run():
            start = time.time()
            try:
                func()
            finally:
                name = func.__name__
                counts[name] = counts.get(name, 0) + 1
                share = getattr(manager, 'share', None)
                stats.write(json.dumps({
                    'task': name, 'n': counts[name], 'start': start,
                    'duration': time.time() - start, 'period': period,
                    'held': len(share.held) if share else None,
                    **getattr(manager, 'last_round', {})}) + '\n')
        run.__name__ = func.__name__
        return run
    manager.periodic_tasks = lambda: [(timed(f, p), p) for f, p in tasks]
    try:
        launcher.run()
    finally:
        store.close()


def _synthetic_monitor() -> None:
    """Node reads from a model of each node instead of JMX and CQL: the
    monitor's scheduling, leases and store writes are the real ones.
    """
    from elastman.monitor import manager as monitor_manager
    from elastman.monitor import readings
    state: dict[str, list] = {}

    def read(self, target):
        now = time.monotonic()
        st = state.get(target.address)
        rnd = random.Random(target.address)
        if st is None:
            st = state[target.address] = [
                now, rnd.randint(0, 10 ** 6), 0, np.zeros(90, np.int64),
                np.zeros(90, np.int64), np.zeros(90, np.int64),
                rnd.uniform(2000, 6000), 0.5]
        last, reads, writes, lat, wlat, size, capacity, u = st
        dt = max(1e-3, now - last)
        u = min(1.6, max(0.1, u + random.uniform(-0.15, 0.15)))
        r = int(capacity * u * 0.7 * dt)
        w = int(capacity * u * 0.3 * dt)
        p99_ms = 2000.0 if u >= 1.11 else min(2000.0, 3.5 / (1 - 0.9 * u))
        bucket = min(89, int(np.log(max(1.0, p99_ms * 1000)) / np.log(1.2)))
        lat[max(0, bucket - 8)] += int(r * 0.985)
        lat[bucket] += r - int(r * 0.985)
        wlat[20] += w
        size[int(np.log(1500) / np.log(1.2))] += r + w
        st[:] = [now, reads + r, writes + w, lat, wlat, size, capacity, u]
        return readings.Reading(mono=now, source='jmx', reads=reads + r,
                                writes=writes + w,
                                read_latency=lat.tolist(),
                                write_latency=wlat.tolist(),
                                read_size=size.tolist(),
                                write_size=size.tolist())
    monitor_manager.MonitorManager._read_node = read


# -- growth plot -------------------------------------------------------------------

def growth_series(results: list[dict]) -> dict[str, dict[int, float]]:
    """Each cost by size (nodes or clusters) from the subcommands' JSON
    lines: {label: {size: value}}.
    """
    series: dict[str, dict[int, float]] = {}

    def put(label, size, value):
        if value is not None and value > 0:
            series.setdefault(label, {})[int(size)] = float(value)
    for r in results:
        kind = r.get('bench')
        if kind == 'period':
            put('control period, wall', r['nodes'], r['period_s_warm'])
            put('control period, CPU', r['nodes'], r['period_cpu_s_warm'])
            put('actuator peak RSS', r['nodes'], r['peak_rss_mb'])
        elif kind == 'decide':
            put('decide(), CPU', r['nodes'], r['decide_cpu_ms_median'])
            put('estimates + decide, CPU', r['nodes'],
                r['plan_cpu_ms_median'])
        elif kind == 'trainer':
            put('trainer full save, bytes', r['nodes'],
                r['full_save']['bytes'])
            for rnd in r['rounds']:
                if rnd['changed_fraction'] == 0.01:
                    put('trainer round, 1% of VMs, bytes', r['nodes'],
                        rnd['bytes_written'])
            put('trainer refit round, wall', r['nodes'],
                r['refit_round']['round_s'])
        elif kind == 'monitor':
            put('monitor round (nodes), wall', r['nodes'],
                r['round_s_median'])
        elif kind == 'clusters':
            for worker, entry in r['workers'].items():
                two = entry.get('two_copies')
                if two and two['rounds'] > 1:     # a steady round seen
                    put('%s round (clusters), wall' % worker, r['clusters'],
                        two['median_s'])
    return series


def cmd_plot(args) -> None:
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt
    results = []
    for path in args.results:
        with open(path) as f:
            results += [json.loads(line) for line in f
                        if line.strip().startswith('{')]
    series = {}
    for label, points in growth_series(results).items():
        points = {k: v for k, v in points.items() if k >= args.min_size}
        if len(points) > 1:
            series[label] = points
    fig, ax = plt.subplots(figsize=(7.5, 5))
    top = 1.0
    colours = plt.get_cmap('tab20').colors
    for i, (label, points) in enumerate(sorted(series.items())):
        sizes = sorted(points)
        base = points[sizes[0]]
        xs = [s / sizes[0] for s in sizes]
        ys = [points[s] / base for s in sizes]
        top = max(top, max(xs))
        # the cluster-count series dashed, so that no two lines look alike
        ax.plot(xs, ys, marker='os^Dv<>'[i % 7], color=colours[i % 20],
                linestyle='--' if '(clusters)' in label else '-',
                label=label)
    ax.plot([1, top], [1, top], color='black', linestyle='--',
            label='linear (cost x size)')
    ax.set_xscale('log')
    ax.set_yscale('log')
    ax.set_xlabel('size relative to the smallest (nodes or clusters)')
    ax.set_ylabel('cost relative to its value at the smallest size')
    ax.set_title('How each cost grows with nodes and clusters')
    ax.grid(True, which='both', alpha=0.3)
    ax.legend(fontsize=7, loc='upper left')
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    for label, points in sorted(series.items()):
        print('%-40s %s' % (label, ', '.join(
            '%d: %.4g' % (k, v) for k, v in sorted(points.items()))))


# -- command line -------------------------------------------------------------------

def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--address', default='127.0.78.200',
                        help='loopback address of the private store node')
    parser.add_argument('--heap', default='1G', help='its heap')
    parser.add_argument('--store', help='HOST[:PORT] of a running store '
                                        'node instead of a private one')
    parser.add_argument('--store-jmx-port', type=int, default=7199)
    sub = parser.add_subparsers(dest='command', required=True)
    p = sub.add_parser('decide')
    p.add_argument('--nodes', type=int, nargs='+', default=[100, 1000])
    p.add_argument('--cells', type=int, default=60)
    p.add_argument('--repeat', type=int, default=20)
    p.set_defaults(func=cmd_decide)
    p = sub.add_parser('period')
    p.add_argument('--nodes', type=int, nargs='+', default=[100, 1000])
    p.add_argument('--cells', type=int, default=60)
    p.add_argument('--repeat', type=int, default=4)
    p.set_defaults(func=cmd_period)
    p = sub.add_parser('trainer')
    p.add_argument('--nodes', type=int, nargs='+', default=[100, 1000])
    p.add_argument('--cells', type=int, default=60)
    p.add_argument('--changed', type=float, nargs='+',
                   default=[0.01, 0.1, 1.0])
    p.set_defaults(func=cmd_trainer)
    p = sub.add_parser('monitor')
    p.add_argument('--nodes', type=int, nargs='+', default=[10, 100, 1000])
    p.add_argument('--cluster-size', type=int, default=10)
    p.add_argument('--max-parallel', type=int, default=16)
    p.add_argument('--rounds', type=int, default=3)
    p.set_defaults(func=cmd_monitor)
    p = sub.add_parser('clusters')
    p.add_argument('--clusters', type=int, nargs='+', default=[100, 1000])
    p.add_argument('--nodes', type=int, default=10)
    p.add_argument('--minutes', type=float, default=8.0,
                   help='minutes with two copies of each worker')
    p.add_argument('--after-minutes', type=float, default=2.0,
                   help='minutes with one copy left after the kill')
    p.add_argument('--takeover-timeout', type=float, default=400.0)
    p.add_argument('--history-hours', type=float, default=6.0,
                   help='hours of cluster workload history per cluster')
    p.set_defaults(func=cmd_clusters)
    p = sub.add_parser('predictor')
    p.add_argument('--clusters', type=int, default=40)
    p.add_argument('--nodes', type=int, default=10)
    p.add_argument('--history-hours', type=float, default=67.0,
                   help='hours of cluster workload history per cluster '
                        '(67: the default window of 4,032 periods)')
    p.add_argument('--rounds', type=int, default=7)
    p.set_defaults(func=cmd_predictor)
    p = sub.add_parser('store-size')
    p.add_argument('--nodes', type=int, default=100)
    p.add_argument('--cluster-size', type=int, default=10)
    p.add_argument('--interval', type=float, default=60.0)
    p.set_defaults(func=cmd_store_size)
    p = sub.add_parser('plot', help='growth of each cost from JSON lines')
    p.add_argument('results', nargs='+', help='files of JSON lines')
    p.add_argument('--out', required=True, help='PNG to write')
    p.add_argument('--min-size', type=int, default=100,
                   help='leave out smaller sizes')
    p.set_defaults(func=cmd_plot)
    p = sub.add_parser('_period')
    p.add_argument('--config-file', required=True)
    p.add_argument('--cluster', required=True)
    p.add_argument('--repeat', type=int, default=4)
    p.set_defaults(func=child_period)
    p = sub.add_parser('_worker')
    p.add_argument('--name', required=True, choices=WORKERS)
    p.add_argument('--config-file', required=True)
    p.add_argument('--stats', required=True)
    p.set_defaults(func=child_worker)
    args = parser.parse_args(argv)
    args.func(args)


if __name__ == '__main__':
    main()
