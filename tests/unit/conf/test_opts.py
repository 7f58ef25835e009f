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
"""Configuration options: documented, defaulted, and the sample up to date."""
import difflib
import os
import subprocess
import sys

from oslo_config import cfg

from elastman.conf import opts

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
GENERATOR_CONF = os.path.join(REPO, 'etc', 'elastman',
                              'elastman-config-generator.conf')
SAMPLE = os.path.join(REPO, 'etc', 'elastman', 'elastman.conf.sample')


def test_every_option_has_help_text():
    missing = ['[%s] %s' % (group, opt.name)
               for group, group_opts in opts.list_opts()
               for opt in group_opts if not (opt.help or '').strip()]
    assert missing == []


def test_every_module_is_listed_once():
    groups = [group for group, _ in opts.list_opts()]
    assert len(groups) == len(set(groups))
    for expected in ('DEFAULT', 'store', 'rpc', 'cassandra', 'api',
                     'monitor', 'trainer', 'predictor', 'actuator',
                     'hostagent'):
        assert expected in groups


def test_defaults_pass_their_own_validation():
    conf = cfg.ConfigOpts()
    for group, group_opts in opts.list_opts():
        conf.register_opts(group_opts, group=None if group == 'DEFAULT'
                           else group)
    conf([], project='elastman-test', default_config_files=[])
    for group, group_opts in opts.list_opts():
        section = conf if group == 'DEFAULT' else getattr(conf, group)
        for opt in group_opts:
            if opt.required and opt.default is None:
                continue  # e.g. [nova] auth-url: no default to check
            getattr(section, opt.dest)  # raises on an invalid default


def test_sample_config_is_up_to_date(tmp_path):
    generated = tmp_path / 'sample.conf'
    subprocess.run([sys.executable, '-m', 'oslo_config.generator',
                    '--config-file', GENERATOR_CONF,
                    '--output-file', str(generated)], check=True, cwd=REPO)
    with open(SAMPLE) as f:
        expected = f.read().splitlines()
    actual = generated.read_text().splitlines()
    diff = '\n'.join(difflib.unified_diff(expected, actual, 'checked-in',
                                          'generated', lineterm=''))
    assert not diff, ('etc/elastman/elastman.conf.sample is out of date; '
                      'run "tox -e genconfig":\n' + diff[:3000])
