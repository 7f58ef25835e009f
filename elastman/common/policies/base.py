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
"""Base check strings: reader/member/admin personas with project scope."""
from oslo_policy import policy

ADMIN = 'role:admin'
PROJECT_READER = 'role:reader and project_id:%(project_id)s'
PROJECT_MEMBER = 'role:member and project_id:%(project_id)s'

RULE_ADMIN_API = 'rule:admin_api'
RULE_PROJECT_READER_OR_ADMIN = 'rule:project_reader_or_admin'
RULE_PROJECT_MEMBER_OR_ADMIN = 'rule:project_member_or_admin'

rules = [
    policy.RuleDefault('admin_api', ADMIN,
                       description='Cloud administrator.'),
    policy.RuleDefault('project_reader_or_admin',
                       '(%s) or %s' % (PROJECT_READER, ADMIN),
                       description='Reader of the owning project, or admin.'),
    policy.RuleDefault('project_member_or_admin',
                       '(%s) or %s' % (PROJECT_MEMBER, ADMIN),
                       description='Member of the owning project, or admin.'),
]


def list_rules():
    return rules
