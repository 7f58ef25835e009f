"""The live evaluation: elastman scaling a real local Cassandra cluster under
a YCSB workload schedule (seed 000, Ch. 3.4, Figs. 3.14/3.15).

``elastman-manage evaluate SCENARIO.yaml`` starts a store node and
elastman-all (a subprocess with a generated configuration), creates a managed
cluster of local Cassandra nodes, loads it with YCSB, runs the scenario's
phases while showing progress, and writes into the output directory:

* ``minutes.csv``   per minute: target and measured workload, nodes, client
  and server p99 read latency, SLO violation, actions;
* ``decisions.csv`` every control period's decision with the forecast
  (forecaster, value, age) and the model versions it used;
* ``actions.csv``   the action journal; ``phases.csv``/``.json`` per-phase
  YCSB results; ``summary.json``; ``figure.png`` (nodes and p99 against
  time with the SLO line).

Everything it started (YCSB, elastman-all, the cluster's nodes, the store
node) is stopped on the way out, also on Ctrl-C.
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import datetime
import json
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from typing import Any, Mapping

from oslo_config import cfg
from oslo_log import log as logging
import yaml

from elastman.evaluation import ycsb

LOG = logging.getLogger(__name__)

MINUTE = 60.0
MAX_RESTARTS = 3
DEFAULT_ELASTMAN = {
    'monitor': {'sampling_interval': 10},
    'trainer': {'update_period': 60},
    'predictor': {'period': 30, 'horizon': 10},
    'actuator': {'control_period': 60, 'join_timeout': 420,
                 'forecast_max_age': 300},
}
DEFAULT_POLICY = {'slo_metric': 'read_p99_ms', 'min_size': 3, 'max_size': 6,
                  'alpha': 1.0, 'beta': 0.5, 'control_period_s': 60,
                  'cooldown_s': 120, 'warmup_s': 600, 'dry_run': False}
PHASE_KEYS = {'name', 'minutes', 'seconds', 'target', 'steps', 'read',
              'update', 'insert', 'fieldcount', 'fieldlength', 'threads',
              'distribution'}
MINUTE_FIELDS = ('minute', 'phase', 'target_ops', 'client_ops',
                 'client_read_p99_ms', 'client_read_p99_max_ms',
                 'server_reads_per_s', 'server_writes_per_s',
                 'server_read_p99_ms', 'server_read_p99_max_ms', 'nodes',
                 'servers', 'violation', 'actions')
DECISION_FIELDS = ('time', 'minute', 'kind', 'count', 'flavor',
                   'forecast_used', 'reads_forecast', 'reads_forecaster',
                   'writes_forecast', 'writes_forecaster', 'forecast_age_s',
                   'vm_models', 'flavor_models', 'bounds', 'reason')


class ScenarioError(ValueError):
    """A scenario file is invalid."""


# -- scenarios ----------------------------------------------------------------

@dataclasses.dataclass
class Scenario:
    """A live evaluation: cluster, SLO, elastman settings and YCSB phases."""

    name: str
    phases: list[ycsb.Phase]
    description: str = ''
    slo_ms: float = 35.0
    size: int = 3
    flavor: str = 'eval'
    flavor_spec: str = 'cpu=0.5,heap=384M'
    network: str = '127.0.80.0/25'
    jmx_port_base: int = 17600
    store_address: str = '127.0.80.200'
    policy: dict[str, Any] = dataclasses.field(default_factory=dict)
    elastman: dict[str, dict[str, Any]] = dataclasses.field(
        default_factory=dict)
    recordcount: int = 10000
    consistency: str = 'ONE'
    replication_factor: int = 3
    load: ycsb.Phase | None = None

    @property
    def duration_s(self) -> float:
        return sum(p.duration_s for p in self.phases)

    def scaling_policy(self) -> dict[str, Any]:
        policy = dict(DEFAULT_POLICY, slo_threshold_ms=self.slo_ms,
                      flavors=[self.flavor])
        policy.update(self.policy)
        return policy

    def elastman_conf(self) -> dict[str, dict[str, Any]]:
        groups = {g: dict(v) for g, v in DEFAULT_ELASTMAN.items()}
        groups['trainer']['slo_threshold_ms'] = self.slo_ms
        for group, values in self.elastman.items():
            groups.setdefault(group, {}).update(values)
        return groups


def _expand(raw: Mapping[str, Any], defaults: Mapping[str, Any],
            index: int) -> list[ycsb.Phase]:
    """One YAML phase as one or more Phases (a ramp becomes steps)."""
    unknown = set(raw) - PHASE_KEYS
    if unknown:
        raise ScenarioError('phase %d: unknown keys %s'
                            % (index + 1, ', '.join(sorted(unknown))))
    item = dict(defaults)
    item.update(raw)
    name = str(item.get('name') or 'phase%d' % (index + 1))
    if 'minutes' in item:
        duration = float(item['minutes']) * MINUTE
    elif 'seconds' in item:
        duration = float(item['seconds'])
    else:
        raise ScenarioError('phase %s: needs minutes or seconds' % name)
    target = item.get('target')
    if isinstance(target, (list, tuple)):
        if len(target) != 2:
            raise ScenarioError('phase %s: a ramp target is [from, to]' % name)
        start, end = (float(t) for t in target)
        steps = int(item.get('steps') or max(1, round(duration / MINUTE)))
    elif isinstance(target, (int, float)) and not isinstance(target, bool):
        start = end = float(target)
        steps = 1
    else:
        raise ScenarioError('phase %s: target must be a number or [from, to]'
                            % name)
    read = float(item.get('read', 0.95))
    update = float(item.get('update', max(0.0, 1.0 - read)))
    phases = []
    for i in range(steps):
        frac = i / (steps - 1) if steps > 1 else 0.0
        try:
            phases.append(ycsb.Phase(
                name if steps == 1 else '%s.%d' % (name, i + 1),
                duration_s=duration / steps,
                target=round(start + (end - start) * frac),
                read_proportion=read, update_proportion=update,
                insert_proportion=float(item.get('insert', 0.0)),
                fieldcount=int(item.get('fieldcount', 10)),
                fieldlength=int(item.get('fieldlength', 100)),
                threads=int(item.get('threads', 16)),
                distribution=str(item.get('distribution', 'uniform'))))
        except (TypeError, ValueError) as exc:
            raise ScenarioError(str(exc))
    return phases


def parse_scenario(data: Mapping[str, Any]) -> Scenario:
    """Build a Scenario from its YAML document (see scenarios/*.yaml)."""
    if not isinstance(data, Mapping):
        raise ScenarioError('a scenario is a mapping')
    known = {'name', 'description', 'slo_ms', 'cluster', 'policy',
             'elastman', 'ycsb', 'phases', 'defaults'}
    unknown = set(data) - known
    if unknown:
        raise ScenarioError('unknown keys: %s' % ', '.join(sorted(unknown)))
    defaults = dict(data.get('defaults') or {})
    raw_phases = data.get('phases')
    if not raw_phases or not isinstance(raw_phases, list):
        raise ScenarioError('phases: a non-empty list is required')
    phases = []
    for i, raw in enumerate(raw_phases):
        if not isinstance(raw, Mapping):
            raise ScenarioError('phase %d is not a mapping' % (i + 1))
        phases.extend(_expand(raw, defaults, i))
    names = [p.name for p in phases]
    if len(set(names)) != len(names):
        raise ScenarioError('phase names must be unique')
    cluster = dict(data.get('cluster') or {})
    bad = set(cluster) - {'size', 'flavor', 'flavor_spec', 'network',
                          'jmx_port_base', 'store_address',
                          'replication_factor'}
    if bad:
        raise ScenarioError('cluster: unknown keys %s'
                            % ', '.join(sorted(bad)))
    work = dict(data.get('ycsb') or {})
    bad = set(work) - {'recordcount', 'consistency', 'load'}
    if bad:
        raise ScenarioError('ycsb: unknown keys %s' % ', '.join(sorted(bad)))
    load_raw = dict(work.get('load') or {})
    load_raw.setdefault('seconds', 3600)
    load_raw.setdefault('target', 0)
    load_raw.setdefault('name', 'load')
    load_raw.setdefault('read', 0.0)
    load_raw.setdefault('update', 0.0)
    load_raw.setdefault('insert', 1.0)
    load = _expand(load_raw, {k: v for k, v in defaults.items()
                              if k in ('fieldcount', 'fieldlength',
                                       'threads')}, -1)[0]
    try:
        scenario = Scenario(
            name=str(data.get('name') or 'scenario'), phases=phases,
            description=str(data.get('description') or '').strip(),
            slo_ms=float(data.get('slo_ms', 35.0)),
            policy=dict(data.get('policy') or {}),
            elastman={str(g): dict(v) for g, v in
                      (data.get('elastman') or {}).items()},
            recordcount=int(work.get('recordcount', 10000)),
            consistency=str(work.get('consistency', 'ONE')).upper(),
            load=load, **cluster)
    except (TypeError, ValueError) as exc:
        raise ScenarioError(str(exc))
    if scenario.slo_ms <= 0 or scenario.size < 1 or scenario.recordcount < 1:
        raise ScenarioError('slo_ms, cluster size and recordcount must be '
                            'positive')
    policy = scenario.scaling_policy()
    if not policy['min_size'] <= scenario.size <= policy['max_size']:
        raise ScenarioError('cluster size %d is outside the policy bounds '
                            '[%d, %d]' % (scenario.size, policy['min_size'],
                                          policy['max_size']))
    return scenario


def load_scenario(path: str) -> Scenario:
    try:
        with open(path) as f:
            data = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as exc:
        raise ScenarioError('%s: %s' % (path, exc))
    return parse_scenario(data)


def schedule(scenario: Scenario) -> list[tuple[float, float, ycsb.Phase]]:
    """(start offset, end offset, phase) of every phase, in seconds."""
    out, t = [], 0.0
    for p in scenario.phases:
        out.append((t, t + p.duration_s, p))
        t += p.duration_s
    return out


# -- processes ----------------------------------------------------------------

def _free_port(host: str = '127.0.0.1') -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def write_config(path: str, groups: Mapping[str, Mapping[str, Any]]) -> str:
    with open(path, 'w') as f:
        for group, options in groups.items():
            f.write('[%s]\n' % group)
            for key, value in options.items():
                if isinstance(value, (list, tuple)):
                    value = ','.join(map(str, value))
                elif isinstance(value, bool):
                    value = str(value).lower()
                f.write('%s = %s\n' % (key, value))
            f.write('\n')
    return path


def make_conf(path: str) -> cfg.ConfigOpts:
    """A private ConfigOpts with every elastman option, read from ``path``
    (the harness's own view of the store and the local cloud)."""
    import importlib
    import pkgutil

    import elastman.conf

    conf = cfg.ConfigOpts()
    for info in pkgutil.iter_modules(elastman.conf.__path__):
        module = importlib.import_module('elastman.conf.' + info.name)
        if hasattr(module, 'register_opts'):
            module.register_opts(conf)
    conf(['--config-file', path], project='elastman',
         default_config_files=[])
    return conf


class Harness:
    """Starts and stops what a live run needs; writes its records."""

    def __init__(self, scenario: Scenario, out_dir: str,
                 keep: bool = False, echo=print) -> None:
        self.scenario = scenario
        self.out = os.path.abspath(out_dir)
        self.keep = keep
        self.echo = echo
        self.state = os.path.join(self.out, 'state')
        self.config_path = os.path.join(self.out, 'elastman.conf')
        self.conf: cfg.ConfigOpts | None = None
        self.store_node = None
        self.store = None
        self.elastman: subprocess.Popen | None = None
        self.cluster_id: uuid.UUID | None = None
        self.runner: ycsb.Runner | None = None
        self.lock = threading.Lock()
        self.intervals: list[tuple[float, dict]] = []
        self.node_polls: list[tuple[float, int, int]] = []
        self.node_ids: set[str] = set()
        self.phase_windows: list[tuple[float, float, ycsb.Phase]] = []
        self.results: list[ycsb.PhaseResult] = []
        self.t0: float | None = None
        self.restarts = 0

    # -- set-up -----------------------------------------------------------
    def configure(self) -> None:
        s = self.scenario
        os.makedirs(self.state, exist_ok=True)
        groups: dict[str, dict[str, Any]] = {
            'DEFAULT': {'state_path': self.state, 'host': 'elastman-eval',
                        'log_file': os.path.join(self.out,
                                                 'elastman-all.log'),
                        'debug': False},
            'api': {'bind_host': '127.0.0.1', 'bind_port': _free_port(),
                    'auth_strategy': 'noauth'},
            'store': {'contact_points': s.store_address, 'port': 9042,
                      'keyspace': 'elastman', 'replication_factor': 1,
                      'request_timeout': 30, 'connect_timeout': 30,
                      'connect_retries': 5},
            'local_cloud': {'network': s.network,
                            'jmx_port_base': s.jmx_port_base,
                            'flavor': '%s:%s' % (s.flavor, s.flavor_spec),
                            # a scale-out by several nodes bootstraps them
                            # at once, which Cassandra refuses by default
                            'jvm_options': [
                                '-Dcassandra.ring_delay_ms=5000',
                                '-Dcassandra.consistent.rangemovement='
                                'false']},
        }
        for group, values in s.elastman_conf().items():
            groups.setdefault(group, {}).update(values)
        write_config(self.config_path, groups)
        self.conf = make_conf(self.config_path)

    def start_store(self) -> None:
        from elastman.cassandra import node as cassandra_node
        from elastman.store import connection
        from elastman.store import schema
        from elastman import store as em_store

        spec = cassandra_node.NodeSpec(
            name='eval-store', base_dir=os.path.join(self.state, 'store'),
            address=self.scenario.store_address, cql_port=9042,
            jmx_port=_free_port(), cluster_name='elastman-eval-store',
            heap='384M')
        self.store_node = cassandra_node.LocalNode(self.conf, spec)
        self.echo('starting the store node at %s' % spec.address)
        self.store_node.start()
        self.store_node.wait_for_cql(timeout=300)
        # a store node that just started may time out its first schema
        # queries on a loaded machine: try again with a new connection
        session = _retry(lambda: connection.connect(self.conf), 'the store')
        try:
            schema.sync(session, self.conf)
        finally:
            connection.close(session)
        self.store = _retry(lambda: em_store.Store.open(self.conf),
                            'the store')

    def start_elastman(self) -> None:
        log = open(os.path.join(self.out, 'elastman-all.out'), 'a')
        self.elastman = subprocess.Popen(
            [sys.executable, '-m', 'elastman.cmd.all', '--config-file',
             self.config_path], stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)
        log.close()
        self.echo('elastman-all running (pid %d), log %s/elastman-all.log'
                  % (self.elastman.pid, self.out))

    def create_cluster(self) -> None:
        """A managed cluster in the store plus a journalled 'create'
        request: the actuator of elastman-all creates its nodes."""
        s = self.scenario
        spec = {'mode': 'managed', 'flavor': s.flavor, 'image': 'local',
                'size': s.size, 'cql_port': 9042, 'jmx_port': 7199}
        row = self.store.clusters.create('evaluation', 'eval-%s' % s.name,
                                         spec, s.scaling_policy(),
                                         state='CREATING')
        self.cluster_id = row['id']
        self.store.actions.create(row['id'], 'create',
                                  {'count': s.size, 'flavor': s.flavor,
                                   'requested_by': 'evaluate'},
                                  step='requested', state='PENDING')
        self.echo('cluster %s: asked elastman for %d %s nodes'
                  % (row['id'], s.size, s.flavor))

    def wait_cluster(self, timeout: float = 1800) -> list[dict]:
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            self.check_elastman()
            nodes = self.store.nodes.list(self.cluster_id)
            cluster = self.store.clusters.get(self.cluster_id)
            up = [n for n in nodes if n.get('state') == 'UN']
            line = 'cluster %s: %d/%d nodes UN (%s)' % (
                cluster['state'], len(up), self.scenario.size,
                ', '.join('%s %s' % (n.get('address'), n.get('state'))
                          for n in nodes) or 'none yet')
            if line != last:
                self.echo(line)
                last = line
            if cluster['state'] == 'ERROR':
                raise RuntimeError('cluster creation failed: %s'
                                   % cluster.get('status_reason'))
            if len(up) >= self.scenario.size and cluster['state'] == 'ACTIVE':
                return up
            time.sleep(5)
        raise RuntimeError('the cluster was not ready within %ds' % timeout)

    def check_elastman(self) -> None:
        """Restart elastman-all if it died (it resumes from the journal),
        up to ``MAX_RESTARTS`` times."""
        if self.elastman is None or self.elastman.poll() is None:
            return
        if self.restarts >= MAX_RESTARTS:
            raise RuntimeError('elastman-all exited with %d (see %s)'
                               % (self.elastman.returncode, self.out))
        self.restarts += 1
        self.echo('elastman-all exited with %d; restarting it (%d/%d)'
                  % (self.elastman.returncode, self.restarts, MAX_RESTARTS))
        self.start_elastman()

    # -- the run ----------------------------------------------------------------
    def ycsb_target(self, nodes: list[dict]) -> ycsb.Target:
        s = self.scenario
        return ycsb.Target(hosts=[n['address'] for n in nodes],
                           recordcount=s.recordcount,
                           consistency=s.consistency,
                           replication_factor=s.replication_factor)

    def _on_status(self, phase: ycsb.Phase, wall: float, status: dict) -> None:
        with self.lock:
            self.intervals.append((wall, status))

    def _run_phases(self) -> None:
        for phase in self.scenario.phases:
            if self.runner.stopped:
                return
            start = time.time()
            result = self.runner.run(phase, on_status=self._on_status)
            with self.lock:
                self.results.append(result)
                self.phase_windows.append((start, time.time(), phase))

    def poll_nodes(self) -> tuple[int, int]:
        nodes = self.store.nodes.list(self.cluster_id)
        serving = sum(1 for n in nodes if n.get('state') == 'UN')
        with self.lock:
            self.node_ids.update(n['node_id'] for n in nodes)
            self.node_polls.append((time.time(), serving, len(nodes)))
        return serving, len(nodes)

    def progress_line(self, now: float) -> str:
        offset = now - self.t0
        phase = next((p for a, b, p in schedule(self.scenario)
                      if a <= offset < b), None)
        with self.lock:
            recent = [s for w, s in self.intervals if w >= now - 30]
            serving, total = self.node_polls[-1][1:] if self.node_polls \
                else (0, 0)
        ops = sum(sum(o.get('count', 0) for o in s['ops'].values())
                  for s in recent) / 30.0
        p99 = _weighted_p99([s for s in recent], 'READ')
        decision = self.last_decision()
        return ('[%5.1f/%.0f min] %-12s target %5s | client %5.0f ops/s, '
                'read p99 %s ms | nodes %d UN of %d | %s' % (
                    offset / MINUTE, self.scenario.duration_s / MINUTE,
                    phase.name if phase else '-',
                    '%d' % phase.target if phase else '-', ops,
                    '%.0f' % p99 if p99 is not None else '-', serving, total,
                    decision))

    def last_decision(self) -> str:
        try:
            page = self.store.actions.decisions(self.cluster_id, limit=1)
        except Exception:
            return ''
        if not page:
            return 'no decision yet'
        record = page[0]['record'] or {}
        return _shorten(record.get('reason') or page[0]['action'], 90)

    def run_workload(self, progress_every: float = 15.0) -> None:
        nodes = self.wait_cluster()
        target = self.ycsb_target(nodes)
        self.runner = ycsb.Runner(target, os.path.join(self.out, 'ycsb'))
        self.echo('loading %d records of %d B into %s.%s (RF %d)' % (
            target.recordcount, self.scenario.load.record_bytes,
            target.keyspace, target.table, target.replication_factor))
        loaded = self.runner.load(self.scenario.load)
        self.results.append(loaded)
        if loaded.returncode != 0:
            raise RuntimeError('YCSB load failed (see %s)' % loaded.log_path)
        self.echo('loaded in %.0f s (%.0f ops/s)' % (
            loaded.ended - loaded.started, loaded.summary.get('throughput')
            or 0))
        # warm-up counts from now on: the time spent building and loading
        # the cluster is added to the scaling policy's warm-up
        cluster = self.store.clusters.get(self.cluster_id)
        created = _epoch(cluster['created_at'])
        policy = dict(cluster['policy'])
        policy['warmup_s'] = float(self.scenario.scaling_policy()[
            'warmup_s']) + max(0.0, time.time() - created)
        self.store.clusters.update(self.cluster_id, policy=policy)
        self.t0 = time.time()
        thread = threading.Thread(target=self._run_phases, daemon=True,
                                  name='ycsb-phases')
        thread.start()
        next_print = 0.0
        while thread.is_alive():
            self.check_elastman()
            self.poll_nodes()
            now = time.time()
            if now >= next_print:
                self.echo(self.progress_line(now))
                next_print = now + progress_every
            thread.join(5)
        self.poll_nodes()

    # -- records ----------------------------------------------------------------
    def collect(self) -> dict[str, Any]:
        """Everything the run left in the store, as plain data."""
        actions, decisions, samples = [], [], []
        if self.store is None or self.cluster_id is None:
            return {'actions': actions, 'decisions': decisions,
                    'samples': samples}
        actions = _all_pages(lambda m: self.store.actions.list(
            self.cluster_id, limit=500, marker=m))
        decisions = _all_pages(lambda m: self.store.actions.decisions(
            self.cluster_id, limit=500, marker=m))
        since = datetime.datetime.fromtimestamp(
            (self.t0 or time.time()) - 600, datetime.timezone.utc)
        for node_id in sorted(self.node_ids):
            samples.extend(self.store.samples.for_node(self.cluster_id,
                                                       node_id, since=since))
        return {'actions': actions, 'decisions': decisions,
                'samples': samples}

    def write_outputs(self) -> dict[str, Any]:
        data = self.collect()
        with self.lock:
            intervals = list(self.intervals)
            polls = list(self.node_polls)
            windows = list(self.phase_windows)
            results = list(self.results)
        if results:
            ycsb.write_results(results, os.path.join(self.out, 'phases.csv'),
                               os.path.join(self.out, 'phases.json'))
        if self.t0 is None:
            return {}
        rows = minute_rows(self.t0, self.scenario, windows, intervals, polls,
                           data['samples'], data['actions'])
        _write_csv(os.path.join(self.out, 'minutes.csv'), MINUTE_FIELDS, rows)
        drows = decision_rows(self.t0, data['decisions'])
        _write_csv(os.path.join(self.out, 'decisions.csv'), DECISION_FIELDS,
                   drows)
        arows = action_rows(self.t0, data['actions'])
        _write_csv(os.path.join(self.out, 'actions.csv'),
                   ('created_minute', 'done_minute', 'kind', 'state', 'step',
                    'params', 'reason'), arows)
        summary = summarise(self.scenario, rows, arows, drows)
        with open(os.path.join(self.out, 'summary.json'), 'w') as f:
            json.dump(summary, f, indent=1)
        try:
            plot(os.path.join(self.out, 'figure.png'), self.scenario, rows,
                 arows)
        except Exception:
            LOG.exception('cannot draw the figure')
        return summary

    # -- tear-down --------------------------------------------------------------
    def cleanup(self) -> None:
        """Stop YCSB, elastman-all, every cluster node and the store node."""
        if self.runner is not None:
            self.echo('stopping YCSB')
            self.runner.stop()
        if self.elastman is not None and self.elastman.poll() is None:
            self.echo('stopping elastman-all (pid %d)' % self.elastman.pid)
            _stop_process(self.elastman, 60)
        if self.conf is not None:
            from elastman.compute import local as local_driver
            try:
                driver = local_driver.LocalDriver(self.conf, recover=False)
                servers = driver.list()
            except Exception:
                LOG.exception('cannot list the local servers')
                servers = []
            if servers:
                self.echo('deleting %d cluster node(s)' % len(servers))
            threads = [threading.Thread(target=_quietly(driver.delete),
                                        args=(s.id,)) for s in servers]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        if self.store is not None:
            try:
                self.store.close()
            except Exception:
                LOG.exception('closing the store connection failed')
        if self.store_node is not None:
            self.echo('stopping the store node')
            try:
                if self.keep:
                    self.store_node.stop()
                else:
                    self.store_node.destroy()
            except Exception:
                LOG.exception('stopping the store node failed')


def _retry(func, what: str, attempts: int = 8, wait: float = 5.0):
    for attempt in range(1, attempts + 1):
        try:
            return func()
        except Exception as exc:
            if attempt == attempts:
                raise
            LOG.warning('cannot reach %s yet (%s); retrying', what, exc)
            time.sleep(wait)


def _quietly(func):
    def call(*args):
        try:
            func(*args)
        except Exception:
            LOG.exception('clean-up step failed')
    return call


def _stop_process(proc: subprocess.Popen, timeout: float) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def _epoch(ts: datetime.datetime | None) -> float | None:
    if ts is None:
        return None
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=datetime.timezone.utc)
    return ts.timestamp()


def _all_pages(fetch) -> list[dict]:
    rows, marker = [], None
    while True:
        page = fetch(marker)
        rows.extend(page)
        marker = getattr(page, 'next_marker', None)
        if not marker:
            return rows


def _shorten(text: str, width: int) -> str:
    text = ' '.join(str(text).split())
    return text if len(text) <= width else text[:width - 3] + '...'


def _write_csv(path: str, fields, rows) -> None:
    with open(path, 'w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=list(fields),
                                extrasaction='ignore')
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _fmt(row.get(k)) for k in fields})


def _fmt(value: Any) -> Any:
    if value is None:
        return ''
    if isinstance(value, float):
        return '' if not math.isfinite(value) else round(value, 2)
    return value


# -- per-minute series ---------------------------------------------------------

def _weighted_p99(statuses: list[dict], op: str) -> float | None:
    """Count-weighted mean of the interval p99s of ``op``, in ms."""
    num = den = 0.0
    for s in statuses:
        o = s.get('ops', {}).get(op)
        if o and o.get('count') and o.get('p99_us') is not None:
            num += o['count'] * o['p99_us']
            den += o['count']
    return num / den / 1000.0 if den else None


def minute_rows(t0: float, scenario: Scenario, windows, intervals, polls,
                samples, actions) -> list[dict[str, Any]]:
    """One row per minute since ``t0``: workload, nodes, latency, actions."""
    plan = schedule(scenario)
    end = max([t0 + scenario.duration_s] + [b for _, b, _ in windows])
    minutes = int(math.ceil((end - t0) / MINUTE - 1e-9))
    rows = []
    for m in range(minutes):
        a, b = t0 + m * MINUTE, t0 + (m + 1) * MINUTE
        mid = (m + 0.5) * MINUTE
        phase = next((p for s, e, p in plan if s <= mid < e), None)
        real = next((p for s, e, p in windows if s <= (a + b) / 2 < e), None)
        phase = real or phase
        stats = [s for w, s in intervals if a <= w < b]
        counted = sum(sum(o.get('count', 0) for o in s['ops'].values())
                      for s in stats)
        span = min(b, end) - a
        reads = [s for s in stats if s['ops'].get('READ')]
        client_max = max((s['ops']['READ'].get('p99_us', 0) for s in reads
                          if s['ops']['READ'].get('count')), default=None)
        node_states = [(n, t) for w, n, t in polls if a <= w < b]
        minute_samples = [s for s in samples
                          if a <= (_epoch(s['ts']) or 0) < b and
                          s.get('up') is not False]
        srv = _server_latency(minute_samples)
        acts = []
        for act in actions:
            created = _epoch(act['created_at'])
            if created is not None and a <= created < b:
                acts.append('%s %s' % (act['kind'], _act_size(act)))
        row = {'minute': m, 'phase': phase.name if phase else '',
               'target_ops': phase.target if phase else 0,
               'client_ops': counted / span if span > 0 else 0.0,
               'client_read_p99_ms': _weighted_p99(stats, 'READ'),
               'client_read_p99_max_ms':
                   client_max / 1000.0 if client_max is not None else None,
               'nodes': node_states[-1][0] if node_states else
                   (rows[-1]['nodes'] if rows else None),
               'servers': max(t for _, t in node_states) if node_states
                   else (rows[-1]['servers'] if rows else None),
               'actions': '; '.join(acts)}
        row.update(srv)
        p99 = row['server_read_p99_ms']
        row['violation'] = int(p99 is not None and p99 > scenario.slo_ms)
        rows.append(row)
    return rows


def _server_latency(samples: list[dict]) -> dict[str, Any]:
    """Per-minute server view from node samples: the cluster's request
    rates (node rates averaged over the minute's samples and summed) and the
    read p99 (reads-weighted mean and max over the nodes' samples)."""
    by_node: dict[str, list[dict]] = {}
    for s in samples:
        by_node.setdefault(s['node_id'], []).append(s)
    reads = sum(sum(x.get('reads_per_s') or 0 for x in v) / len(v)
                for v in by_node.values())
    writes = sum(sum(x.get('writes_per_s') or 0 for x in v) / len(v)
                 for v in by_node.values())
    num = den = 0.0
    peak = None
    for s in samples:
        p99 = s.get('read_p99_ms')
        if p99 is None or not math.isfinite(p99):
            continue
        weight = s.get('reads_per_s') or 0.0
        if weight <= 0:
            continue
        num += weight * p99
        den += weight
        peak = p99 if peak is None else max(peak, p99)
    return {'server_reads_per_s': reads if samples else None,
            'server_writes_per_s': writes if samples else None,
            'server_read_p99_ms': num / den if den else None,
            'server_read_p99_max_ms': peak}


def _act_size(act: dict) -> str:
    params = act.get('params') or {}
    if params.get('nodes'):
        return '-%d' % len(params['nodes'])
    if params.get('count') is not None:
        return ('+%d' if act['kind'] in ('scale_out', 'create') else '%d') \
            % params['count']
    return ''


def action_rows(t0: float, actions: list[dict]) -> list[dict[str, Any]]:
    rows = []
    for act in sorted(actions, key=lambda a: a['created_at']):
        created, updated = _epoch(act['created_at']), _epoch(act['updated_at'])
        done = act['state'] in ('SUCCEEDED', 'FAILED', 'ROLLED_BACK')
        rows.append({'created_minute': round((created - t0) / MINUTE, 2),
                     'done_minute': round((updated - t0) / MINUTE, 2)
                     if done else None,
                     'kind': act['kind'], 'state': act['state'],
                     'step': act['step'], 'size': _act_size(act),
                     'params': json.dumps(act.get('params') or {},
                                          sort_keys=True),
                     'reason': act.get('reason') or ''})
    return rows


def decision_rows(t0: float, decisions: list[dict]) -> list[dict[str, Any]]:
    """Each decision with the forecast and the models it used."""
    rows = []
    for d in sorted(decisions, key=lambda r: r['ts']):
        rec = d.get('record') or {}
        inputs = rec.get('inputs') or {}
        fc = inputs.get('forecast') or {}
        at = _epoch(d['ts'])
        ages = []
        row = {'time': datetime.datetime.fromtimestamp(
                   at, datetime.timezone.utc).strftime('%H:%M:%S'),
               'minute': round((at - t0) / MINUTE, 2),
               'kind': rec.get('kind') or d.get('action'),
               'count': rec.get('count'), 'flavor': rec.get('flavor'),
               'forecast_used': bool(inputs.get('forecast_used')),
               'reason': rec.get('reason') or ''}
        for metric, short in (('reads_per_s', 'reads'),
                              ('writes_per_s', 'writes')):
            info = fc.get(metric) or {}
            row['%s_forecast' % short] = info.get('value')
            row['%s_forecaster' % short] = info.get('forecaster') or \
                info.get('ignored') or ''
            made = info.get('made_at')
            if made:
                try:
                    ages.append(at - datetime.datetime.fromisoformat(
                        made).replace(tzinfo=datetime.timezone.utc
                                      ).timestamp())
                except ValueError:
                    pass
        row['forecast_age_s'] = max(ages) if ages else None
        versions = inputs.get('model_versions') or {}
        row['vm_models'] = _versions(versions.get('vm'))
        row['flavor_models'] = _versions(versions.get('flavor'))
        bounds: dict[str, int] = {}
        for vm in rec.get('vms') or []:
            bounds[vm.get('bound') or '?'] = bounds.get(
                vm.get('bound') or '?', 0) + 1
        row['bounds'] = ' '.join('%s:%d' % kv for kv in sorted(bounds.items()))
        rows.append(row)
    return rows


def _versions(mapping: Mapping[str, int] | None) -> str:
    if not mapping:
        return ''
    return ' '.join('%s=v%s' % (str(k)[:8], v)
                    for k, v in sorted(mapping.items()))


def summarise(scenario: Scenario, rows, actions, decisions) -> dict[str, Any]:
    measured = [r for r in rows if r['server_read_p99_ms'] is not None]
    node_minutes = sum(r['servers'] or 0 for r in rows)
    acted = [d for d in decisions if d['kind'] in ('scale_out', 'scale_in')]
    return {
        'scenario': scenario.name, 'slo_ms': scenario.slo_ms,
        'minutes': len(rows),
        'violation_minutes': sum(r['violation'] for r in rows),
        'violation_pct': 100.0 * sum(r['violation'] for r in rows) /
        max(len(measured), 1),
        'client_violation_minutes': sum(
            1 for r in rows if (r['client_read_p99_ms'] or 0) >
            scenario.slo_ms),
        'vm_hours': node_minutes / 60.0,
        'min_nodes': min((r['nodes'] for r in rows
                          if r['nodes'] is not None), default=None),
        'max_nodes': max((r['nodes'] or 0 for r in rows), default=0),
        'final_nodes': rows[-1]['nodes'] if rows else None,
        'scale_actions': [
            '%s %s at %.1f min (%s)' % (a['kind'], a['size'],
                                        a['created_minute'], a['state'])
            for a in actions if a['kind'] != 'create'],
        'decisions': len(decisions),
        'acting_decisions': [
            {'minute': d['minute'], 'kind': d['kind'], 'count': d['count'],
             'forecast_used': d['forecast_used'],
             'reads_forecast': d['reads_forecast'],
             'reads_forecaster': d['reads_forecaster'],
             'writes_forecast': d['writes_forecast'],
             'writes_forecaster': d['writes_forecaster'],
             'vm_models': d['vm_models'],
             'flavor_models': d['flavor_models'], 'bounds': d['bounds']}
            for d in acted],
    }


# -- figure ------------------------------------------------------------------

def plot(path: str, scenario: Scenario, rows, actions) -> None:
    """Workload, nodes and p99 against time with the SLO line (like seed
    000, Figs. 3.14 and 3.15)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    t = [r['minute'] + 0.5 for r in rows]
    fig, ax = plt.subplots(3, 1, figsize=(10, 9), sharex=True,
                           gridspec_kw={'height_ratios': [1.2, 1, 1.6]})
    ax[0].step(t, [r['target_ops'] for r in rows], where='mid', color='grey',
               ls='--', lw=1, label='YCSB target')
    ax[0].plot(t, [r['client_ops'] for r in rows], color='black', lw=1.2,
               label='client ops/s')
    ax[0].plot(t, [(r['server_reads_per_s'] or 0) +
                   (r['server_writes_per_s'] or 0) for r in rows],
               color='tab:blue', lw=0.9, label='served (monitor)')
    ax[0].set_ylabel('ops/s')
    ax[0].legend(fontsize=8, loc='upper left')
    ax[0].set_title('%s: elastman on a live local Cassandra cluster'
                    % scenario.name)
    ax[1].step(t, [r['nodes'] or 0 for r in rows], where='mid',
               color='tab:green', lw=1.6, label='serving nodes (UN)')
    ax[1].step(t, [r['servers'] or 0 for r in rows], where='mid',
               color='tab:olive', lw=0.8, ls=':', label='servers')
    for a in actions:
        if a['kind'] in ('scale_out', 'scale_in'):
            ax[1].axvline(a['created_minute'], color='tab:red' if
                          a['kind'] == 'scale_out' else 'tab:purple',
                          lw=0.8, alpha=0.6)
    ax[1].set_ylabel('VMs')
    top = max([r['servers'] or 0 for r in rows] + [scenario.size]) + 1
    ax[1].set_ylim(0, top)
    ax[1].legend(fontsize=8, loc='upper left')
    ax[2].plot(t, [r['server_read_p99_ms'] for r in rows], color='tab:blue',
               lw=1.2, marker='.', label='server p99 read (monitor)')
    ax[2].plot(t, [r['client_read_p99_ms'] for r in rows],
               color='tab:orange', lw=1, marker='.', alpha=0.8,
               label='client p99 read (YCSB)')
    ax[2].axhline(scenario.slo_ms, color='red', ls='--', lw=1,
                  label='SLO %g ms' % scenario.slo_ms)
    ax[2].set_yscale('log')
    ax[2].set_ylabel('p99 read latency (ms)')
    ax[2].set_xlabel('minutes')
    ax[2].legend(fontsize=8, loc='upper left')
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


# -- command ---------------------------------------------------------------------

def run(scenario: Scenario, out_dir: str, keep: bool = False,
        echo=print) -> dict[str, Any]:
    """The whole live evaluation; cleans up on any exit."""
    harness = Harness(scenario, out_dir, keep=keep, echo=echo)
    os.makedirs(harness.out, exist_ok=True)
    echo('scenario %s: %d phases, %.0f min of workload, SLO %g ms; output in '
         '%s' % (scenario.name, len(scenario.phases),
                 scenario.duration_s / MINUTE, scenario.slo_ms, harness.out))
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    summary: dict[str, Any] = {}
    try:
        harness.configure()
        harness.start_store()
        harness.start_elastman()
        harness.create_cluster()
        harness.run_workload()
        echo('workload done')
    except KeyboardInterrupt:
        echo('interrupted: cleaning up')
        raise
    finally:
        signal.signal(signal.SIGINT, _ignore_interrupt)
        try:
            try:
                summary = harness.write_outputs()
            except Exception:
                LOG.exception('writing the results failed')
            harness.cleanup()
        finally:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.signal(signal.SIGTERM, previous)
    return summary


def _raise_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt()


def _ignore_interrupt(signum, frame) -> None:
    print('cleaning up, please wait', file=sys.stderr, flush=True)


def format_summary(summary: Mapping[str, Any]) -> str:
    lines = ['%-26s %s' % (k, v) for k, v in summary.items()
             if k not in ('acting_decisions', 'scale_actions')]
    for a in summary.get('scale_actions', []):
        lines.append('action: %s' % a)
    for d in summary.get('acting_decisions', []):
        lines.append('decision at %.1f min: %s %s; forecast used: %s '
                     '(reads %s by %s, writes %s by %s); models: vm %s, '
                     'flavor %s; bounds %s' % (
                         d['minute'], d['kind'], d['count'],
                         d['forecast_used'], _num(d['reads_forecast']),
                         d['reads_forecaster'], _num(d['writes_forecast']),
                         d['writes_forecaster'], d['vm_models'] or '-',
                         d['flavor_models'] or '-', d['bounds']))
    return '\n'.join(lines)


def _num(value: Any) -> str:
    return '%.0f' % value if isinstance(value, (int, float)) else '-'


def add_subparser(subparsers: Any) -> argparse.ArgumentParser:
    """``elastman-manage evaluate SCENARIO.yaml [--out DIR] [--keep]``."""
    parser = subparsers.add_parser(
        'evaluate', help='run a live evaluation scenario (YCSB phases) '
                         'against a local cluster managed by elastman-all')
    parser.add_argument('scenario', help='scenario YAML file')
    parser.add_argument('--out', help='output directory (default: '
                                      'evaluation-<name>-<time>)')
    parser.add_argument('--keep', action='store_true',
                        help='keep the store node\'s data directory')
    parser.add_argument('--dry-run', action='store_true',
                        help='only print the expanded schedule')
    parser.set_defaults(func=_command)
    return parser


def _command(args: Any = None) -> int:
    if args is None:
        from elastman.conf import CONF
        args = CONF.command
    try:
        scenario = load_scenario(args.scenario)
    except ScenarioError as exc:
        print('evaluate: %s' % exc, file=sys.stderr)
        return 2
    if args.dry_run:
        for start, end, p in schedule(scenario):
            print('%6.1f-%6.1f min %-14s target %5d ops/s read %.2f update '
                  '%.2f %d x %d B' % (start / MINUTE, end / MINUTE, p.name,
                                      p.target, p.read_proportion,
                                      p.update_proportion, p.fieldcount,
                                      p.fieldlength))
        return 0
    out = args.out or 'evaluation-%s-%s' % (
        scenario.name, time.strftime('%Y%m%d-%H%M%S'))
    summary = run(scenario, out, keep=args.keep,
                  echo=lambda m: print(m, flush=True))
    print(format_summary(summary))
    return 0 if summary else 1
