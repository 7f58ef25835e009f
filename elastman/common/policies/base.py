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
