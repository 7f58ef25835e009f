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
"""Policies of host agents and their interference reports (admin only)."""
from oslo_policy import policy

from elastman.common.policies import base

rules = [
    policy.DocumentedRuleDefault(
        name='elastman:host:list', check_str=base.RULE_ADMIN_API,
        description='List compute-host agents.',
        operations=[{'method': 'GET', 'path': '/v1/hosts'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name='elastman:host:get', check_str=base.RULE_ADMIN_API,
        description='Show a host agent and its interference reports.',
        operations=[{'method': 'GET', 'path': '/v1/hosts/{host}'},
                    {'method': 'GET', 'path': '/v1/hosts/{host}/reports'}],
        scope_types=['project']),
]


def list_rules():
    return rules
