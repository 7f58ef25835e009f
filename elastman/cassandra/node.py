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
"""A real Cassandra node run as a local process on a loopback address.

Used for elastman's own store on a laptop, for the functional tests, and by
the local compute driver, where each "server" is one such node.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import time

from oslo_log import log as logging

from elastman.cassandra import runtime
from elastman.common import exception
from elastman.common import files
from elastman.common import ports

LOG = logging.getLogger(__name__)

# JMX logins checked by Cassandra against its roles, as for CQL
_JAAS = """CassandraLogin {
  org.apache.cassandra.auth.CassandraLoginModule REQUIRED;
};
"""

_LOGBACK = """<configuration scan="false">
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>{log_dir}/system.log</file>
    <encoder><pattern>%-5level [%thread] %date{{ISO8601}} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE"/></root>
  <logger name="org.apache.cassandra" level="INFO"/>
</configuration>
"""


@dataclasses.dataclass
class NodeSpec:
    """Everything that makes one node distinct on this host."""

    name: str
    base_dir: str
    address: str = '127.0.0.1'
    cql_port: int = 9042
    storage_port: int = 7000
    jmx_port: int = 7199
    #: None: Cassandra's local-only JMX on 127.0.0.1:jmx_port. An address:
    #: the JVM's own JMX agent on address:jmx_port, reachable there (as on a
    #: VM, where nodetool runs from elsewhere), without authentication.
    jmx_address: str | None = None
    seeds: tuple[str, ...] = ()
    cluster_name: str = 'elastman'
    heap: str = '512M'
    num_tokens: int = 16
    extra_yaml: dict = dataclasses.field(default_factory=dict)
    jvm_opts: tuple[str, ...] = ()
    #: PasswordAuthenticator and CassandraAuthorizer for CQL, and JMX
    #: logins checked against the same roles (CassandraLoginModule)
    authentication: bool = False
    #: PKCS12 key store with the node's key and certificate chain; used by
    #: client_tls (CQL) and jmx_tls
    keystore: str | None = None
    keystore_password: str | None = dataclasses.field(default=None,
                                                      repr=False)
    client_tls: bool = False
    jmx_tls: bool = False

    @property
    def seed_list(self) -> str:
        seeds = self.seeds or (self.address,)
        return ','.join('%s:%d' % (s, self.storage_port) if ':' not in s
                        else s for s in seeds)


class LocalNode:
    """Start, wait for, stop and clean up one local Cassandra process."""

    def __init__(self, conf, spec: NodeSpec) -> None:
        self.conf = conf
        self.spec = spec
        self.process: subprocess.Popen | None = None
        # the node's files, all below its base directory
        self.conf_dir = os.path.join(spec.base_dir, 'conf')
        self.log_dir = os.path.join(spec.base_dir, 'logs')
        self.pid_file = os.path.join(spec.base_dir, 'cassandra.pid')
        self.spec_file = os.path.join(spec.base_dir, 'node.json')

    # configuration -------------------------------------------------------------
    def _yaml(self) -> str:
        data = os.path.join(self.spec.base_dir, 'data')
        settings = {
            'cluster_name': self.spec.cluster_name,
            'num_tokens': self.spec.num_tokens,
            'allocate_tokens_for_local_replication_factor': 3,
            'partitioner': 'org.apache.cassandra.dht.Murmur3Partitioner',
            'data_file_directories': [os.path.join(data, 'data')],
            'commitlog_directory': os.path.join(data, 'commitlog'),
            'saved_caches_directory': os.path.join(data, 'saved_caches'),
            'hints_directory': os.path.join(data, 'hints'),
            'cdc_raw_directory': os.path.join(data, 'cdc_raw'),
            'commitlog_sync': 'periodic',
            'commitlog_sync_period': '10000ms',
            'seed_provider': [{
                'class_name':
                    'org.apache.cassandra.locator.SimpleSeedProvider',
                'parameters': [{'seeds': self.spec.seed_list}]}],
            'listen_address': self.spec.address,
            'rpc_address': self.spec.address,
            'native_transport_port': self.spec.cql_port,
            'storage_port': self.spec.storage_port,
            'endpoint_snitch': 'SimpleSnitch',
            'start_native_transport': True,
            'auto_snapshot': False,
            'authenticator': 'AllowAllAuthenticator',
            'authorizer': 'AllowAllAuthorizer',
        }
        if self.spec.authentication:
            settings.update(authenticator='PasswordAuthenticator',
                            authorizer='CassandraAuthorizer',
                            role_manager='CassandraRoleManager')
        if self.spec.client_tls:
            settings['client_encryption_options'] = {
                'enabled': True, 'optional': False,
                'keystore': self._keystore(),
                'keystore_password': self.spec.keystore_password or '',
                'store_type': 'PKCS12', 'require_client_auth': False}
        settings.update(self.spec.extra_yaml)
        # JSON is a subset of YAML: no YAML writer needed for Cassandra.
        return '\n'.join('%s: %s' % (k, json.dumps(v))
                         for k, v in settings.items()) + '\n'

    def write_config(self) -> None:
        for path in (self.conf_dir, self.log_dir):
            os.makedirs(path, exist_ok=True)
        with open(os.path.join(self.conf_dir, 'cassandra.yaml'), 'w') as f:
            f.write(self._yaml())
        with open(os.path.join(self.conf_dir, 'logback.xml'), 'w') as f:
            f.write(_LOGBACK.format(log_dir=self.log_dir))
        if self.spec.authentication:
            with open(os.path.join(self.conf_dir, 'cassandra-jaas.config'),
                      'w') as f:
                f.write(_JAAS)
        # a driver in another process may read it while this one writes
        files.replace_json(self.spec_file, dataclasses.asdict(self.spec))

    def command(self) -> list[str]:
        heap = self.spec.heap
        return [
            runtime.java(self.conf), '-Xms' + heap, '-Xmx' + heap,
            '-Xss512k', '-XX:+UseG1GC', '-XX:+HeapDumpOnOutOfMemoryError',
            '-XX:HeapDumpPath=' + self.log_dir,
            *runtime.jdk17_flags(),
            '-Dcassandra.config=file://' + os.path.join(self.conf_dir,
                                                        'cassandra.yaml'),
            '-Dlogback.configurationFile=' + os.path.join(self.conf_dir,
                                                          'logback.xml'),
            '-Dcassandra.logdir=' + self.log_dir,
            '-Dcassandra.storagedir=' + os.path.join(self.spec.base_dir,
                                                     'data'),
            *self._jmx_options(),
            '-Dcassandra-foreground=yes',
            '-Dcassandra.skip_wait_for_gossip_to_settle=0',
            '-Dcassandra.superuser_setup_delay_ms=0',
            *self._jmx_security(),
            *self.spec.jvm_opts,
            '-cp', runtime.classpath(self.conf),
            'org.apache.cassandra.service.CassandraDaemon',
        ]

    def _jmx_options(self) -> list[str]:
        if not self.spec.jmx_address:
            return ['-Dcassandra.jmx.local.port=%d' % self.spec.jmx_port]
        prefix = '-Dcom.sun.management.jmxremote.'
        flags = [prefix + 'port=%d' % self.spec.jmx_port,
                 prefix + 'rmi.port=%d' % self.spec.jmx_port,
                 prefix + 'host=' + self.spec.jmx_address,
                 prefix + 'local.only=false',
                 '-Djava.rmi.server.hostname=' + self.spec.jmx_address]
        # _jmx_security turns these on when the spec asks for them
        if not self.spec.authentication:
            flags.append(prefix + 'authenticate=false')
        if not self.spec.jmx_tls:
            flags.append(prefix + 'ssl=false')
        return flags

    def _keystore(self) -> str:
        if not self.spec.keystore:
            raise exception.CassandraNodeError(
                node=self.spec.name, reason='TLS asked for, but no key store '
                                            'was given')
        return self.spec.keystore

    def _jmx_security(self) -> list[str]:
        """JVM flags: JMX logins against Cassandra's roles, JMX over TLS."""
        flags = []
        if self.spec.authentication:
            flags += [
                '-Dcom.sun.management.jmxremote.authenticate=true',
                '-Dcassandra.jmx.remote.login.config=CassandraLogin',
                '-Djava.security.auth.login.config=' + os.path.join(
                    self.conf_dir, 'cassandra-jaas.config')]
        if self.spec.jmx_tls:
            flags += [
                '-Dcom.sun.management.jmxremote.ssl=true',
                '-Dcom.sun.management.jmxremote.registry.ssl=true',
                '-Djavax.net.ssl.keyStore=' + self._keystore(),
                '-Djavax.net.ssl.keyStorePassword='
                + (self.spec.keystore_password or ''),
                '-Djavax.net.ssl.keyStoreType=PKCS12']
        return flags

    # lifecycle --------------------------------------------------------------
    def pid(self) -> int | None:
        """PID of the running node (also one started by another process)."""
        if self.process is not None and self.process.poll() is None:
            return self.process.pid
        try:
            with open(self.pid_file) as f:
                pid = int(f.read().strip())
        except (OSError, ValueError):
            return None
        return pid if _is_our_java(pid, self.conf_dir) else None

    def is_running(self) -> bool:
        return self.pid() is not None

    def start(self, cpu_wrapper: list[str] | None = None) -> int:
        """Start the process (detached in its own session); return its PID."""
        if self.is_running():
            raise exception.CassandraNodeError(
                node=self.spec.name, reason='already running (pid %s)'
                % self.pid())
        self.write_config()
        out = open(os.path.join(self.log_dir, 'stdout.log'), 'ab')
        self.process = subprocess.Popen(
            (cpu_wrapper or []) + self.command(), stdout=out,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            cwd=self.spec.base_dir, start_new_session=True)
        out.close()
        with open(self.pid_file, 'w') as f:
            f.write(str(self.process.pid))
        LOG.info('started Cassandra node %s on %s:%d (pid %d)',
                 self.spec.name, self.spec.address, self.spec.cql_port,
                 self.process.pid)
        return self.process.pid

    def wait_for_cql(self, timeout: float | None = None) -> None:
        """Block until the node accepts CQL connections, or fail clearly."""
        timeout = timeout or self.conf.cassandra.start_timeout
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.is_running():
                raise exception.CassandraNodeError(
                    node=self.spec.name,
                    reason='process exited during start-up; see %s'
                           % os.path.join(self.log_dir, 'system.log'))
            if ports.answers(self.spec.address, self.spec.cql_port):
                return
            time.sleep(1.0)
        raise exception.CassandraNodeError(
            node=self.spec.name, reason='no CQL on %s:%d after %ss'
            % (self.spec.address, self.spec.cql_port, timeout))

    def stop(self, timeout: float | None = None) -> None:
        """SIGTERM, wait, then SIGKILL; idempotent."""
        pid = self.pid()
        if pid is None:
            return
        timeout = timeout if timeout is not None \
            else self.conf.cassandra.stop_timeout
        _signal(pid, signal.SIGTERM)
        if not _wait_gone(pid, timeout, self.process):
            LOG.warning('node %s ignored SIGTERM for %ss, killing it',
                        self.spec.name, timeout)
            _signal(pid, signal.SIGKILL)
            _wait_gone(pid, 10, self.process)
        self.process = None
        try:
            os.unlink(self.pid_file)
        except FileNotFoundError:
            pass

    def kill(self) -> None:
        """SIGKILL at once, as a crash would."""
        pid = self.pid()
        if pid is not None:
            _signal(pid, signal.SIGKILL)
            _wait_gone(pid, 10, self.process)

    def destroy(self) -> None:
        """Stop the node and remove its directory."""
        self.stop()
        shutil.rmtree(self.spec.base_dir, ignore_errors=True)

    @classmethod
    def load(cls, conf, base_dir: str) -> 'LocalNode':
        """Re-attach to a node another process created in ``base_dir``."""
        with open(os.path.join(base_dir, 'node.json')) as f:
            data = json.load(f)
        data['seeds'] = tuple(data.get('seeds') or ())
        data['jvm_opts'] = tuple(data.get('jvm_opts') or ())
        return cls(conf, NodeSpec(**data))


def _is_our_java(pid: int, conf_dir: str) -> bool:
    """True if ``pid`` is alive and is the JVM using ``conf_dir``."""
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            cmdline = f.read().decode(errors='replace')
    except OSError:
        return False
    return conf_dir in cmdline and 'CassandraDaemon' in cmdline


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _wait_gone(pid: int, timeout: float, process=None) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None:
            if process.poll() is not None:
                return True
        elif not os.path.exists('/proc/%d' % pid):
            return True
        else:
            try:  # reap if it is our child after all
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    return True
            except ChildProcessError:
                pass
        time.sleep(0.2)
    return False
