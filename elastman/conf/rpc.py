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
"""[rpc] options: how elastman workers find each other on the bus.

The transport itself is oslo.messaging's ``[DEFAULT] transport_url``.
"""
from oslo_config import cfg

from elastman.conf import opts

rpc_group = cfg.OptGroup('rpc', title='Message bus options',
                         help='Topics and timeouts of elastman RPC.')

rpc_opts = [
    cfg.StrOpt('topic_prefix', default='elastman',
               help='Prefix of every elastman RPC topic; a worker with an '
                    'RPC API (actuator, hostagent) listens on '
                    '<prefix>-<worker>.'),
    cfg.StrOpt('notification_topic', default='elastman_notifications',
               deprecated_name='sample_topic',
               help='Notification topic on which the host agents publish '
                    'their hostagent.interference and hostagent.escalation '
                    'events for the actuator.'),
    cfg.IntOpt('call_timeout', default=30, min=1,
               help='Seconds an RPC call waits for its reply.'),
]


def register_opts(conf):
    opts.register_group(conf, rpc_group, rpc_opts)


def list_opts():
    return [(rpc_group, rpc_opts)]
