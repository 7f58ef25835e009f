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
"""Policies of clusters and everything below /v1/clusters/{cluster_id}."""
from oslo_policy import policy

from elastman.common.policies import base

PREFIX = 'elastman:cluster:%s'


def _rule(name, check, method, path, description):
    return policy.DocumentedRuleDefault(
        name=PREFIX % name, check_str=check, description=description,
        operations=[{'method': method, 'path': path}],
        scope_types=['project'])


_C = '/v1/clusters/{cluster_id}'
READER = base.RULE_PROJECT_READER_OR_ADMIN
MEMBER = base.RULE_PROJECT_MEMBER_OR_ADMIN

rules = [
    _rule('list', READER, 'GET', '/v1/clusters',
          'List the clusters of the current project.'),
    _rule('list_all_projects', base.RULE_ADMIN_API, 'GET',
          '/v1/clusters?all_projects=true',
          'List the clusters of every project.'),
    _rule('create', MEMBER, 'POST', '/v1/clusters',
          'Register an existing Cassandra cluster or request a new one.'),
    _rule('get', READER, 'GET', _C, 'Show a cluster with its nodes.'),
    _rule('update', MEMBER, 'PATCH', _C, 'Rename a cluster.'),
    _rule('delete', MEMBER, 'DELETE', _C, 'Delete or unregister a cluster.'),
    _rule('scale', MEMBER, 'POST', _C + '/scale',
          'Request a manual resize of a cluster.'),
    _rule('credentials:set', MEMBER, 'PUT', _C + '/credentials',
          'Set the credentials and TLS settings elastman logs in to the '
          'cluster\'s nodes with.'),
    _rule('credentials:delete', MEMBER, 'DELETE', _C + '/credentials',
          'Remove the credentials and TLS settings of a cluster.'),
    _rule('policy:get', READER, 'GET', _C + '/policy',
          'Show the scaling policy of a cluster.'),
    _rule('policy:set', MEMBER, 'PUT', _C + '/policy',
          'Set the scaling policy of a cluster.'),
    _rule('policy:delete', MEMBER, 'DELETE', _C + '/policy',
          'Remove the scaling policy of a cluster (no automatic scaling).'),
    _rule('node:list', READER, 'GET', _C + '/nodes',
          'List the Cassandra nodes of a cluster.'),
    _rule('node:get', READER, 'GET', _C + '/nodes/{node_id}',
          'Show one Cassandra node.'),
    _rule('model:get', READER, 'GET', _C + '/models/{scope}/{key}',
          'Show a capacity model (per flavour or per VM).'),
    _rule('forecast:get', READER, 'GET', _C + '/forecasts/{metric}',
          'Show forecasts of a workload metric with forecaster weights.'),
    _rule('decision:list', READER, 'GET', _C + '/decisions',
          'List the decision records of the control loop.'),
    _rule('action:list', READER, 'GET', _C + '/actions',
          'List scaling actions.'),
    _rule('action:get', READER, 'GET', _C + '/actions/{action_id}',
          'Show one scaling action.'),
]


def list_rules():
    return rules
