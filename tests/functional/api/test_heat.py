"""Runs heat_cases.py (Heat's template machinery) in its own process
against this session's elastman API in noauth mode.
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
