"""Real services for the functional tests: a Cassandra store node and a
RabbitMQ vhost. Each helper cleans up what it started."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid

from elastman.cassandra import node as cassandra_node

# A loopback address of this test session's own, so that concurrent test
# runs on one machine never share a store node.
STORE_ADDRESS = os.environ.get(
    'ELASTMAN_TEST_STORE_ADDRESS',
    '127.50.%d.%d' % ((os.getpid() >> 8) % 250, os.getpid() % 250 + 1))
RABBIT_PORT = 5672


def port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def start_store(conf) -> cassandra_node.LocalNode:
    """A fresh single Cassandra node in a temporary directory."""
    base = tempfile.mkdtemp(prefix='elastman-store-')
    node = cassandra_node.LocalNode(conf, cassandra_node.NodeSpec(
        name='test-store', base_dir=base, address=STORE_ADDRESS,
        jmx_port=free_port(), cluster_name='elastman-test-store'))
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
    with open(path, 'w') as f:
        for group, options in groups.items():
            f.write('[%s]\n' % group)
            for key, value in options.items():
                if isinstance(value, (list, tuple)):
                    value = ','.join(map(str, value))
                f.write('%s = %s\n' % (key, value))
    return path


def wait_for(predicate, timeout: float, interval: float = 0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = predicate()
        if result:
            return result
        time.sleep(interval)
    raise TimeoutError('condition not met within %ss' % timeout)
