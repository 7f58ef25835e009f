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
"""The live evaluation: elastman scaling a real local Cassandra cluster under
a YCSB workload schedule (OnlineElastMan, Sec. 3.4, Figs. 3.14/3.15).

``elastman-manage evaluate SCENARIO.yaml`` starts a store node and
elastman-all (a subprocess with a generated configuration), creates a managed
cluster of local Cassandra nodes, loads it with YCSB, runs the scenario's
phases while showing progress, and writes into the output directory:

* ``minutes.csv``   per minute: target and measured workload, nodes, client
  and server p99 read latency, SLO violation, actions;
* ``decisions.csv`` every control period's decision with the forecast
  (forecaster, value, age), the model versions it used and each VM's
  predicted load, target and capacity; ``decisions.json`` the full
  decision records;
* ``actions.csv``   the action journal; ``phases.csv``/``.json`` per-phase
  YCSB results; ``summary.json``; ``figure.png`` (nodes and p99 against
  time with the SLO line).

Everything it started (YCSB, elastman-all, the cluster's nodes, the store
node) is stopped on the way out, also on Ctrl-C.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from typing import Any, Mapping

from oslo_config import cfg
from oslo_log import log as logging

from elastman.common import ports
from elastman.common import timestamps
from elastman.evaluation import live_calibration as calib
from elastman.evaluation import live_records as rec
from elastman.evaluation import live_scenario as scen
from elastman.evaluation import ycsb

LOG = logging.getLogger(__name__)

MAX_RESTARTS = 3


# -- processes --------------------------------------------------------------

def write_config(path: str, groups: Mapping[str, Mapping[str, Any]]) -> str:
    """Write an elastman.conf from {group: {option: value}}: a list as
    comma-separated values, a boolean in lower case.
    """
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
    (the harness's own view of the store and the local cloud).
    """
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

    def __init__(self, scenario: scen.Scenario, out_dir: str,
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
        self.released = False
        self.restarts = 0
        self.current: tuple[ycsb.Phase, float] | None = None
        self.ended_early: set[str] = set()

    # -- set-up --------------------------------------------------------------
    def configure(self) -> None:
        s = self.scenario
        os.makedirs(self.state, exist_ok=True)
        groups: dict[str, dict[str, Any]] = {
            'DEFAULT': {'state_path': self.state, 'host': 'elastman-eval',
                        'log_file': os.path.join(self.out,
                                                 'elastman-all.log'),
                        'debug': False},
            'api': {'bind_host': '127.0.0.1', 'bind_port': ports.free(),
                    'auth_strategy': 'noauth'},
            'store': {'contact_points': s.store_address, 'port': 9042,
                      'keyspace': 'elastman', 'replication_factor': 1,
                      'request_timeout': 30, 'connect_timeout': 30,
                      'connect_retries': 5},
            'local_cloud': {'network': s.network,
                            'jmx_port_base': s.jmx_port_base,
                            'flavor': '%s:%s' % (s.flavor, s.flavor_spec)},
        }
        for group, values in s.elastman_conf().items():
            groups.setdefault(group, {}).update(values)
        write_config(self.config_path, groups)
        self.conf = make_conf(self.config_path)

    def start_store(self) -> None:
        from elastman.cassandra import node as cassandra_node
        from elastman import store as em_store
        from elastman.store import connection
        from elastman.store import schema

        spec = cassandra_node.NodeSpec(
            name='eval-store', base_dir=os.path.join(self.state, 'store'),
            address=self.scenario.store_address, cql_port=9042,
            jmx_port=ports.free(), cluster_name='elastman-eval-store',
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
        request: the actuator of elastman-all creates its nodes.
        """
        s = self.scenario
        spec = {'mode': 'managed', 'flavor': s.flavor, 'image': 'local',
                'size': s.size, 'cql_port': 9042, 'jmx_port': 7199}
        # held at its size, deciding but not acting, until the data is
        # loaded and the cold minutes are over (release_when_warm): that is
        # the run's set-up, the same for the elastic and the static run,
        # not part of what they compare
        held = s.held_static().scaling_policy()
        row = self.store.clusters.create('evaluation', 'eval-%s' % s.name,
                                         spec, held, state='CREATING')
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
        up to ``MAX_RESTARTS`` times.
        """
        if self.elastman is None or self.elastman.poll() is None:
            return
        if self.restarts >= MAX_RESTARTS:
            raise RuntimeError('elastman-all exited with %d (see %s)'
                               % (self.elastman.returncode, self.out))
        self.restarts += 1
        self.echo('elastman-all exited with %d; restarting it (%d/%d)'
                  % (self.elastman.returncode, self.restarts, MAX_RESTARTS))
        self.start_elastman()

    # -- the run -------------------------------------------------------------
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
            with self.lock:
                self.current = (phase, start)
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

    def check_until(self) -> None:
        """End the running phase once an action of the kind it waits for
        (its ``until``) has completed during it, wherever it started: a
        scale-out the training phases set off and the high phase sees
        through counts.
        """
        with self.lock:
            current = self.current
        if current is None:
            return
        phase, started = current
        event = self.scenario.until.get(phase.name)
        if event is None or phase.name in self.ended_early:
            return
        for action in self.store.actions.list(self.cluster_id, limit=20):
            done = action.get('updated_at')
            if (action['kind'] == event and action['state'] == 'SUCCEEDED'
                    and done is not None and timestamps.epoch(done) >= started):
                self.ended_early.add(phase.name)
                self.echo('%s done at %.1f min: phase %s ends here' % (
                    event, (timestamps.epoch(done) - self.t0) / scen.MINUTE,
                    phase.name))
                self.runner.end_phase()
                return

    def progress_line(self, now: float) -> str:
        offset = now - self.t0
        with self.lock:
            phase = self.current[0] if self.current else None
            recent = [s for w, s in self.intervals if w >= now - 30]
            serving, total = self.node_polls[-1][1:] if self.node_polls \
                else (0, 0)
        ops = sum(sum(o.get('count', 0) for o in s['ops'].values())
                  for s in recent) / 30.0
        p99 = rec.weighted_p99([s for s in recent], 'READ')
        decision = self.last_decision()
        return ('[%5.1f/%.0f min] %-12s target %5s | client %5.0f ops/s, '
                'read p99 %s ms | nodes %d UN of %d | %s' % (
                    offset / scen.MINUTE,
                    self.scenario.duration_s / scen.MINUTE,
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

    def release_when_warm(self, now: float) -> bool:
        """Release the cluster (:meth:`release`) once the schedule's cold
        minutes are over (:data:`~live_records.COLD_MINUTES`); True once
        it is released.

        The comparison does not count those minutes' violations (the JVMs
        have served no read yet), so neither run may act on them: a guard
        that scaled out on a cold JVM's latency would make the elastic run
        one node larger for the whole ramp.
        """
        if not self.released and self.t0 is not None \
                and now >= self.t0 + rec.COLD_MINUTES * scen.MINUTE:
            self.release()
            self.released = True
        return self.released

    def release(self) -> None:
        """Give the cluster the scenario's own policy; its warm-up counts
        from now (the time spent building, loading and warming the cluster
        is added to it).
        """
        cluster = self.store.clusters.get(self.cluster_id)
        created = timestamps.epoch(cluster['created_at'])
        policy = self.scenario.scaling_policy()
        policy['warmup_s'] = float(policy['warmup_s']) + max(0.0, time.time() - created)
        self.store.clusters.update(self.cluster_id, policy=policy)

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
        self.t0 = time.time()
        thread = threading.Thread(target=self._run_phases, daemon=True,
                                  name='ycsb-phases')
        thread.start()
        next_print = 0.0
        while thread.is_alive():
            self.release_when_warm(time.time())
            self.check_elastman()
            self.poll_nodes()
            try:
                self.check_until()
            except Exception:
                LOG.exception('cannot check the action journal')
            now = time.time()
            if now >= next_print:
                self.echo(self.progress_line(now))
                next_print = now + progress_every
            thread.join(5)
        self.poll_nodes()

    # -- records -------------------------------------------------------------
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
        rows = rec.minute_rows(self.t0, self.scenario, windows, intervals,
                               polls,
                               data['samples'], data['actions'])
        rec.write_csv(os.path.join(self.out, 'minutes.csv'),
                      rec.MINUTE_FIELDS, rows)
        drows = rec.decision_rows(self.t0, data['decisions'])
        rec.write_json(os.path.join(self.out, 'decisions.json'),
                       [{'ts': d['ts'], 'record': d.get('record')}
                        for d in data['decisions']])
        rec.write_csv(os.path.join(self.out, 'decisions.csv'),
                      rec.DECISION_FIELDS,
                      drows)
        arows = rec.action_rows(self.t0, data['actions'])
        rec.write_csv(os.path.join(self.out, 'actions.csv'),
                      ('created_minute', 'done_minute', 'kind', 'state', 'step',
                       'params', 'reason'), arows)
        summary = rec.summarise(self.scenario, rows, arows, drows)
        with open(os.path.join(self.out, 'summary.json'), 'w') as f:
            json.dump(summary, f, indent=1)
        try:
            rec.plot(os.path.join(self.out, 'figure.png'), self.scenario, rows,
                     arows)
        except Exception:
            LOG.exception('cannot draw the figure')
        return summary

    # -- tear-down -----------------------------------------------------------
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


# -- command ----------------------------------------------------------------

def run(scenario: scen.Scenario, out_dir: str, keep: bool = False,
        echo=print) -> dict[str, Any]:
    """The whole live evaluation; cleans up on any exit."""
    harness = Harness(scenario, out_dir, keep=keep, echo=echo)
    os.makedirs(harness.out, exist_ok=True)
    echo('scenario %s: %d phases, %.0f min of workload, SLO %g ms; output in '
         '%s' % (scenario.name, len(scenario.phases),
                 scenario.duration_s / scen.MINUTE, scenario.slo_ms,
                 harness.out))
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


def read_minutes(out_dir: str) -> list[dict[str, Any]]:
    """A run's ``minutes.csv`` back as rows (empty cells as None)."""
    with open(os.path.join(out_dir, 'minutes.csv'), newline='') as f:
        return [{k: (v if v != '' else None) for k, v in row.items()}
                for row in csv.DictReader(f)]


def calibrate(scenario: scen.Scenario, out_dir: str, keep: bool = False,
              echo=print, runner=None) -> float:
    """Run the scenario's probe in ``out_dir`` and return the scale of its
    targets for this machine (:mod:`live_calibration`); writes
    ``calibration.json``.
    """
    runner = runner or run
    probe = scenario.probe()
    runner(probe, out_dir, keep=keep, echo=echo)
    found = calib.knee(read_minutes(out_dir), scenario.slo_ms,
                       scenario.probe_measure)
    scale = calib.factor(found, scenario)
    doc = calib.describe(found, scenario, scale)
    with open(os.path.join(out_dir, 'calibration.json'), 'w') as f:
        json.dump(doc, f, indent=1)
    echo('calibration: the static cluster served %.0f ops/s within the SLO '
         '(minute %d of the probe), %.0f where the scenario was written: '
         'targets x %.3f%s' % (found.ops, found.minute,
                               scenario.reference_ops, scale,
                               '' if found.crossed else ' (%s)' % doc['note']))
    return scale


def run_pair(scenario: scen.Scenario, out_dir: str, keep: bool = False,
             echo=print, runner=None) -> dict[str, Any]:
    """The probe, then the elastic run and the static run with the targets
    it scaled, back to back, in ``out_dir``/probe, /elastic and /static;
    writes and returns ``pair.json``.
    """
    runner = runner or run
    os.makedirs(out_dir, exist_ok=True)
    scale = calibrate(scenario, os.path.join(out_dir, 'probe'), keep=keep,
                      echo=echo, runner=runner)
    scaled = scenario.scaled(scale)
    elastic = runner(scaled, os.path.join(out_dir, 'elastic'), keep=keep,
                     echo=echo)
    static = runner(scaled.held_static(), os.path.join(out_dir, 'static'),
                    keep=keep, echo=echo)
    doc = {'scale': scale, 'elastic': elastic, 'static': static,
           'comparison': rec.compare(elastic, static)}
    with open(os.path.join(out_dir, 'pair.json'), 'w') as f:
        json.dump(doc, f, indent=1)
    return doc


def _raise_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt()


def _ignore_interrupt(signum, frame) -> None:
    print('cleaning up, please wait', file=sys.stderr, flush=True)


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
    parser.add_argument('--static', action='store_true',
                        help='hold the cluster at its initial size (the '
                             'baseline of an elastic run; elastman decides '
                             'but does not act)')
    parser.add_argument('--scale', type=float, default=None,
                        help='multiply every phase\'s target by this')
    parser.add_argument('--calibrate', action='store_true',
                        help='run only the scenario\'s calibration probe and '
                             'print the scale of its targets for this machine')
    parser.add_argument('--pair', action='store_true',
                        help='the calibration probe, then the elastic and the '
                             'static run with the scaled targets, back to '
                             'back (OUT/probe, OUT/elastic, OUT/static)')
    parser.set_defaults(func=_command)
    return parser


def _command(args: Any = None) -> int:
    if args is None:
        from elastman.conf import CONF
        args = CONF.command
    try:
        scenario = scen.load_scenario(args.scenario)
    except scen.ScenarioError as exc:
        print('evaluate: %s' % exc, file=sys.stderr)
        return 2
    static, scale = getattr(args, 'static', False), getattr(args, 'scale', None)
    only_probe, pair = getattr(args, 'calibrate', False), getattr(args, 'pair', False)
    if (only_probe or pair) and (static or scale is not None):
        print('evaluate: --calibrate and --pair take neither --static nor '
              '--scale', file=sys.stderr)
        return 2
    try:
        # a scenario without a calibration section is refused before any run
        probe = scenario.probe() if only_probe or pair else None
        if scale is not None:
            scenario = scenario.scaled(scale)
    except scen.ScenarioError as exc:
        print('evaluate: %s' % exc, file=sys.stderr)
        return 2
    if static:
        scenario = scenario.held_static()
    if args.dry_run and probe is not None:
        scenario = probe
    if args.dry_run:
        for start, end, p in scen.schedule(scenario):
            until = scenario.until.get(p.name)
            print('%6.1f-%6.1f min %-14s target %5d ops/s read %.2f update '
                  '%.2f %d x %d B%s' % (
                      start / scen.MINUTE, end / scen.MINUTE, p.name,
                      p.target, p.read_proportion, p.update_proportion,
                      p.fieldcount, p.fieldlength,
                      ' (or until a %s has completed)' % until
                      if until else ''))
        return 0
    out = args.out or 'evaluation-%s-%s' % (
        scenario.name, time.strftime('%Y%m%d-%H%M%S'))
    echo = lambda m: print(m, flush=True)  # noqa: E731
    try:
        if only_probe:
            calibrate(scenario, out, keep=args.keep, echo=echo)
            return 0
        if pair:
            doc = run_pair(scenario, out, keep=args.keep, echo=echo)
            print(rec.format_comparison(doc['comparison']))
            return 0 if doc['elastic'] and doc['static'] else 1
    except scen.ScenarioError as exc:
        print('evaluate: %s' % exc, file=sys.stderr)
        return 1
    summary = run(scenario, out, keep=args.keep, echo=echo)
    print(rec.format_summary(summary))
    return 0 if summary else 1
