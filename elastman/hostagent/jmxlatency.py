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
"""The latency signal at BALM's pace: Cassandra's read-latency histogram
polled over JMX every ``[hostagent] poll_interval``.

One JVM (``elastman/cassandra/java/CassandraJmx.java poll``, run in
source-file mode, so no build step) polls each watched node on a schedule of
its own and prints, per node and poll, the buckets that grew since the
previous poll: exactly the reads that completed in between. This side
timestamps each line as it arrives and hands ``(vm, t, {bucket: count})`` to
the controller, whose window then holds every read of the last
``[hostagent] window`` seconds, as BALM's monitor does.
"""
from __future__ import annotations

import json
import queue
import subprocess
import threading
import time

from oslo_log import log as logging

from elastman.cassandra import runtime

LOG = logging.getLogger(__name__)

#: seconds between two warnings about the same node's JMX
WARN_EVERY = 60.0


class JmxLatencyPoller:
    """Thread-safe owner of the poller JVM; restarts it when it died."""

    def __init__(self, java: str, period_s: float = 0.02,
                 user: str | None = None, password: str | None = None,
                 start_timeout: float = 120.0) -> None:
        self.java = java
        self.period_ms = max(1, int(round(period_s * 1000)))
        self.user = user
        self.password = password
        self.start_timeout = start_timeout
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self._watches: dict[str, tuple[str, int]] = {}
        self._queue: queue.Queue = queue.Queue(maxsize=100000)
        self._ready = threading.Event()
        self._warned: dict[str, float] = {}
        self.errors: dict[str, str] = {}
        self.lines = 0

    # watches ---------------------------------------------------------------
    def watch(self, vm: str, host: str, port: int) -> None:
        """Poll ``host:port`` for ``vm`` (again, if the endpoint changed)."""
        with self._lock:
            if self._watches.get(vm) == (host, int(port)) and self._alive():
                return
            self._watches[vm] = (host, int(port))
            self._send(self._watch_line(vm, host, int(port)))
        LOG.info('latency signal of %s: JMX %s:%s every %d ms', vm, host,
                 port, self.period_ms)

    def unwatch(self, vm: str) -> None:
        with self._lock:
            if self._watches.pop(vm, None) is not None and self._alive():
                self._send('UNWATCH\t%s' % vm)

    @property
    def watched(self) -> dict[str, tuple[str, int]]:
        with self._lock:
            return dict(self._watches)

    def _watch_line(self, vm: str, host: str, port: int) -> str:
        fields = ['WATCH', vm, host, str(port)]
        if self.user:
            fields += [self.user, self.password or '']
        return '\t'.join(fields)

    # samples ---------------------------------------------------------------
    def drain(self) -> list[tuple[str, float, dict[int, int]]]:
        """Every poll result received since the last call."""
        with self._lock:
            if self._watches and not self._alive():
                self._restart()
        out = []
        while True:
            try:
                out.append(self._queue.get_nowait())
            except queue.Empty:
                return out

    # the JVM -----------------------------------------------------------------
    def _alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _send(self, line: str) -> None:
        if not self._alive():
            self._restart()
            return          # _restart sends every watch
        try:
            self._proc.stdin.write(line + '\n')
            self._proc.stdin.flush()
        except OSError as exc:
            LOG.warning('latency poller gone (%s); restarting it', exc)
            self._restart()

    def _restart(self) -> None:
        """Start the JVM and send the period and every watch (lock held)."""
        self._stop_proc()
        self._ready.clear()
        argv = runtime.jmx_program(self.java, 'poll', [
            '-Xmx32m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1',
            '-Xshare:auto', '-Dsun.rmi.transport.tcp.responseTimeout=2000',
            '-Dsun.rmi.transport.connectionTimeout=2000'])
        try:
            self._proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, text=True, bufsize=1)
        except OSError as exc:
            LOG.error('cannot start the JMX latency poller (%s): %s',
                      self.java, exc)
            self._proc = None
            return
        threading.Thread(target=self._read, args=(self._proc,),
                         name='hostagent-latency-reader', daemon=True).start()
        lines = ['PERIOD\t%d' % self.period_ms] + [
            self._watch_line(vm, h, p) for vm, (h, p) in self._watches.items()]
        self._proc.stdin.write(''.join(line + '\n' for line in lines))
        self._proc.stdin.flush()
        LOG.info('JMX latency poller started (pid %d)', self._proc.pid)

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until the JVM answered (compiling the source takes seconds)."""
        return self._ready.wait(self.start_timeout if timeout is None
                                else timeout)

    def _read(self, proc: subprocess.Popen) -> None:
        for line in proc.stdout:
            t = time.monotonic()
            try:
                answer = json.loads(line)
            except ValueError:
                LOG.warning('latency poller said: %s', line.strip()[:200])
                continue
            vm = str(answer.get('id'))
            if vm == 'ready':
                self._ready.set()
                continue
            if not answer.get('ok'):
                self._error(vm, str(answer.get('error')))
                continue
            self.errors.pop(vm, None)
            self.lines += 1
            deltas = {int(i): int(c) for i, c in answer.get('d') or ()}
            try:
                self._queue.put_nowait((vm, t, deltas))
            except queue.Full:   # nobody drains: the controller is stopped
                pass

    def _error(self, vm: str, error: str) -> None:
        self.errors[vm] = error
        now = time.monotonic()
        if now - self._warned.get(vm, -WARN_EVERY) >= WARN_EVERY:
            self._warned[vm] = now
            LOG.warning('JMX latency of %s unavailable: %s', vm, error)

    def _stop_proc(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            try:
                proc.stdin.close()
            except OSError:
                pass
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)

    def close(self) -> None:
        with self._lock:
            self._watches.clear()
            self._stop_proc()
