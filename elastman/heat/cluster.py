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
"""OS::Elastman::Cluster: a Cassandra cluster managed by elastman.

Heat loads this module from ``plugin_dirs`` and calls ``resource_mapping``.
Create, update and delete go through the elastman API with elastman's
client; the endpoint comes from the catalog (service type ``elastman``) or
``[clients_elastman] endpoint``.
"""
from __future__ import annotations

from heat.common import exception
from heat.common.i18n import _
from heat.engine import attributes
from heat.engine import constraints
from heat.engine import properties
from heat.engine import resource
from heat.engine import support
from keystoneauth1 import session as ks_session
from oslo_config import cfg
from oslo_log import log as logging

from elastman.client import client as em_client

LOG = logging.getLogger(__name__)

_opts = [
    cfg.StrOpt('endpoint',
               help='elastman API URL; default: the catalog entry of '
                    'service type elastman.'),
    cfg.BoolOpt('noauth', default=False,
                help='Call the API without a token (an API with '
                     '[api] auth_strategy = noauth).'),
]
cfg.CONF.register_opts(_opts, group='clients_elastman')

_TERMINAL = ('SUCCEEDED', 'FAILED', 'ROLLED_BACK')


def make_client(context) -> em_client.Client:
    """A client for the stack's user (its Keystone session)."""
    conf = cfg.CONF.clients_elastman
    session = (ks_session.Session() if conf.noauth
               else context.keystone_session)
    return em_client.Client(session=session, endpoint=conf.endpoint,
                            region_name=getattr(context, 'region_name', None))


class ElastmanCluster(resource.Resource):
    """A Cassandra cluster whose size elastman keeps at the SLO.

    Either register an existing cluster (``seeds``) or create one
    (``flavor``, ``image``, ``size``). ``policy`` is its scaling policy. A
    registered cluster has the size of its ring; ``size`` resizes it on
    update, as it does a created one.
    """

    support_status = support.SupportStatus(version='2024.2')
    default_client_name = None
    entity = 'cluster'

    PROPERTIES = (NAME, SEEDS, FLAVOR, IMAGE, SIZE, CQL_PORT, POLICY,
                  NETWORKS, SECURITY_GROUPS, AVAILABILITY_ZONE,
                  SERVER_GROUP_POLICY) = (
        'name', 'seeds', 'flavor', 'image', 'size', 'cql_port', 'policy',
        'networks', 'security_groups', 'availability_zone',
        'server_group_policy')

    _POLICY_KEYS = (SLO_METRIC, SLO_THRESHOLD, MIN_SIZE, MAX_SIZE, ALPHA,
                    BETA, CONTROL_PERIOD, COOLDOWN, DRY_RUN, FLAVORS, MODEL) = (
        'slo_metric', 'slo_threshold_ms', 'min_size', 'max_size', 'alpha',
        'beta', 'control_period_s', 'cooldown_s', 'dry_run', 'flavors',
        'model')

    ATTRIBUTES = (ENDPOINTS, SIZE_ATTR, STATE, NODES, PROJECT) = (
        'endpoints', 'size', 'state', 'nodes', 'project_id')

    _size = constraints.Range(min=1, max=1000)
    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, _('Cluster name (default: the physical '
                                        'resource name).'),
            update_allowed=True,
            constraints=[constraints.Length(min=1, max=255)]),
        SEEDS: properties.Schema(
            properties.Schema.LIST,
            _('Seed nodes (host or host:port) of an existing cluster to '
              'register.'),
            schema=properties.Schema(properties.Schema.STRING)),
        FLAVOR: properties.Schema(properties.Schema.STRING,
                                  _('Flavour of the nodes.')),
        IMAGE: properties.Schema(properties.Schema.STRING,
                                 _('Image of new nodes.')),
        SIZE: properties.Schema(
            properties.Schema.INTEGER,
            _('Nodes of a new cluster; an update resizes it (a registered '
              'one too).'),
            update_allowed=True, constraints=[_size]),
        CQL_PORT: properties.Schema(
            properties.Schema.INTEGER, _('CQL port.'),
            constraints=[constraints.Range(min=1, max=65535)]),
        NETWORKS: properties.Schema(
            properties.Schema.LIST,
            _('Networks (names or IDs) of new servers.'),
            schema=properties.Schema(properties.Schema.STRING)),
        SECURITY_GROUPS: properties.Schema(
            properties.Schema.LIST, _('Security groups of new servers.'),
            schema=properties.Schema(properties.Schema.STRING)),
        AVAILABILITY_ZONE: properties.Schema(
            properties.Schema.STRING,
            _('Availability zone of new servers.')),
        SERVER_GROUP_POLICY: properties.Schema(
            properties.Schema.STRING,
            _('Policy of the server group of the cluster\'s servers.'),
            constraints=[constraints.AllowedValues([
                'anti-affinity', 'soft-anti-affinity', 'affinity',
                'soft-affinity'])]),
        POLICY: properties.Schema(
            properties.Schema.MAP, _('Scaling policy (absent: no automatic '
                                     'scaling).'),
            update_allowed=True,
            schema={
                SLO_METRIC: properties.Schema(
                    properties.Schema.STRING, _('SLO latency metric.'),
                    constraints=[constraints.AllowedValues([
                        'read_p50_ms', 'read_p95_ms', 'read_p99_ms',
                        'write_p50_ms', 'write_p95_ms', 'write_p99_ms',
                        'read_with_queue_p99_ms'])]),
                SLO_THRESHOLD: properties.Schema(
                    properties.Schema.NUMBER, _('SLO threshold (ms).'),
                    constraints=[constraints.Range(min=0.001)]),
                MIN_SIZE: properties.Schema(properties.Schema.INTEGER,
                                            _('Fewest nodes.'),
                                            constraints=[_size]),
                MAX_SIZE: properties.Schema(properties.Schema.INTEGER,
                                            _('Most nodes.'),
                                            constraints=[_size]),
                ALPHA: properties.Schema(
                    properties.Schema.NUMBER,
                    _('Scale out when more than alpha VMs exceed capacity.'),
                    constraints=[constraints.Range(min=0)]),
                BETA: properties.Schema(
                    properties.Schema.NUMBER, _('Scale-in slack.'),
                    constraints=[constraints.Range(min=0)]),
                CONTROL_PERIOD: properties.Schema(
                    properties.Schema.INTEGER, _('Control period (s).'),
                    constraints=[constraints.Range(min=10, max=86400)]),
                COOLDOWN: properties.Schema(
                    properties.Schema.INTEGER, _('Cool-down (s).'),
                    constraints=[constraints.Range(min=0, max=86400)]),
                DRY_RUN: properties.Schema(properties.Schema.BOOLEAN,
                                           _('Decide but do not act.')),
                FLAVORS: properties.Schema(
                    properties.Schema.LIST, _('Flavours scaling may use.'),
                    schema=properties.Schema(properties.Schema.STRING)),
                MODEL: properties.Schema(properties.Schema.MAP,
                                         _('Capacity model parameters.')),
            }),
    }

    attributes_schema = {
        ENDPOINTS: attributes.Schema(_('CQL endpoints (host:port).'),
                                     type=attributes.Schema.LIST),
        SIZE_ATTR: attributes.Schema(_('Current number of nodes.'),
                                     type=attributes.Schema.INTEGER),
        STATE: attributes.Schema(_('Cluster state.'),
                                 type=attributes.Schema.STRING),
        NODES: attributes.Schema(_('Nodes with their states.'),
                                 type=attributes.Schema.LIST),
        PROJECT: attributes.Schema(_('Owning project.'),
                                   type=attributes.Schema.STRING),
    }

    # -- helpers -------------------------------------------------------------
    def client(self, name=None) -> em_client.Client:
        return make_client(self.context)

    def _policy(self) -> dict | None:
        policy = self.properties[self.POLICY]
        if policy is None:
            return None
        return {k: v for k, v in policy.items() if v is not None}

    def validate(self):
        super().validate()
        seeds = self.properties[self.SEEDS]
        new = [self.properties[p] is not None for p in (self.IMAGE,
                                                        self.SIZE)]
        if seeds and new[0]:
            raise exception.StackValidationFailed(message=_(
                'seeds (register) excludes image (create).'))
        if not seeds and not all(new + [self.properties[self.FLAVOR]
                                        is not None]):
            raise exception.StackValidationFailed(message=_(
                'give seeds to register a cluster, or flavor, image and '
                'size to create one.'))
        policy = self._policy() or {}
        low, high = policy.get(self.MIN_SIZE), policy.get(self.MAX_SIZE)
        if low is not None and high is not None and low > high:
            raise exception.StackValidationFailed(message=_(
                'policy min_size is larger than max_size.'))

    # -- lifecycle ---------------------------------------------------------------
    def handle_create(self):
        seeds = self.properties[self.SEEDS] or None
        cluster = self.client().create_cluster(
            self.properties[self.NAME] or self.physical_resource_name(),
            seeds=seeds,
            flavor=self.properties[self.FLAVOR],
            image=self.properties[self.IMAGE],
            size=None if seeds else self.properties[self.SIZE],
            cql_port=self.properties[self.CQL_PORT],
            networks=self.properties[self.NETWORKS] or None,
            security_groups=self.properties[self.SECURITY_GROUPS] or None,
            availability_zone=self.properties[self.AVAILABILITY_ZONE],
            server_group_policy=self.properties[self.SERVER_GROUP_POLICY],
            policy=self._policy())
        self.resource_id_set(cluster['id'])
        return cluster['id']

    def check_create_complete(self, cluster_id):
        cluster = self.client().get_cluster(cluster_id)
        if cluster['state'] == 'ERROR':
            raise exception.ResourceInError(
                resource_status=cluster['state'],
                status_reason=cluster.get('status_reason') or '')
        return cluster['state'] == 'ACTIVE'

    def handle_update(self, json_snippet, tmpl_diff, prop_diff):
        client = self.client()
        if self.NAME in prop_diff:
            name = prop_diff[self.NAME] or self.physical_resource_name()
            client.update_cluster(self.resource_id, name=name)
        if self.POLICY in prop_diff:
            policy = {k: v for k, v in (prop_diff[self.POLICY] or {}).items()
                      if v is not None}
            if policy:
                client.set_policy(self.resource_id, policy)
            else:
                try:
                    client.delete_policy(self.resource_id)
                except em_client.ClientError as exc:
                    if exc.code != 404:
                        raise
        if prop_diff.get(self.SIZE) is not None:
            action = client.scale_cluster(self.resource_id,
                                          prop_diff[self.SIZE])
            return action['id']
        return None

    def check_update_complete(self, action_id):
        if action_id is None:
            return True
        action = self.client().get_action(self.resource_id, action_id)
        if action['state'] in ('FAILED', 'ROLLED_BACK'):
            raise exception.ResourceInError(
                resource_status=action['state'],
                status_reason=action.get('reason') or '')
        return action['state'] == 'SUCCEEDED'

    def handle_delete(self):
        if self.resource_id is None:
            return None
        try:
            self.client().delete_cluster(self.resource_id)
        except em_client.ClientError as exc:
            if exc.code != 404:
                raise
        return self.resource_id

    def check_delete_complete(self, cluster_id):
        if cluster_id is None:
            return True
        try:
            self.client().get_cluster(cluster_id)
        except em_client.ClientError as exc:
            if exc.code == 404:
                return True
            raise
        return False

    def _resolve_attribute(self, name):
        if self.resource_id is None:
            return None
        cluster = self.client().get_cluster(self.resource_id)
        if name == self.NODES:
            return [{'id': n['id'], 'state': n['state'],
                     'address': n['address']} for n in cluster['nodes']]
        return {self.ENDPOINTS: cluster['endpoints'],
                self.SIZE_ATTR: cluster['size'],
                self.STATE: cluster['state'],
                self.PROJECT: cluster['project_id']}.get(name)


def resource_mapping():
    return {'OS::Elastman::Cluster': ElastmanCluster}
