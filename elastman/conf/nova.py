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
"""[nova] options: the ``nova`` compute driver (openstacksdk).

Authentication is either a cloud of ``clouds.yaml`` (``cloud``) or keystoneauth
options in this group (``auth_type``, ``auth_url``, ``username``, ...; the
session options ``cafile``, ``insecure``, ``timeout``, ... apply as well).
"""
import copy

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

GROUP = 'nova'


def _group():
    # A new OptGroup per registration: ConfigOpts copies a group shallowly,
    # so a shared one would share its options' overrides between instances.
    return cfg.OptGroup(
        GROUP, title='Nova compute driver',
        help='Creates and deletes the servers of managed clusters through the '
             'Compute API (compute driver "nova").')


nova_opts = [
    cfg.StrOpt('cloud', default='',
               help='Name of a cloud in clouds.yaml to take credentials, '
                    'region and endpoints from. Empty: use the keystoneauth '
                    'options of this group (auth_type, auth_url, ...).'),
    cfg.StrOpt('region_name', default='',
               help='Region of the Compute endpoint; empty takes the '
                    'catalogue\'s only one (or the cloud\'s).'),
    cfg.StrOpt('interface', default='public',
               choices=['public', 'internal', 'admin'],
               help='Endpoint interface to use from the service catalogue.'),
    cfg.URIOpt('endpoint_override', default=None,
               help='Compute endpoint to use instead of the catalogue\'s '
                    '(e.g. http://nova:8774/v2.1).'),
    cfg.StrOpt('api_microversion', default='2.79',
               help='Compute API microversion to request. 2.52 or later '
                    'is needed for server tags (listing a cluster\'s '
                    'servers on the server side); 2.37 or later for '
                    '"networks = none/auto".'),
    cfg.StrOpt('image', default='',
               help='Image (ID or name) servers boot from when the cluster '
                    'names none (a cluster created through the API always '
                    'names one).'),
    cfg.ListOpt('networks', default=['auto'],
                help='Networks of servers whose cluster names none: network '
                     'IDs (or names), or the single value "auto" (Nova '
                     'allocates one) or "none" (no network; testing only).'),
    cfg.StrOpt('key_name', default='',
               help='Key pair injected into servers whose cluster names '
                    'none; empty for none.'),
    cfg.ListOpt('security_groups', default=[],
                help='Security groups (names or IDs) of servers whose '
                     'cluster names none; empty leaves Nova\'s default.'),
    cfg.StrOpt('availability_zone', default='',
               help='Availability zone to boot in when the cluster names '
                    'none; empty lets the scheduler choose.'),
    cfg.StrOpt('server_group', default='',
               help='An existing server group (ID or name) the servers of '
                    'clusters that name no server group (or policy) boot '
                    'into. Overrides server_group_policy.'),
    cfg.StrOpt('server_group_policy', default='',
               choices=['', 'anti-affinity', 'soft-anti-affinity',
                        'affinity', 'soft-affinity'],
               help='When set (and server_group is not), each cluster that '
                    'names no server group (or policy) of its own gets a '
                    'server group "elastman-<cluster>" with this policy, '
                    'created on first use and deleted with the cluster; '
                    '"anti-affinity" keeps replicas on different hosts. '
                    'Empty: no server group.'),
    cfg.StrOpt('user_data_file', default='',
               help='cloud-init user data template for new servers, read at '
                    'each boot; ${name}, ${flavor}, ${cluster}, '
                    '${cluster_name}, ${seeds} (comma-separated seed '
                    'addresses, empty for the first node of a new cluster) '
                    'and ${replace_address} (the dead node a replacement '
                    'takes over, for cassandra.replace_address_first_boot; '
                    'empty otherwise; a template without it makes elastman '
                    'heal by removenode and a scale-out) are substituted. '
                    'etc/elastman/cassandra-user-data.yaml is one for an '
                    'image with Cassandra installed. The actuator may pass '
                    'user data of its own instead. Empty: no user data.'),
    cfg.StrOpt('user_data_seeds_key', default='elastman_seeds',
               help='Metadata key whose value gives ${seeds} when the caller '
                    'passes no seeds (it is not stored on the server).'),
    cfg.PortOpt('cql_port', default=9042,
                help='CQL port of the Cassandra node on every server.'),
    cfg.PortOpt('jmx_port', default=7199,
                help='JMX port of the Cassandra node on every server.'),
    cfg.IntOpt('boot_timeout', default=600, min=1,
               help='Seconds a new server may take to become ACTIVE when '
                    'the caller gives no timeout.'),
    cfg.IntOpt('delete_timeout', default=300, min=1,
               help='Seconds a deleted server may take to disappear when '
                    'the caller gives no timeout.'),
    cfg.FloatOpt('poll_interval', default=2.0, min=0.1,
                 help='Seconds between two status polls while waiting.'),
    cfg.IntOpt('api_retries', default=3, min=0,
               help='Retries of a Compute API call that failed with a '
                    'transient error: a connection failure for any call; '
                    'for reads and deletes also a timeout or HTTP 500, 502, '
                    '503, 504 (server creation is not repeated when the '
                    'request may have reached Nova).'),
    cfg.FloatOpt('api_retry_interval', default=1.0, min=0,
                 help='First wait before a retry, in seconds; doubles on '
                      'each retry (capped at 30 s).'),
]


def register_auth_group(conf, group: cfg.OptGroup, options: list) -> None:
    """Register ``group`` with ``options`` and keystoneauth's session and
    auth-plugin options (a group elastman authenticates with).
    """
    conf.register_group(group)
    conf.register_opts(options, group=group.name)
    ks_loading.register_session_conf_options(conf, group.name)
    ks_loading.register_auth_conf_options(conf, group.name)


def auth_group_opts(options: list) -> list:
    """``options`` and the keystoneauth options of such a group, for the
    sample configuration.
    """
    return (options + ks_loading.get_session_conf_options()
            + ks_loading.get_auth_common_conf_options() + password_opts())


def register_opts(conf):
    register_auth_group(conf, _group(), nova_opts)


def password_opts():
    """The password plugin's options, for the sample: keystoneauth marks
    auth-url required, yet a clouds.yaml cloud or another plugin needs none
    ([nova] and [trustee] both list them).
    """
    opts = copy.deepcopy(ks_loading.get_auth_plugin_conf_options('password'))
    for opt in opts:
        opt.required = False
    return opts


def list_opts():
    return [(_group(), auth_group_opts(nova_opts))]
