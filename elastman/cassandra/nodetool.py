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
"""nodetool as a library: the operations the actuator needs, parsed.

Each call runs ``org.apache.cassandra.tools.NodeTool`` from the same jars as
the nodes, against one node's JMX endpoint (local nodes listen on 127.0.0.1
at their own port; remote nodes need their JMX host and port). A failing
command raises :class:`elastman.common.exception.NodetoolError` carrying
nodetool's own error line; :class:`NodetoolAccessDenied` (one of them) when
the node refused the credentials or the TLS handshake. With an
:class:`~elastman.cassandra.access.Access`, the JMX password goes to
nodetool in a file only this process can read (never on its command line)
and JMX over TLS trusts the cluster's CA.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import subprocess
import tempfile
import threading
import time
from typing import Callable

from oslo_log import log as logging

from elastman.cassandra import access as access_mod
from elastman.cassandra import runtime
from elastman.cassandra import tokens
from elastman.common import exception

LOG = logging.getLogger(__name__)

_STATUS_LINE = re.compile(
    r'^(?P<status>[UD])(?P<state>[NLJM])\s+(?P<address>\S+)\s+'
    r'(?P<load>\?|[0-9.,]+\s*\S+)\s+(?P<tokens>\d+)\s+'
    r'(?P<owns>\?|[0-9.,]+%)\s+(?P<host_id>[0-9a-f-]{36})\s+(?P<rack>\S+)')
_UNITS = {'B': 1, 'bytes': 1, 'KiB': 1024, 'KB': 1024, 'MiB': 1024 ** 2,
          'MB': 1024 ** 2, 'GiB': 1024 ** 3, 'GB': 1024 ** 3,
          'TiB': 1024 ** 4, 'TB': 1024 ** 4}
_NO_REMOVAL = re.compile(r'^no (token )?removals in process', re.I)
_STREAM = re.compile(
    r'(?P<dir>Sending|Receiving) (?P<files>\d+) files, (?P<total>\d+) bytes '
    r'total\. Already (?:sent|received) (?P<done_files>\d+) files'
    r'(?: \([0-9.]+%\))?, (?P<done>\d+) bytes total')

ProgressCallback = Callable[[dict], None]


@dataclasses.dataclass
class NodeStatus:
    """One line of ``nodetool status``."""

    datacenter: str
    status: str          # U / D
    state: str           # N / L / J / M
    address: str
    load_bytes: int | None
    tokens: int
    owns: float | None   # percent, None when nodetool prints '?'
    host_id: str
    rack: str

    @property
    def code(self) -> str:
        """The two-letter code: UN, DN, UJ, UL, UM..."""
        return self.status + self.state

    @property
    def up_normal(self) -> bool:
        return self.code == 'UN'


def parse_size(text: str) -> int | None:
    text = text.strip()
    if text == '?':
        return None
    number, _, unit = text.partition(' ')
    return int(float(number.replace(',', '')) * _UNITS.get(unit.strip(), 1))


def parse_status(output: str) -> list[NodeStatus]:
    """Parse ``nodetool status`` into one NodeStatus per node."""
    nodes = []
    datacenter = ''
    for line in output.splitlines():
        if line.startswith('Datacenter:'):
            datacenter = line.split(':', 1)[1].strip()
            continue
        match = _STATUS_LINE.match(line.strip())
        if not match:
            continue
        owns = match['owns']
        nodes.append(NodeStatus(
            datacenter=datacenter, status=match['status'],
            state=match['state'], address=match['address'].split(':')[0],
            load_bytes=parse_size(match['load']),
            tokens=int(match['tokens']),
            owns=None if owns == '?' else float(owns.rstrip('%').replace(
                ',', '')),
            host_id=match['host_id'], rack=match['rack']))
    return nodes


def parse_netstats(output: str) -> dict:
    """Mode and streaming totals of ``nodetool netstats``."""
    mode = None
    sending = sent = receiving = received = 0
    for line in output.splitlines():
        line = line.strip()
        if line.startswith('Mode:'):
            mode = line.split(':', 1)[1].strip()
            continue
        match = _STREAM.search(line)
        if match:
            if match['dir'] == 'Sending':
                sending += int(match['total'])
                sent += int(match['done'])
            else:
                receiving += int(match['total'])
                received += int(match['done'])
    return {'mode': mode, 'bytes_to_send': sending, 'bytes_sent': sent,
            'bytes_to_receive': receiving, 'bytes_received': received}


def parse_removal_status(output: str) -> str | None:
    """The token removal in progress that ``nodetool removenode status``
    reports, or None when there is none ("RemovalStatus: No token removals
    in process.") or no RemovalStatus line at all.
    """
    found = None
    for line in output.splitlines():
        key, sep, value = line.strip().partition(':')
        if sep and key == 'RemovalStatus':
            found = value.strip()
    if not found or _NO_REMOVAL.search(found):
        return None
    return found


def parse_info(output: str) -> dict[str, str]:
    info = {}
    for line in output.splitlines():
        key, sep, value = line.partition(':')
        if sep and key.strip():
            info[key.strip()] = value.strip()
    return info


def error_message(output: str) -> str:
    """nodetool's own explanation, without the stack trace or the hint to
    read ``nodetool help``.
    """
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    for line in lines:
        if line.lower().startswith('error:'):
            return line.split(':', 1)[1].strip()
    kept = []
    for line in lines:
        if line.startswith('-- StackTrace --'):
            break
        if line.startswith("See 'nodetool help'"):
            continue
        kept.append(line)
    return (kept or lines or ['no output'])[-1]


class NodetoolAccessDenied(access_mod.AccessDenied, exception.NodetoolError):
    """The node's JMX refused nodetool's credentials or TLS handshake."""


class Nodetool:
    """nodetool against one node's JMX endpoint."""

    def __init__(self, conf, jmx_host: str = '127.0.0.1',
                 jmx_port: int = 7199, username: str | None = None,
                 password: str | None = None,
                 log_dir: str | None = None,
                 access: access_mod.Access | None = None) -> None:
        self.conf = conf
        self.jmx_host = jmx_host
        self.jmx_port = jmx_port
        self.access = access
        self.username = username or (access.jmx_user if access else None)
        self.password = password if username else (
            access.jmx_secret if access else None)
        self.log_dir = log_dir or os.path.join(tempfile.gettempdir(),
                                               'elastman-nodetool')
        os.makedirs(self.log_dir, exist_ok=True)

    @property
    def where(self) -> str:
        return '%s:%d' % (self.jmx_host, self.jmx_port)

    def command(self, *args: str, password_file: str | None = None
                ) -> list[str]:
        """nodetool's argv; the password goes in ``password_file`` (see
        :meth:`_password_file`), never on the command line.
        """
        jvm_flags = []
        if self.access is not None and self.access.jmx_tls:
            # what bin/nodetool's --ssl sets: NodeProbe reads ssl.enable
            jvm_flags.append('-Dssl.enable=true')
            if self.access.ca_certificate:
                store, secret = runtime.truststore(self.conf,
                                                   self.access.ca_certificate)
                jvm_flags += ['-Djavax.net.ssl.trustStore=' + store,
                              '-Djavax.net.ssl.trustStorePassword=' + secret,
                              '-Djavax.net.ssl.trustStoreType=PKCS12']
        argv = runtime.nodetool_command(self.conf, self.jmx_host,
                                        self.jmx_port, self.log_dir,
                                        jvm_flags=jvm_flags)
        if self.username:
            argv += ['-u', self.username]
            if password_file:
                argv += ['-pwf', password_file]
        return argv + list(args)

    @contextlib.contextmanager
    def _password_file(self):
        """A file only this user can read holding "user password", as
        nodetool's -pwf reads it; removed afterwards.
        """
        if not self.username:
            yield None
            return
        fd, path = tempfile.mkstemp(prefix='.jmx-', dir=self.log_dir)
        try:
            with os.fdopen(fd, 'w') as f:   # mkstemp: mode 0600
                f.write('%s %s\n' % (self.username, self.password or ''))
            yield path
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)

    def _error(self, command: str, output: str) -> exception.NodetoolError:
        reason = error_message(output)
        denied = access_mod.denial(Exception(output))
        if denied:
            return NodetoolAccessDenied(
                service='JMX (nodetool %s)' % command, where=self.where,
                who=access_mod.who(self.access, jmx=True) if self.access
                else ('user %r' % self.username if self.username
                      else 'the connection (no credentials)'),
                reason=denied)
        return exception.NodetoolError(command=command, node=self.where,
                                       reason=reason)

    def run(self, *args: str, timeout: float | None = None) -> str:
        """Run one command; its stdout, or NodetoolError."""
        timeout = timeout or self.conf.cassandra.nodetool_timeout
        try:
            with self._password_file() as secret:
                proc = subprocess.run(
                    self.command(*args, password_file=secret),
                    capture_output=True, text=True, timeout=timeout,
                    stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise exception.NodetoolError(
                command=' '.join(args), node=self.where,
                reason='no answer within %ss' % timeout)
        if proc.returncode != 0:
            raise self._error(' '.join(args), proc.stderr + '\n' + proc.stdout)
        return proc.stdout

    # queries ----------------------------------------------------------------
    def status(self, keyspace: str | None = None) -> list[NodeStatus]:
        return parse_status(self.run('status', *([keyspace] if keyspace
                                                 else [])))

    def info(self) -> dict[str, str]:
        return parse_info(self.run('info'))

    def ring_tokens(self) -> list[int]:
        """Every token of the ring (``nodetool ring``), sorted."""
        return tokens.parse_ring(self.run('ring'))

    def describe_cluster(self) -> dict[str, str]:
        """Name, Snitch and Partitioner of ``nodetool describecluster``."""
        out = {}
        for line in self.run('describecluster').splitlines():
            key, sep, value = line.strip().partition(':')
            if sep and key in ('Name', 'Snitch', 'Partitioner'):
                out[key.lower()] = value.strip()
        return out

    def netstats(self) -> dict:
        return parse_netstats(self.run('netstats'))

    def version(self) -> str:
        return self.run('version').split(':', 1)[-1].strip()

    # operations -------------------------------------------------------------
    def cleanup(self, keyspace: str | None = None, jobs: int = 1,
                timeout: float = 3600) -> None:
        """Drop data this node no longer owns (after a node joined)."""
        args = ['cleanup', '-j', str(jobs)] + ([keyspace] if keyspace else [])
        self.run(*args, timeout=timeout)

    def drain(self, timeout: float = 600) -> None:
        """Flush and stop accepting writes (before a stop)."""
        self.run('drain', timeout=timeout)

    def removenode(self, host_id: str, force: bool = False,
                   timeout: float = 3600) -> None:
        """Remove a dead node by host id (``force`` ends a stuck removal)."""
        self.run('removenode', 'force' if force else host_id,
                 timeout=timeout)

    def removenode_status(self) -> str | None:
        """The token removal in progress (None: none is)."""
        return parse_removal_status(self.run('removenode', 'status'))

    def decommission(self, progress: ProgressCallback | None = None,
                     poll_interval: float = 5.0, timeout: float = 3600,
                     force: bool = False) -> None:
        """Stream this node's data away and leave the ring; block until done.

        ``progress`` is called with netstats' mode and streaming totals
        every ``poll_interval`` seconds while the node leaves, and once with
        mode DECOMMISSIONED at the end.
        """
        start = time.monotonic()
        output: dict[str, str] = {}
        with self._password_file() as secret:   # kept until nodetool exits
            argv = self.command('decommission',
                                *(['--force'] if force else []),
                                password_file=secret)
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True,
                                    stdin=subprocess.DEVNULL)
            reader = threading.Thread(target=lambda: output.update(zip(
                ('out', 'err'), proc.communicate())), daemon=True)
            reader.start()
            while reader.is_alive():
                reader.join(poll_interval)
                if not reader.is_alive():
                    break
                elapsed = time.monotonic() - start
                if elapsed > timeout:
                    proc.kill()
                    reader.join(10)
                    raise exception.NodetoolError(
                        command='decommission', node=self.where,
                        reason='still leaving after %ss' % timeout)
                if progress is not None:
                    try:
                        state = self.netstats()
                    except exception.NodetoolError as exc:
                        state = {'mode': None, 'error': str(exc)}
                    state['elapsed_s'] = round(elapsed, 1)
                    progress(state)
        if proc.returncode != 0:
            raise self._error('decommission', output.get('err', '') + '\n'
                              + output.get('out', ''))
        LOG.info('node at %s decommissioned in %.0fs', self.where,
                 time.monotonic() - start)
        if progress is not None:
            progress({'mode': 'DECOMMISSIONED', 'bytes_to_send': 0,
                      'bytes_sent': 0, 'bytes_to_receive': 0,
                      'bytes_received': 0,
                      'elapsed_s': round(time.monotonic() - start, 1)})

    def wait_decommissioned(self, progress: ProgressCallback | None = None,
                            poll_interval: float = 5.0,
                            timeout: float = 3600) -> None:
        """Block until a decommission started earlier (by a process that has
        since died) completes; Cassandra refuses a second one meanwhile.

        Raises NodetoolError when the node reports DECOMMISSION_FAILED or
        NORMAL (it stopped leaving) or is still leaving after ``timeout``.
        """
        start = time.monotonic()
        while True:
            state = self.netstats()
            state['elapsed_s'] = round(time.monotonic() - start, 1)
            if progress is not None:
                progress(state)
            mode = state.get('mode')
            if mode == 'DECOMMISSIONED':
                return
            if mode != 'LEAVING':
                raise exception.NodetoolError(
                    command='decommission', node=self.where,
                    reason='stopped leaving (mode %s)' % mode)
            if state['elapsed_s'] > timeout:
                raise exception.NodetoolError(
                    command='decommission', node=self.where,
                    reason='still leaving after %ss' % timeout)
            time.sleep(poll_interval)
