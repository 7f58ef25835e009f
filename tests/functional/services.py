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
"""Real services for the functional tests: a Cassandra store node and a
RabbitMQ vhost. Each helper cleans up what it started.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

from elastman.cassandra import node as cassandra_node
from elastman.common import ports
from elastman.compute import local as local_driver
from elastman.evaluation import live

# A loopback address of this test session's own, so that concurrent test
# runs on one machine never share a store node.
STORE_ADDRESS = os.environ.get(
    'ELASTMAN_TEST_STORE_ADDRESS',
    '127.50.%d.%d' % ((os.getpid() >> 8) % 250, os.getpid() % 250 + 1))
RABBIT_PORT = 5672


port_open = ports.answers
free_port = ports.free


#: the store node writes its schema changes to the commit log only, not
#: to an sstable each (flushed as any table later, and on SIGTERM): each
#: test's keyspace was synced in 3.5-5 s on a busy 2-core host, now 0.7 s
NO_SCHEMA_FLUSH = '-Dcassandra.test.flush_local_schema_changes=false'


def start_store(conf) -> cassandra_node.LocalNode:
    """A fresh single Cassandra node in a temporary directory, with the JVM
    options of the tests' local servers (their ring delay, 5 s and not
    Cassandra's 30 s, which a lone seed waits through before it picks its
    tokens: 11 s to start instead of 40 s) and NO_SCHEMA_FLUSH.
    """
    base = tempfile.mkdtemp(prefix='elastman-store-')
    node = cassandra_node.LocalNode(conf, cassandra_node.NodeSpec(
        name='test-store', base_dir=base, address=STORE_ADDRESS,
        jmx_port=free_port(), cluster_name='elastman-test-store',
        jvm_opts=tuple(conf.local_cloud.jvm_options) + (NO_SCHEMA_FLUSH,)))
    node.start()
    try:
        node.wait_for_cql()
    except Exception:
        node.destroy()
        raise
    return node


class Rabbit:
    """A private vhost on a local RabbitMQ, started here if need be."""

    def __init__(self) -> None:
        self.vhost = 'elastman-test-%s' % uuid.uuid4().hex[:8]
        self.started_broker = False

    @property
    def url(self) -> str:
        return 'rabbit://guest:guest@127.0.0.1:%d/%s' % (RABBIT_PORT,
                                                         self.vhost)

    def start(self) -> None:
        if not port_open('127.0.0.1', RABBIT_PORT):
            server = shutil.which('rabbitmq-server')
            if server is None:
                raise RuntimeError('RabbitMQ is not installed: run '
                                   'tools/install.sh --rabbitmq')
            subprocess.run([server, '-detached'], check=True)
            self.started_broker = True
            wait_for(lambda: port_open('127.0.0.1', RABBIT_PORT),
                     timeout=120, interval=1)
        self._ctl('await_startup', timeout=120)
        self._ctl('add_vhost', self.vhost)
        self._ctl('set_permissions', '-p', self.vhost, 'guest', '.*', '.*',
                  '.*')

    def stop(self) -> None:
        self._ctl('delete_vhost', self.vhost, check=False)
        if self.started_broker:
            self._ctl('stop', check=False)

    @staticmethod
    def _ctl(*args, timeout: int = 60, check: bool = True) -> None:
        subprocess.run(['rabbitmqctl', '-q', *args], check=check,
                       timeout=timeout, stdout=subprocess.DEVNULL)


def write_config(path: str, **groups: dict) -> str:
    """Write an elastman.conf from {group: {option: value}}."""
    return live.write_config(path, groups)


def wait_for(predicate, timeout: float, interval: float = 0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = predicate()
        if result:
            return result
        time.sleep(interval)
    raise TimeoutError('condition not met within %ss' % timeout)


def delete_all(driver: local_driver.LocalDriver) -> None:
    """Delete every server of ``driver``, all at once (each stop waits for
    its node to drain, which one after another took 20 s for three).
    """
    servers = driver.list()
    if not servers:
        return
    with concurrent.futures.ThreadPoolExecutor(len(servers)) as pool:
        for done in [pool.submit(driver.delete, s.id) for s in servers]:
            done.result()


@contextlib.contextmanager
def local_cloud(conf, state_path: str, network: str, jmx_base: int,
                flavor: str, more: dict | None = None):
    """The local compute driver on a network and JMX ports of the test's
    own, with one flavour; ``more``: other overrides, {(option, group):
    value}. At the end every server it (or a child process sharing
    ``state_path``) made is deleted and the overrides are cleared.
    """
    overrides = {('state_path', None): state_path,
                 ('network', 'local_cloud'): network,
                 ('jmx_port_base', 'local_cloud'): jmx_base,
                 ('flavor', 'local_cloud'): [flavor]}
    overrides.update(more or {})
    for (name, group), value in overrides.items():
        conf.set_override(name, value, group)
    driver = local_driver.LocalDriver(conf)
    try:
        yield driver
    finally:
        delete_all(local_driver.LocalDriver(conf))
        for name, group in overrides:
            conf.clear_override(name, group)


class Process:
    """A child Python process (``python *args``) whose output (stdout and
    stderr) is collected as it comes.
    """

    def __init__(self, *args: str) -> None:
        self.popen = subprocess.Popen(
            [sys.executable, *args], stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.popen.stdout:
            self.lines.append(line)

    @property
    def output(self) -> str:
        return ''.join(self.lines)

    def wait_for_line(self, text: str, timeout: float = 60) -> None:
        """Wait until ``text`` is in the output (fails if the process ends
        without it).
        """
        wait_for(lambda: text in self.output
                 or self.popen.poll() is not None, timeout=timeout)
        assert text in self.output, self.output

    def terminate(self, timeout: float = 60) -> int:
        """SIGTERM, wait, and return the exit code."""
        self.popen.send_signal(signal.SIGTERM)
        self.popen.wait(timeout)
        self._reader.join(10)
        return self.popen.returncode

    def stop(self, timeout: float = 60) -> None:
        """SIGTERM if running, SIGKILL after ``timeout`` s."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(10)
        self._reader.join(10)

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait(10)


class PrivateRabbit:
    """A RabbitMQ node of this test's own (own node name, ports and
    directories) that the test may stop and start again without touching
    the machine's broker.
    """

    BIN = '/usr/lib/rabbitmq/bin'

    def __init__(self) -> None:
        self.name = 'elastman-%s@localhost' % uuid.uuid4().hex[:8]
        self.port = free_port()
        self.dist_port = free_port()
        self.base = tempfile.mkdtemp(prefix='elastman-rabbit-')
        shutil.chown(self.base, 'rabbitmq')

    @property
    def url(self) -> str:
        return 'rabbit://guest:guest@127.0.0.1:%d/' % self.port

    def _run(self, script: str, *args: str, timeout: int = 120,
             check: bool = True) -> subprocess.CompletedProcess:
        env = {'RABBITMQ_NODENAME': self.name,
               'RABBITMQ_NODE_PORT': str(self.port),
               'RABBITMQ_DIST_PORT': str(self.dist_port),
               'RABBITMQ_MNESIA_BASE': os.path.join(self.base, 'mnesia'),
               'RABBITMQ_LOG_BASE': os.path.join(self.base, 'log'),
               'RABBITMQ_ENABLED_PLUGINS_FILE': os.path.join(self.base,
                                                             'plugins'),
               'RABBITMQ_CONFIG_FILE': os.path.join(self.base, 'none'),
               'HOME': '/var/lib/rabbitmq'}
        command = ' '.join(['env'] + ['%s=%s' % kv for kv in env.items()]
                           + [os.path.join(self.BIN, script), *args])
        argv = ['/bin/sh', '-c', command]
        if os.geteuid() == 0:   # the broker runs as its own user
            argv = ['su', 'rabbitmq', '-s', '/bin/sh', '-c', command]
        return subprocess.run(argv, check=check, timeout=timeout,
                              cwd=self.base, capture_output=True, text=True)

    def start(self) -> None:
        if not os.path.exists(os.path.join(self.BIN, 'rabbitmq-server')):
            raise RuntimeError('RabbitMQ is not installed: run '
                               'tools/install.sh --rabbitmq')
        self._run('rabbitmq-server', '-detached')
        try:
            # the node registers with epmd a while after -detached returns
            wait_for(lambda: port_open('127.0.0.1', self.port) and self._run(
                'rabbitmqctl', '-n', self.name, 'await_startup', '--timeout',
                '60', check=False, timeout=90).returncode == 0,
                timeout=180, interval=2)
        except Exception:
            self.stop()
            raise

    def stop(self) -> None:
        self._run('rabbitmqctl', '-n', self.name, 'stop', check=False)
        wait_for(lambda: not port_open('127.0.0.1', self.port), timeout=60)

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.base, ignore_errors=True)
