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
"""[monitor] options of elastman-monitor."""
from oslo_config import cfg

from elastman.conf import opts

monitor_group = cfg.OptGroup('monitor', title='Monitor options',
                             help='How elastman samples managed Cassandra '
                                  'nodes.')

monitor_opts = [
    cfg.IntOpt('sampling_interval', default=60, min=1,
               help='Seconds between two workload/latency samples of a node.'),
    cfg.StrOpt('metrics_source', default='jmx',
               help='Where per-node rates, sizes and latency percentiles '
                    'are read: a driver of the elastman.monitor.sources '
                    'namespace. "jmx": Cassandra\'s metrics over JMX, '
                    'percentiles over exactly each interval; "prometheus": '
                    'a Prometheus server scraping the nodes\' JMX exporters '
                    '([prometheus] options). Either way, a node the source '
                    'cannot read is counted from the CQL virtual tables.'),
    cfg.FloatOpt('jmx_timeout', default=5.0, min=0.5,
                 help='Seconds one JMX query of a node may take before the '
                      'node counts as not answering this round.'),
    cfg.FloatOpt('cql_timeout', default=2.0, min=0.2,
                 help='Connect and request timeout of the per-node CQL '
                      'session (liveness check and fallback counters).'),
    cfg.IntOpt('probe_requests', default=5, min=1, max=50,
               help='Requests the monitor sends each node at once every '
                    'round through the node\'s CQL port, timed on the '
                    'monitor\'s side of the socket: the liveness check, '
                    'and the sample\'s probe_max_ms (the slowest; one that '
                    'times out counts as cql_timeout).'),
    cfg.ListOpt('excluded_keyspaces', default=[],
                help='Keyspaces whose traffic is not workload (besides '
                     'Cassandra\'s system keyspaces and elastman\'s own '
                     '[store] keyspace, which are always excluded).'),
    cfg.IntOpt('max_parallel', default=16, min=1,
               help='Nodes read at the same time.'),
    cfg.BoolOpt('use_leases', default=True,
                help='Sample a cluster only while holding its monitor lease, '
                     'so that several monitors split the clusters.'),
    cfg.BoolOpt('push_latency_to_hosts', default=True,
                help='Cast each sampled node\'s read p99 to the host agent '
                     'of its compute host (push_latency), the latency the '
                     'agents\' bus probe ([hostagent] probe = bus) protects. '
                     'Only nodes whose compute host is known (Nova servers '
                     'seen with admin rights) are fed.'),
    cfg.IntOpt('dead_after_missed', default=2, min=1,
               help='Samples in a row a node may miss (no answer) before '
                    'its live peers are asked whether it is dead; with '
                    'their confirmation (dead_confirmations) the node is '
                    'marked DEAD, at most this many sampling intervals '
                    'after it stopped answering.'),
    cfg.IntOpt('dead_confirmations', default=2, min=1,
               help='Live peers that must see a node DN in "nodetool '
                    'status" (and none see it up) before it is marked '
                    'DEAD; all live peers when fewer are left. A node with '
                    'no live peer is never marked DEAD.'),
    cfg.IntOpt('interference_max_age', default=120, min=1,
               help='Seconds after which the newest interference report of '
                    'a node\'s compute host is too old to go into the '
                    'node\'s sample (extra interference_index, the capacity '
                    'model\'s interference feature). Without a fresh report '
                    'the sample carries no index.'),
]


def register_opts(conf):
    opts.register_group(conf, monitor_group, monitor_opts)


def list_opts():
    return [(monitor_group, monitor_opts)]
