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
"""[cassandra] options: how elastman runs Cassandra processes on this host.

Used by the local store helper, the local compute driver and nodetool.
"""
import os

from oslo_config import cfg

from elastman.conf import opts

cassandra_group = cfg.OptGroup('cassandra', title='Local Cassandra runtime',
                               help='The JVM and jars used to run Cassandra '
                                    'nodes and nodetool on this host.')

cassandra_opts = [
    cfg.StrOpt('lib_dir',
               default=os.path.join('~', '.cache', 'elastman',
                                    'cassandra-5.0.6', 'lib'),
               help='Directory holding the cassandra-all jar and its '
                    'dependencies (tools/install.sh fills it).'),
    cfg.StrOpt('java', default='java',
               help='Java 17 (or newer) executable.'),
    cfg.StrOpt('default_heap', default='512M', regex=r'^[0-9]+[MG]$',
               help='Heap size (-Xms/-Xmx) of a node started without a '
                    'flavour, e.g. 512M or 1G.'),
    cfg.IntOpt('start_timeout', default=180, min=10,
               help='Seconds to wait for a started node to answer CQL.'),
    cfg.IntOpt('stop_timeout', default=60, min=1,
               help='Seconds to wait for a node to exit after SIGTERM '
                    'before it is killed.'),
    cfg.IntOpt('nodetool_timeout', default=120, min=5,
               help='Seconds a short nodetool command may take.'),
]


def register_opts(conf):
    opts.register_group(conf, cassandra_group, cassandra_opts)


def list_opts():
    return [(cassandra_group, cassandra_opts)]
