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
"""[DEFAULT] options shared by every elastman process."""
import socket

from oslo_config import cfg

service_opts = [
    cfg.StrOpt('host', default=socket.gethostname(),
               sample_default='<hostname>',
               help='Name of this host. Used as the RPC server name and as '
                    'the holder name in store leases.'),
    cfg.StrOpt('state_path', default='/var/lib/elastman',
               help='Directory where elastman keeps local state (pid files, '
                    'local cloud nodes, sockets).'),
    cfg.IntOpt('graceful_shutdown_timeout', default=30, min=0,
               help='Seconds a process waits for its workers to finish after '
                    'SIGTERM before exiting anyway.'),
]


def register_opts(conf):
    conf.register_opts(service_opts)


def list_opts():
    return [('DEFAULT', service_opts)]
