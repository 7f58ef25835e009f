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
"""The Nova lab (tools/nova-lab/lab.sh) as the functional tests start it:
real nova-api, conductor, scheduler, placement and fake computes.
"""
from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
LAB_SH = REPO / 'tools' / 'nova-lab' / 'lab.sh'


def require_installed() -> None:
    """Fail the test when tools/install.sh --nova has not been run."""
    cache = pathlib.Path(os.environ.get(
        'ELASTMAN_CACHE', pathlib.Path.home() / '.cache' / 'elastman'))
    venv = pathlib.Path(os.environ.get('ELASTMAN_NOVA_VENV',
                                       cache / 'nova-venv'))
    if not (venv / 'bin' / 'nova-compute').exists():
        pytest.fail('the Nova lab is not installed: run tools/install.sh '
                    '--nova (or tools/nova-lab/install.sh)')


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Lab:
    """One lab in ``lab_dir`` on the broker ``transport_url``; ``env``:
    more NOVA_LAB_* settings.
    """

    def __init__(self, lab_dir: pathlib.Path, transport_url: str,
                 hosts: tuple[str, ...], host_size: str, **env: str) -> None:
        self.lab_dir = pathlib.Path(lab_dir)
        self.env = dict(os.environ, NOVA_LAB_DIR=str(lab_dir),
                        NOVA_LAB_TRANSPORT_URL=transport_url,
                        NOVA_LAB_COMPUTES=' '.join(hosts),
                        NOVA_LAB_HOST_SIZE=host_size, **env)
        self.pids: list[int] = []

    def start(self, timeout: int) -> None:
        """Start every service; fails the test if the lab does not start."""
        result = subprocess.run([str(LAB_SH), 'start'], env=self.env,
                                capture_output=True, text=True,
                                timeout=timeout)
        print(result.stdout)
        if result.returncode:
            pytest.fail('nova lab did not start:\n%s\n%s'
                        % (result.stdout, result.stderr))
        self.pids = [int(p.read_text())
                     for p in (self.lab_dir / 'run').glob('*.pid')]

    def stop(self, timeout: int) -> list[int]:
        """Stop every service; returns the processes still alive."""
        subprocess.run([str(LAB_SH), 'stop'], env=self.env, timeout=timeout,
                       capture_output=True)
        return [p for p in self.pids if _alive(p)]
