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
"""[trustee] options: the Keystone user elastman acts as in a tenant's project.

When a project creates a cluster through an API behind Keystone, the API makes
a Keystone trust from the calling user to this user, scoped to the project,
and the actuator creates and deletes the cluster's servers with that trust:
in the project, under its quota (as Heat and Senlin do). The options are
keystoneauth's (``auth_type = password``, ``auth_url``, ``username``,
``password``, ``user_domain_name``, ...), without a project: the trust gives
the scope.
"""
from oslo_config import cfg

from elastman.conf import nova as nova_conf

GROUP = 'trustee'

trustee_opts = [
    cfg.ListOpt('delegated_roles', default=[],
                help='Roles the trust delegates. Empty: every role the '
                     'creating user has in the project.'),
]


def _group():
    return cfg.OptGroup(
        GROUP, title='Trustee',
        help='The user the actuator acts as in a tenant\'s project, through '
             'a trust each managed cluster holds.')


def register_opts(conf):
    nova_conf.register_auth_group(conf, _group(), trustee_opts)


def list_opts():
    return [(_group(), nova_conf.auth_group_opts(trustee_opts))]
