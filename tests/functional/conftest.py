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
"""Session-wide real services: one Cassandra store node and one RabbitMQ vhost.

Each test gets a keyspace of its own where it needs isolation.
"""
import os
import uuid

from oslo_config import cfg
import pytest

from elastman.common import config as em_config
from elastman import store as em_store
from elastman.store import connection
from elastman.store import schema
from tests.functional import keystone as ks
from tests.functional import services

#: added to the local servers' JVM options in the tests: the JIT's C1
#: compiler only. On a 2-core host a node then boots in 20% less time with
#: 35% less CPU (tests/functional/compute/test_local_driver.py: 125 s against
#: 100 s, 108 s against 70 s of CPU), as no C2 compiler threads compete with
#: the other nodes and the tests; no test but test_real_capacity (which
#: turns it off) measures the JIT's peak throughput.
C1_ONLY = '-XX:TieredStopAtLevel=1'
#: also added: how often a node gossips its load, 10 s instead of 60 s. A
#: replacement (replace_address_first_boot) sleeps that long, or the ring
#: delay if longer, to be sure the node it replaces sends no more gossip;
#: the tests' dead nodes were killed (and seen DN) before it starts, and
#: each of test_self_healing's two replacements spent 60 s asleep there.
BROADCAST_10S = '-Dcassandra.broadcast_interval_ms=10000'


@pytest.fixture(scope='session')
def conf():
    conf = em_config.CONF
    conf([], project='elastman', default_config_files=[])
    conf.set_override('jvm_options', conf.local_cloud.jvm_options
                      + [C1_ONLY, BROADCAST_10S], 'local_cloud')
    return conf


@pytest.fixture(scope='session')
def store_node(conf):
    node = services.start_store(conf)
    yield node
    node.destroy()
    assert not os.path.exists(node.spec.base_dir)


@pytest.fixture(scope='session')
def rabbit():
    broker = services.Rabbit()
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(scope='session')
def keystone(tmp_path_factory):
    """A real Keystone for the session (about 20-30 s to start)."""
    server = ks.Keystone(str(tmp_path_factory.mktemp('keystone')))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def keyspace_conf(conf, store_node):
    """CONF pointed at the test store with a fresh keyspace."""
    assert store_node.is_running(), (
        'the session store node has died (an earlier test killed it?); '
        'its log: %s' % os.path.join(store_node.log_dir, 'system.log'))
    keyspace = 'test_%s' % uuid.uuid4().hex[:12]
    conf.set_override('contact_points', [store_node.spec.address], 'store')
    conf.set_override('port', store_node.spec.cql_port, 'store')
    conf.set_override('keyspace', keyspace, 'store')
    yield conf
    session = connection.connect(conf)
    # a schema change waits for the node: slow on a loaded machine
    session.execute('DROP KEYSPACE IF EXISTS %s' % keyspace, timeout=120)
    connection.close(session)
    conf.clear_override('keyspace', 'store')


@pytest.fixture
def store(keyspace_conf):
    session = connection.connect(keyspace_conf)
    schema.sync(session, keyspace_conf)
    connection.close(session)
    opened = em_store.Store.open(keyspace_conf)
    yield opened
    opened.close()


@pytest.fixture
def config_file(tmp_path, keyspace_conf, store_node):
    """Write a config file for a child process using the test store."""
    def make(**groups):
        groups.setdefault('DEFAULT', {})
        groups['DEFAULT'].setdefault('state_path', str(tmp_path / 'state'))
        store_opts = groups.setdefault('store', {})
        store_opts.setdefault('contact_points', store_node.spec.address)
        store_opts.setdefault('port', store_node.spec.cql_port)
        store_opts.setdefault('keyspace', keyspace_conf.store.keyspace)
        if 'local_cloud' in groups:
            groups['local_cloud'] = {
                'jvm_options': keyspace_conf.local_cloud.jvm_options,
                **groups['local_cloud']}
        return services.write_config(str(tmp_path / 'elastman.conf'),
                                     **groups)
    return make


def pytest_configure(config):
    cfg.CONF.reset()
