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
"""Runs heat_cases.py (Heat's template machinery) in its own process
against the elastman API this test run starts in noauth mode.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def test_heat_resource(noauth_api):
    proc = subprocess.run(
        [sys.executable, '-m', 'pytest', '-q', '--noconftest', '-p',
         'no:cacheprovider',
         '-p', 'no:logging', os.path.join(HERE, 'heat_cases.py')],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env=dict(os.environ, ELASTMAN_TEST_API=noauth_api))
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]
    assert re.search(r'\b2 passed', proc.stdout), proc.stdout[-2000:]
