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
"""Policy defaults: personas per rule, and the checked-in sample is current."""
import os
import subprocess
import sys

from oslo_config import cfg
import pytest

from elastman.api import policy
from elastman.common import context
from elastman.common import policies

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


@pytest.fixture(scope='module')
def enforcer():
    conf = cfg.ConfigOpts()
    conf([], default_config_files=[])
    return policy.Enforcer(conf)


def _ctx(role, project='p1'):
    roles = {'reader': ['reader'], 'member': ['member', 'reader'],
             'admin': ['admin', 'member', 'reader']}[role]
    return context.RequestContext(project_id=project, roles=roles,
                                  user_id='u', overwrite=False)


@pytest.mark.parametrize('rule,role,own,allowed', [
    ('elastman:cluster:get', 'reader', True, True),
    ('elastman:cluster:get', 'reader', False, False),
    ('elastman:cluster:create', 'reader', True, False),
    ('elastman:cluster:create', 'member', True, True),
    ('elastman:cluster:delete', 'member', False, False),
    ('elastman:cluster:scale', 'admin', False, True),
    ('elastman:cluster:list_all_projects', 'member', True, False),
    ('elastman:cluster:list_all_projects', 'admin', True, True),
    ('elastman:host:list', 'member', True, False),
    ('elastman:host:get', 'admin', True, True),
])
def test_personas(enforcer, rule, role, own, allowed):
    target = {'project_id': 'p1' if own else 'p2'}
    assert enforcer.allowed(_ctx(role), rule, target) is allowed


def test_every_rule_is_documented():
    for rule in policies.list_rules():
        assert rule.description, rule.name


def test_sample_is_current(tmp_path):
    out = tmp_path / 'policy.yaml.sample'
    subprocess.run([sys.executable, '-c',
                    'import sys; from oslo_policy.generator import '
                    'generate_sample; sys.exit(generate_sample())',
                    '--namespace', 'elastman', '--output-file', str(out)],
                   check=True, cwd=ROOT)
    with open(os.path.join(ROOT, 'etc/elastman/policy.yaml.sample')) as f:
        assert out.read_text() == f.read(), (
            'run: oslopolicy-sample-generator --config-file '
            'etc/elastman/elastman-policy-generator.conf')
