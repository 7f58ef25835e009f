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
"""A JMX client for Python: one long-lived JVM running the bridge.

The bridge (``elastman/cassandra/java/CassandraJmx.java bridge``, started
in source-file mode, so no build step) keeps one JMX connection per node (and
credentials) and serves requests concurrently; this side matches answers to
requests by id, so one slow node never holds up another. Credentials reach the
bridge on its standard input, never on a command line; a cluster's CA
certificate is sent once per bridge JVM before the first TLS request that
needs it.
"""
from __future__ import annotations

import base64
import concurrent.futures
import hashlib
import itertools
import json
import subprocess
import threading

from oslo_log import log as logging

from elastman.cassandra import access as access_mod
from elastman.cassandra import runtime
from elastman.common import exception

LOG = logging.getLogger(__name__)


class JmxError(exception.ElastmanException):
    msg_fmt = 'JMX %(where)s: %(reason)s'


class JmxAccessDenied(access_mod.AccessDenied, JmxError):
    """The node's JMX refused the credentials or the TLS handshake."""


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class JmxBridge:
    """Thread-safe; restarts the JVM if it died."""

    def __init__(self, conf, timeout: float | None = None) -> None:
        self.conf = conf
        self.timeout = timeout or conf.monitor.jmx_timeout
        self._proc: subprocess.Popen | None = None
        self._pending: dict[str, concurrent.futures.Future] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._ready = threading.Event()
        self._trusted: set[str] = set()     # CA digests sent to this JVM

    def start(self, timeout: float = 120.0) -> None:
        """Start the JVM now and wait until it has compiled and answers
        (the first start compiles the bridge source: seconds on a busy
        host, which must not count against a node's JMX timeout).
        """
        with self._lock:
            self._ensure()
        if not self._ready.wait(timeout):
            raise JmxError(where='bridge', reason='not ready after %ss'
                           % timeout)

    def _ensure(self) -> subprocess.Popen:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        ms = int(self.timeout * 1000)
        argv = runtime.jmx_program(runtime.java(self.conf), 'bridge', [
            '-Xmx64m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1',
            '-Dsun.rmi.transport.tcp.responseTimeout=%d' % ms,
            '-Dsun.rmi.transport.connectionTimeout=%d' % ms,
            '-Dsun.rmi.transport.proxy.connectTimeout=%d' % ms])
        self._ready.clear()
        self._trusted = set()
        self._proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, bufsize=1)
        threading.Thread(target=self._read, args=(self._proc,),
                         name='jmx-bridge-reader', daemon=True).start()
        LOG.info('JMX bridge started (pid %d)', self._proc.pid)
        return self._proc

    def _read(self, proc: subprocess.Popen) -> None:
        for line in proc.stdout:
            try:
                answer = json.loads(line)
            except ValueError:
                LOG.warning('JMX bridge said: %s', line.strip()[:200])
                continue
            if answer.get('id') == 'ready':
                self._ready.set()
                continue
            if str(answer.get('id')).startswith('trust-'):
                if not answer.get('ok'):
                    LOG.warning('JMX bridge cannot trust a CA certificate: %s',
                                answer.get('error'))
                continue
            with self._lock:
                future = self._pending.pop(str(answer.get('id')), None)
            if future is not None and not future.done():
                future.set_result(answer)
        with self._lock:
            pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(JmxError(where='bridge',
                                              reason='bridge exited'))

    def submit(self, host: str, port: int, pattern: str,
               attributes: tuple[str, ...] = (),
               operations: tuple[str, ...] = (),
               access: access_mod.Access | None = None
               ) -> concurrent.futures.Future:
        """Ask for every MBean matching ``pattern``; a Future of the answer.

        ``access`` gives the JMX credentials and whether to use TLS.
        """
        future: concurrent.futures.Future = concurrent.futures.Future()
        user = (access.jmx_user or '') if access else ''
        secret = (access.jmx_secret or '') if access and user else ''
        tls = bool(access and access.jmx_tls)
        with self._lock:
            proc = self._ensure()
            request_id = str(next(self._ids))
            self._pending[request_id] = future
            lines = []
            if tls and access.ca_certificate:
                digest = hashlib.sha256(
                    access.ca_certificate.encode()).hexdigest()
                if digest not in self._trusted:
                    self._trusted.add(digest)
                    lines.append('\t'.join(('trust-' + digest[:8], '-', '-',
                                            '-', 'TRUST',
                                            _b64(access.ca_certificate))))
            lines.append('\t'.join((
                request_id, host, str(port), str(int(self.timeout * 1000)),
                'QUERY', pattern, ','.join(attributes), ','.join(operations),
                _b64(user), _b64(secret), '1' if tls else '0')))
            try:
                proc.stdin.write(''.join(line + '\n' for line in lines))
                proc.stdin.flush()
            except OSError as exc:
                self._pending.pop(request_id, None)
                future.set_exception(JmxError(where='bridge',
                                              reason=str(exc)))
        future.where = '%s:%s' % (host, port)
        future.who = access_mod.who(access, jmx=True)
        return future

    def result(self, future: concurrent.futures.Future,
               timeout: float | None = None) -> list[dict]:
        """The MBeans of a submitted query, or JmxError."""
        where = getattr(future, 'where', '?')
        try:
            answer = future.result(timeout or self.timeout + 1)
        except concurrent.futures.TimeoutError:
            raise JmxError(where=where, reason='no answer within %ss'
                           % (timeout or self.timeout + 1))
        if not answer.get('ok'):
            error = answer.get('error') or 'unknown error'
            denied = access_mod.denial(Exception(error))
            if denied:
                raise JmxAccessDenied(service='JMX', where=where,
                                      who=getattr(future, 'who', '?'),
                                      reason=denied)
            raise JmxError(where=where, reason=error)
        return answer['result']

    def query(self, host: str, port: int, pattern: str,
              attributes: tuple[str, ...] = (),
              operations: tuple[str, ...] = (),
              access: access_mod.Access | None = None) -> list[dict]:
        return self.result(self.submit(host, port, pattern, attributes,
                                       operations, access=access))

    def close(self) -> None:
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.stdin.close()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
