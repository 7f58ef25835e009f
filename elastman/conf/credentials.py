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
"""[credentials] options: how elastman keeps clusters' credentials."""
from oslo_config import cfg

from elastman.conf import opts

credentials_group = cfg.OptGroup(
    'credentials', title='Cluster credentials',
    help='The Cassandra credentials (CQL and JMX users and passwords, TLS '
         'settings) tenants give for their clusters are stored encrypted '
         'in the store; these options hold the keys.')

credentials_opts = [
    cfg.ListOpt('encryption_keys', default=[], secret=True,
                help='Fernet keys (32 url-safe base64-encoded bytes each, '
                     'as "elastman-manage credentials generate-key" prints) '
                     'that encrypt the clusters\' credentials. The first '
                     'encrypts; every key decrypts, so a new key goes first '
                     'and an old one stays until "elastman-manage '
                     'credentials rotate" has re-encrypted everything. The '
                     'same list on every elastman host. Empty: clusters '
                     'cannot be given credentials.'),
]


def register_opts(conf):
    opts.register_group(conf, credentials_group, credentials_opts)


def list_opts():
    return [(credentials_group, credentials_opts)]
