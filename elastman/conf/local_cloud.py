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
"""[local_cloud] options: the ``local`` compute driver.

A local "server" is one Cassandra process on a loopback address; a flavour is
the CPU quota, heap and matching Cassandra settings given to that process.
"""
from oslo_config import cfg

from elastman.conf import opts

local_cloud_group = cfg.OptGroup(
    'local_cloud', title='Local compute driver',
    help='Runs each server of a managed cluster as a Cassandra process on '
         'this host (elastman without a cloud).')

DEFAULT_FLAVORS = [
    'tiny:cpu=0.5,heap=256M',
    'small:cpu=1,heap=512M',
    'medium:cpu=2,heap=1G',
]

local_cloud_opts = [
    cfg.MultiStrOpt(
        'flavor', default=DEFAULT_FLAVORS,
        help='A flavour, one option line each: "<name>:cpu=<CPUs>,'
             'heap=<size>[,concurrent_reads=N][,concurrent_writes=N]'
             '[,native_transport_max_threads=N]". cpu is a CFS quota in '
             'CPUs (0.5 = half a core; 0 = unlimited); heap is -Xms/-Xmx '
             '(e.g. 256M, 1G). Unset Cassandra settings are derived from cpu.'),
    cfg.StrOpt('network', default='127.0.60.0/24',
               help='Loopback network the servers get addresses from (one '
                    'address per server, lowest free first).'),
    cfg.PortOpt('cql_port', default=9042,
                help='CQL native transport port of every local server.'),
    cfg.PortOpt('storage_port', default=7000,
                help='Inter-node storage port (the same on every node of a '
                     'cluster, as Cassandra requires).'),
    cfg.PortOpt('jmx_port_base', default=17200,
                help='JMX port of a server is this plus the host part of '
                     'its address.'),
    cfg.IntOpt('num_tokens', default=16, min=1,
               help='Virtual nodes per server.'),
    cfg.IntOpt('max_seeds', default=2, min=1,
               help='A new server seeds from at most this many of its '
                    'cluster\'s oldest running servers.'),
    cfg.StrOpt('cgroup', default='auto',
               choices=['auto', 'v1', 'v2', 'none'],
               help='How CPU quotas are enforced: cgroup v1 (cpu controller, '
                    'cpu.cfs_quota_us), v2 (cpu.max), auto-detect, or none '
                    '(flavour CPU quotas are then ignored, with a warning).'),
    cfg.StrOpt('cgroup_root', default='',
               help='Mount point of the cpu controller; empty means '
                    '/sys/fs/cgroup/cpu for v1 and /sys/fs/cgroup for v2.'),
    cfg.StrOpt('cgroup_parent', default='elastman',
               help='Cgroup (below the root) holding one child per server.'),
    cfg.IntOpt('cpu_period_us', default=100000, min=1000, max=1000000,
               help='CFS period for the quotas, in microseconds.'),
    cfg.ListOpt('jvm_options', default=['-Dcassandra.ring_delay_ms=5000'],
                help='Extra JVM options of every local server.'),
    cfg.StrOpt('tls_keystore',
               help='PKCS12 key store with the key and certificate chain '
                    'every local server presents when its cluster asks for '
                    'TLS (server metadata cassandra_client_tls or '
                    'cassandra_jmx_tls), as an image would carry them. '
                    'Unset: such servers cannot be created.'),
    cfg.StrOpt('tls_keystore_password', secret=True,
               help='Password of [local_cloud] tls_keystore.'),
]


def register_opts(conf):
    opts.register_group(conf, local_cloud_group, local_cloud_opts)


def list_opts():
    return [(local_cloud_group, local_cloud_opts)]
