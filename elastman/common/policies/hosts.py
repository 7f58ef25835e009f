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
