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
"""The YCSB workload driver of the live evaluation.

Runs YCSB 0.17.0 (``site.ycsb.Client``) with elastman's Cassandra binding
(``tools/ycsb``, built by ``tools/install.sh --ycsb``) one phase at a time:
each phase has a target throughput (``-target``), a read/update mix and a
record size (``fieldcount`` x ``fieldlength``), as in OnlineElastMan, Table 3.1.
YCSB's periodic status lines (interval percentiles) and its final report
(throughput, per-operation latency percentiles) are parsed into per-phase
results that can be written as CSV and JSON.
"""
from __future__ import annotations

import csv
import dataclasses
import json
import os
import re
import subprocess
import threading
import time
from typing import Any, Callable, Iterable, Mapping

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

BINDING = 'org.openstack.elastman.ycsb.CassandraCqlClient'
DEFAULT_LIB_DIR = os.path.join('~', '.cache', 'elastman', 'ycsb', 'lib')
#: Operations whose results are kept (YCSB's section names).
OPERATIONS = ('READ', 'UPDATE', 'INSERT', 'SCAN', 'READ-MODIFY-WRITE',
              'DELETE')
RESULT_FIELDS = ('phase', 'mode', 'started', 'ended', 'duration_s', 'target',
                 'threads', 'read_proportion', 'update_proportion',
                 'fieldcount', 'fieldlength', 'record_bytes', 'throughput',
                 'operations', 'failures', 'read_ops', 'read_avg_ms',
                 'read_p95_ms', 'read_p99_ms', 'update_ops', 'update_avg_ms',
                 'update_p95_ms', 'update_p99_ms', 'insert_ops',
                 'insert_p99_ms', 'returncode')

_STATUS = re.compile(
    r'^(?P<date>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d+) (?P<sec>\d+) sec: '
    r'(?P<ops>\d+) operations;(?: (?P<rate>[\d.,]+) current ops/sec;)?')
_SECTION = re.compile(r'\[([A-Z][A-Z_\-]*): ([^\]]*)\]')
_SUMMARY = re.compile(r'^\[([^\]]+)\], ([^,]+), (.+)$')


class YcsbError(Exception):
    """YCSB could not be started or failed."""


#: The slowest pace of one throttled YCSB 0.17 thread, in ops/s. A thread
#: delays its first operation by a random part of its interval between
#: operations, in nanoseconds cast to an int: under about 0.47 ops/s that
#: interval is over 2^31 ns, the cast turns it negative, and every thread
#: dies at once ("bound must be positive"), so the phase runs no load.
MIN_THREAD_OPS = 0.5


@dataclasses.dataclass
class Phase:
    """One step of a workload schedule."""

    name: str
    duration_s: float
    target: float                     # ops/s over all threads (0: unthrottled)
    read_proportion: float = 0.95
    update_proportion: float = 0.05
    insert_proportion: float = 0.0
    fieldcount: int = 10
    fieldlength: int = 100
    threads: int = 16
    distribution: str = 'uniform'

    def __post_init__(self) -> None:
        total = (self.read_proportion + self.update_proportion
                 + self.insert_proportion)
        if min(self.read_proportion, self.update_proportion,
               self.insert_proportion) < 0 or total > 1.0 + 1e-9 or total <= 0:
            raise ValueError('phase %s: proportions must be >= 0 and sum to '
                             'at most 1 (got %.3f)' % (self.name, total))
        if self.duration_s <= 0 or self.target < 0:
            raise ValueError('phase %s: duration must be > 0 and target >= 0'
                             % self.name)
        if self.fieldcount < 1 or self.fieldlength < 1 or self.threads < 1:
            raise ValueError('phase %s: fieldcount, fieldlength and threads '
                             'must be >= 1' % self.name)

    @property
    def record_bytes(self) -> int:
        return self.fieldcount * self.fieldlength

    @property
    def client_threads(self) -> int:
        """The threads YCSB runs: ``threads``, or fewer for a target so
        low that each thread would fall under :data:`MIN_THREAD_OPS`.
        """
        if self.target <= 0:
            return self.threads
        return max(1, min(self.threads, int(self.target / MIN_THREAD_OPS)))


@dataclasses.dataclass
class Target:
    """Where YCSB sends its requests, and how."""

    hosts: list[str]
    port: int = 9042
    keyspace: str = 'ycsb'
    table: str = 'usertable'
    recordcount: int = 10000
    consistency: str = 'ONE'
    local_dc: str = 'datacenter1'
    replication_factor: int = 3
    request_timeout_ms: int = 10000
    lib_dir: str = DEFAULT_LIB_DIR
    java: str = 'java'
    heap: str = '256m'


# -- parsing ----------------------------------------------------------------

def _number(text: str) -> float | None:
    text = text.strip().replace(',', '')
    try:
        return float(text)
    except ValueError:
        return None


def parse_status_line(line: str) -> dict[str, Any] | None:
    """One of YCSB's ``-s`` status lines (``... 10 sec: 9980 operations;
    998 current ops/sec; ... [READ: Count=.., 99=.., ...] ...``).

    Returns ``{'elapsed_s', 'operations', 'ops_per_s', 'ops': {OP: {count,
    avg_us, p90_us, p99_us, max_us, ...}}}``; the percentiles are those of
    the interval since the previous status line. None for other lines.
    """
    m = _STATUS.match(line.strip())
    if m is None:
        return None
    ops: dict[str, dict[str, float]] = {}
    for name, body in _SECTION.findall(line):
        values = {}
        for part in body.split(', '):
            key, sep, raw = part.partition('=')
            value = _number(raw) if sep else None
            if value is None:
                continue
            key = key.strip()
            values[{'Count': 'count', 'Max': 'max_us', 'Min': 'min_us',
                    'Avg': 'avg_us'}.get(key, 'p%s_us' % key)] = value
        if 'count' in values:
            ops[name] = values
    rate = m.group('rate')
    return {'elapsed_s': int(m.group('sec')),
            'operations': int(m.group('ops')),
            'ops_per_s': _number(rate) if rate else 0.0,
            'ops': ops}


def parse_summary(text: str) -> dict[str, Any]:
    """YCSB's final report (``[SECTION], Metric, value`` lines).

    Returns ``{'runtime_ms', 'throughput', 'ops': {OP: {'operations',
    'avg_us', 'min_us', 'max_us', 'p95_us', 'p99_us', 'returns': {status:
    count}}}}``; ``-FAILED`` sections are kept under their own names.
    """
    out: dict[str, Any] = {'runtime_ms': None, 'throughput': None, 'ops': {}}
    for line in text.splitlines():
        m = _SUMMARY.match(line.strip())
        if m is None:
            continue
        section, metric, raw = m.group(1), m.group(2).strip(), m.group(3)
        value = _number(raw)
        if section == 'OVERALL':
            if metric.startswith('RunTime'):
                out['runtime_ms'] = value
            elif metric.startswith('Throughput'):
                out['throughput'] = value
            continue
        if section.startswith('TOTAL_G') or section in ('CLEANUP',):
            continue
        op = out['ops'].setdefault(section, {'returns': {}})
        if metric.startswith('Return='):
            op['returns'][metric[len('Return='):]] = int(value or 0)
        elif metric == 'Operations':
            op['operations'] = int(value or 0)
        elif metric.startswith('AverageLatency'):
            op['avg_us'] = value
        elif metric.startswith('MinLatency'):
            op['min_us'] = value
        elif metric.startswith('MaxLatency'):
            op['max_us'] = value
        else:
            pct = re.match(r'([\d.]+)thPercentileLatency', metric)
            if pct:
                key = pct.group(1).rstrip('0').rstrip('.') \
                    if '.' in pct.group(1) else pct.group(1)
                op['p%s_us' % key] = value
    return out


def failures(summary: Mapping[str, Any]) -> int:
    """Operations that did not return OK (or NOT_FOUND-free errors)."""
    bad = 0
    for name, op in summary.get('ops', {}).items():
        if name.endswith('-FAILED'):
            continue
        bad += sum(n for status, n in op.get('returns', {}).items()
                   if status not in ('OK',))
    return bad


# -- commands ---------------------------------------------------------------

def classpath(target: Target) -> str:
    lib = os.path.expanduser(target.lib_dir)
    if not os.path.isdir(lib) or not any(
            f.startswith('elastman-ycsb') for f in os.listdir(lib)):
        raise YcsbError('the YCSB driver is not built in %s: run '
                        'tools/install.sh --ycsb' % lib)
    return os.path.join(lib, '*')


def properties(target: Target, phase: Phase) -> dict[str, str]:
    """The YCSB properties of one phase."""
    scan = max(0.0, round(1.0 - phase.read_proportion
                          - phase.update_proportion
                          - phase.insert_proportion, 6))
    return {
        'workload': 'site.ycsb.workloads.CoreWorkload',
        'table': target.table,
        'recordcount': str(target.recordcount),
        # YCSB 0.17 treats 0 as "no operations": bound the count well above
        # what the phase can do and let maxexecutiontime end it
        'operationcount': str(max(phase.threads, int(
            phase.target * phase.duration_s * 2) if phase.target > 0
            else 2000000000)),
        'maxexecutiontime': str(int(round(phase.duration_s))),
        'fieldcount': str(phase.fieldcount),
        'fieldlength': str(phase.fieldlength),
        'readallfields': 'true',
        'writeallfields': 'true',
        'readproportion': '%g' % phase.read_proportion,
        'updateproportion': '%g' % phase.update_proportion,
        'insertproportion': '%g' % phase.insert_proportion,
        'scanproportion': '%g' % scan,
        'requestdistribution': phase.distribution,
        'insertorder': 'hashed',
        'measurementtype': 'hdrhistogram',
        'status.interval': '10',
        'cassandra.hosts': ','.join(target.hosts),
        'cassandra.port': str(target.port),
        'cassandra.keyspace': target.keyspace,
        'cassandra.localdc': target.local_dc,
        'cassandra.readconsistencylevel': target.consistency,
        'cassandra.writeconsistencylevel': target.consistency,
        'cassandra.requesttimeoutms': str(target.request_timeout_ms),
    }


def command(target: Target, phase: Phase, props_file: str,
            mode: str = 'run') -> list[str]:
    """The java command line of one phase (``mode``: ``run`` or ``load``)."""
    cmd = [target.java, '-Xmx%s' % target.heap,
           '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
           '-cp', classpath(target), 'site.ycsb.Client',
           '-load' if mode == 'load' else '-t', '-db', BINDING,
           '-P', props_file, '-threads', str(phase.client_threads), '-s']
    if phase.target > 0:
        cmd += ['-target', '%d' % int(round(phase.target))]
    return cmd


def write_properties(path: str, props: Mapping[str, str]) -> str:
    with open(path, 'w') as f:
        for key in sorted(props):
            f.write('%s=%s\n' % (key, props[key]))
    return path


# -- schema -----------------------------------------------------------------

def ensure_schema(target: Target, fieldcount: int) -> None:
    """Create the keyspace and the table (key + ``fieldcount`` blob columns)
    if they do not exist; add missing field columns if they do.
    """
    from cassandra.cluster import Cluster

    from cassandra.policies import RoundRobinPolicy

    cluster = Cluster(target.hosts, port=target.port, connect_timeout=15,
                      protocol_version=5,
                      load_balancing_policy=RoundRobinPolicy())
    try:
        session = cluster.connect()
        session.default_timeout = 60
        session.execute(
            "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = "
            "{'class': 'SimpleStrategy', 'replication_factor': %d}"
            % (target.keyspace, target.replication_factor))
        cols = ', '.join('field%d blob' % i for i in range(fieldcount))
        session.execute('CREATE TABLE IF NOT EXISTS %s.%s (y_id text PRIMARY '
                        'KEY, %s)' % (target.keyspace, target.table, cols))
        have = {r.column_name for r in session.execute(
            'SELECT column_name FROM system_schema.columns WHERE '
            'keyspace_name = %s AND table_name = %s',
            (target.keyspace, target.table))}
        for i in range(fieldcount):
            if 'field%d' % i not in have:
                session.execute('ALTER TABLE %s.%s ADD field%d blob'
                                % (target.keyspace, target.table, i))
    finally:
        cluster.shutdown()


# -- running ----------------------------------------------------------------

@dataclasses.dataclass
class PhaseResult:
    """What one YCSB run measured."""

    phase: Phase
    mode: str
    started: float
    ended: float
    returncode: int
    summary: dict[str, Any]
    intervals: list[dict[str, Any]]
    log_path: str | None = None

    def row(self) -> dict[str, Any]:
        """A flat record (milliseconds) for the CSV."""
        ops = self.summary.get('ops', {})

        def ms(op: str, key: str) -> float | None:
            v = ops.get(op, {}).get(key)
            return None if v is None else v / 1000.0

        p = self.phase
        row = {'phase': p.name, 'mode': self.mode,
               'started': round(self.started, 3),
               'ended': round(self.ended, 3),
               'duration_s': round(self.ended - self.started, 1),
               'target': p.target, 'threads': p.threads,
               'read_proportion': p.read_proportion,
               'update_proportion': p.update_proportion,
               'fieldcount': p.fieldcount, 'fieldlength': p.fieldlength,
               'record_bytes': p.record_bytes,
               'throughput': self.summary.get('throughput'),
               'operations': sum(o.get('operations', 0) for n, o in
                                 ops.items() if not n.endswith('-FAILED')),
               'failures': failures(self.summary),
               'returncode': self.returncode}
        for op in ('read', 'update', 'insert'):
            row['%s_ops' % op] = ops.get(op.upper(), {}).get('operations', 0)
            row['%s_p99_ms' % op] = ms(op.upper(), 'p99_us')
            if op != 'insert':
                row['%s_avg_ms' % op] = ms(op.upper(), 'avg_us')
                row['%s_p95_ms' % op] = ms(op.upper(), 'p95_us')
        return row


class Runner:
    """Runs phases one after another; :meth:`stop` kills the current one."""

    def __init__(self, target: Target, work_dir: str) -> None:
        self.target = target
        self.work_dir = work_dir
        self._proc: subprocess.Popen | None = None
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        os.makedirs(work_dir, exist_ok=True)

    def stop(self) -> None:
        """Stop the running phase (and every later one)."""
        self._stopped.set()
        with self._lock:
            proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def end_phase(self) -> None:
        """End the running phase now; the next one starts as planned."""
        with self._lock:
            proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.terminate()

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    def run(self, phase: Phase, mode: str = 'run',
            on_status: Callable[[Phase, float, dict], None] | None = None,
            extra: Mapping[str, str] | None = None) -> PhaseResult:
        """Run one phase to its end; ``on_status(phase, wall_time, status)``
        is called for every status line.
        """
        if self.stopped:
            raise YcsbError('the runner was stopped')
        props = properties(self.target, phase)
        if mode == 'load':
            props['maxexecutiontime'] = '0'
        props.update(extra or {})
        base = os.path.join(self.work_dir, '%s-%s' % (phase.name, mode))
        cmd = command(self.target, phase, write_properties(
            base + '.properties', props), mode)
        LOG.info('YCSB %s phase %s: target %s ops/s, %d threads, read %.2f '
                 'update %.2f, %d x %d B', mode, phase.name,
                 phase.target or 'max', phase.client_threads, phase.read_proportion,
                 phase.update_proportion, phase.fieldcount, phase.fieldlength)
        intervals: list[dict[str, Any]] = []
        started = time.time()
        with open(base + '.out', 'w') as out, open(base + '.log', 'w') as log:
            with self._lock:
                try:
                    self._proc = subprocess.Popen(
                        cmd, stdout=out, stderr=subprocess.PIPE, text=True,
                        start_new_session=True)
                except OSError as exc:
                    raise YcsbError('cannot run %s: %s' % (cmd[0], exc))
            proc = self._proc
            for line in proc.stderr:
                log.write(line)
                status = parse_status_line(line)
                if status is None:
                    continue
                status['wall'] = time.time()
                intervals.append(status)
                if on_status is not None:
                    try:
                        on_status(phase, status['wall'], status)
                    except Exception:
                        LOG.exception('status callback failed')
            code = proc.wait()
        with self._lock:
            self._proc = None
        with open(base + '.out') as f:
            summary = parse_summary(f.read())
        result = PhaseResult(phase, mode, started, time.time(), code, summary,
                             intervals, base + '.log')
        if code != 0 and not self.stopped:
            LOG.warning('YCSB %s phase %s exited with %d (see %s)', mode,
                        phase.name, code, base + '.log')
        return result

    def load(self, phase: Phase) -> PhaseResult:
        """Insert ``recordcount`` records (the phase gives size, threads and
        target).
        """
        ensure_schema(self.target, phase.fieldcount)
        return self.run(phase, mode='load')


def write_results(results: Iterable[PhaseResult], csv_path: str,
                  json_path: str | None = None) -> None:
    """Per-phase results as CSV (one row a phase) and, optionally, JSON
    (with the full parsed report and the status intervals).
    """
    results = list(results)
    with open(csv_path, 'w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=RESULT_FIELDS)
        writer.writeheader()
        for r in results:
            writer.writerow({k: ('' if v is None else v)
                             for k, v in r.row().items()})
    if json_path:
        with open(json_path, 'w') as f:
            json.dump([{'row': r.row(), 'phase': dataclasses.asdict(r.phase),
                        'summary': r.summary, 'intervals': r.intervals}
                       for r in results], f, indent=1, default=str)
