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
"""Keyspace DDL from configuration."""
from oslo_config import cfg
import pytest

from elastman.common import exception
from elastman.conf import store as store_conf
from elastman.store import schema


@pytest.fixture
def conf():
    conf = cfg.ConfigOpts()
    store_conf.register_opts(conf)
    conf([], default_config_files=[])
    yield conf
    # OptGroup objects are shared between ConfigOpts instances, and so are
    # their overrides: leave nothing behind for the global CONF.
    conf.clear_override('replication_strategy', 'store')
    conf.clear_override('datacenter_replication', 'store')
    conf.clear_override('replication_factor', 'store')


def test_simple_strategy(conf):
    conf.set_override('replication_factor', 3, 'store')
    assert schema.keyspace_ddl(conf) == (
        "CREATE KEYSPACE IF NOT EXISTS elastman WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 3}")


def test_network_topology_strategy(conf):
    conf.set_override('replication_strategy', 'NetworkTopologyStrategy',
                      'store')
    conf.set_override('datacenter_replication', {'dc2': '2', 'dc1': '3'},
                      'store')
    assert schema.keyspace_ddl(conf).endswith(
        "{'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 2}")


@pytest.mark.parametrize('dcs', [{}, {'dc1': 'x'}, {'dc1': '0'}])
def test_network_topology_needs_valid_datacenters(conf, dcs):
    conf.set_override('replication_strategy', 'NetworkTopologyStrategy',
                      'store')
    conf.set_override('datacenter_replication', dcs, 'store')
    with pytest.raises(exception.ConfigurationError,
                       match='datacenter_replication'):
        schema.keyspace_ddl(conf)


def test_migrations_are_ordered_and_idempotent():
    versions = [m.version for m in schema.MIGRATIONS]
    assert versions == sorted(versions) == list(range(1, len(versions) + 1))
    for migration in schema.MIGRATIONS:
        for statement in migration.statements:
            assert 'IF NOT EXISTS' in statement
