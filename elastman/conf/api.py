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
"""[api] options of elastman-api."""
from oslo_config import cfg

from elastman.conf import opts

api_group = cfg.OptGroup('api', title='REST API options',
                         help='Options of the elastman-api service.')

api_opts = [
    cfg.HostAddressOpt('bind_host', default='127.0.0.1',
                       help='Address the API listens on.'),
    cfg.PortOpt('bind_port', default=9870,
                help='Port the API listens on.'),
    cfg.StrOpt('auth_strategy', default='keystone',
               choices=[('keystone', 'Validate tokens with keystonemiddleware'),
                        ('noauth', 'No authentication: every request is an '
                                   'admin of project "admin" (embedded use)')],
               help='How API requests are authenticated.'),
    cfg.IntOpt('max_limit', default=1000, min=1,
               help='Largest number of items one list request returns.'),
    cfg.StrOpt('marker_secret', secret=True,
               help='Key that signs the page markers the API hands out (so '
                    'that only markers it issued reach the store). The same '
                    'value on every API host behind one endpoint. Unset: a '
                    'random key kept in <state_path>/api-marker.key, made on '
                    'first use.'),
]


def register_opts(conf):
    opts.register_group(conf, api_group, api_opts)


def list_opts():
    return [(api_group, api_opts)]
