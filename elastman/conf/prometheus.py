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
"""[prometheus] options: the monitor's "prometheus" metrics source."""
from oslo_config import cfg

from elastman.conf import opts

prometheus_group = cfg.OptGroup(
    'prometheus', title='Prometheus metrics source',
    help='Where the monitor reads node metrics when [monitor] '
         'metrics_source is "prometheus": a Prometheus server that scrapes '
         'a JMX exporter on every Cassandra node with the rules of '
         'etc/elastman/jmx-exporter-cassandra.yaml.')

prometheus_opts = [
    cfg.URIOpt('url', default='http://127.0.0.1:9090',
               schemes=['http', 'https'],
               help='Base URL of the Prometheus server (its HTTP API is '
                    'under /api/v1).'),
    cfg.StrOpt('node_selector', default='instance=~"{address}:[0-9]+"',
               help='PromQL label matchers that pick one node\'s series. '
                    '{address} is the node\'s address (regex-escaped), '
                    '{node_id} its id, {cluster_id} its cluster\'s. The '
                    'default matches the "instance" label Prometheus gives '
                    'an exporter scraped at <node address>:<port>.'),
    cfg.FloatOpt('timeout', default=5.0, min=0.1,
                 help='Seconds one query may take.'),
    cfg.StrOpt('ca_file',
               help='CA bundle to verify an https url with (default: the '
                    'system\'s).'),
]


def register_opts(conf):
    opts.register_group(conf, prometheus_group, prometheus_opts)


def list_opts():
    return [(prometheus_group, prometheus_opts)]
