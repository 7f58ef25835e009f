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
"""[store] options: elastman's own Cassandra keyspace."""
from oslo_config import cfg

from elastman.conf import opts

store_group = cfg.OptGroup('store', title='State store options',
                           help='Where elastman keeps its state: a Cassandra '
                                'keyspace of its own.')

store_opts = [
    cfg.ListOpt('contact_points', default=['127.0.0.1'],
                help='Addresses of Cassandra nodes to bootstrap the driver '
                     'connection from.'),
    cfg.PortOpt('port', default=9042,
                help='CQL native transport port of the store nodes.'),
    cfg.StrOpt('keyspace', default='elastman',
               regex=r'^[A-Za-z][A-Za-z0-9_]{0,47}$',
               help='Keyspace holding elastman state (letters, digits and '
                    'underscores, starting with a letter).'),
    cfg.StrOpt('replication_strategy', default='SimpleStrategy',
               choices=['SimpleStrategy', 'NetworkTopologyStrategy'],
               help='Replication class of the keyspace, used when '
                    '"elastman-manage db sync" creates it.'),
    cfg.IntOpt('replication_factor', default=1, min=1,
               help='Replication factor for SimpleStrategy.'),
    cfg.DictOpt('datacenter_replication', default={},
                help='Per-datacenter replication for NetworkTopologyStrategy, '
                     'e.g. dc1:3,dc2:3.'),
    cfg.StrOpt('username', help='CQL user, when the store requires '
                                'authentication.'),
    cfg.StrOpt('password', secret=True, help='Password of the CQL user.'),
    cfg.FloatOpt('connect_timeout', default=5.0, min=0.1,
                 help='Seconds to wait for a connection to a store node.'),
    cfg.FloatOpt('request_timeout', default=10.0, min=0.1,
                 help='Seconds to wait for one CQL request.'),
    cfg.FloatOpt('reconnect_max_delay', default=30.0, min=1.0,
                 help='Longest wait, in seconds, between two attempts to '
                      'reconnect to a store node the driver saw go down '
                      '(the waits grow from 1 s): after a store restart the '
                      'workers are back within about this long.'),
    cfg.IntOpt('connect_retries', default=3, min=1,
               help='Attempts to connect to the store before giving up.'),
    cfg.IntOpt('page_size', default=500, min=1,
               help='Rows fetched per page when reading large results.'),
    cfg.IntOpt('concurrency', default=64, min=1,
               help='Requests a worker keeps in flight at once when it '
                    'reads or writes many rows of one kind (the latest '
                    'samples of a cluster\'s nodes, the capacity cells a '
                    'trainer round changed).'),
    cfg.IntOpt('sample_ttl', default=7 * 24 * 3600, min=60,
               help='Seconds a workload sample is kept before Cassandra '
                    'expires it.'),
    cfg.IntOpt('forecast_ttl', default=7 * 24 * 3600, min=60,
               help='Seconds a stored forecast is kept.'),
]


def register_opts(conf):
    opts.register_group(conf, store_group, store_opts)


def list_opts():
    return [(store_group, store_opts)]
