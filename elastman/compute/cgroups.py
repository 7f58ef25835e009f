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
"""CPU quotas for local servers through cgroup v1 (cpu controller) or v2.

v1: ``<root>/<parent>/<name>/cpu.cfs_quota_us`` + ``cpu.cfs_period_us``.
v2: ``<root>/<parent>/<name>/cpu.max`` ("<quota> <period>"), after enabling
the cpu controller in the ancestors' ``cgroup.subtree_control``.
A process joins by writing its PID to ``cgroup.procs``.
"""
from __future__ import annotations

import errno
import os
import signal
import time

from oslo_log import log as logging

from elastman.common import exception

LOG = logging.getLogger(__name__)

V1_ROOT = '/sys/fs/cgroup/cpu'
V2_ROOT = '/sys/fs/cgroup'


class CgroupError(exception.ElastmanException):
    msg_fmt = 'CPU quota: %(reason)s'


def _writable(path: str) -> bool:
    return os.path.isdir(path) and os.access(path, os.W_OK)


def detect(mode: str = 'auto', root: str = '') -> tuple[str, str]:
    """Return (version, root) for ``mode`` ('auto', 'v1', 'v2', 'none').

    CgroupError names what was tried when no usable hierarchy is writable.
    """
    if mode == 'none':
        return 'none', ''
    tried = []
    candidates = []
    if mode in ('auto', 'v1'):
        candidates.append(('v1', root or V1_ROOT))
    if mode in ('auto', 'v2'):
        candidates.append(('v2', root or V2_ROOT))
    for version, path in candidates:
        marker = 'cpu.cfs_quota_us' if version == 'v1' else \
            'cgroup.controllers'
        if not os.path.exists(os.path.join(path, marker)):
            tried.append('%s at %s: no %s' % (version, path, marker))
            continue
        if version == 'v2':
            with open(os.path.join(path, 'cgroup.controllers')) as f:
                if 'cpu' not in f.read().split():
                    tried.append('v2 at %s: cpu controller not available'
                                 % path)
                    continue
        if not _writable(path):
            tried.append('%s at %s: not writable (run as root or delegate '
                         'the subtree)' % (version, path))
            continue
        return version, path
    raise CgroupError(reason='no writable cgroup hierarchy with a cpu '
                      'controller (%s); set [local_cloud] cgroup = none to '
                      'run servers without CPU quotas' % '; '.join(tried))


class CpuCgroup:
    """One server's cgroup: create with a quota, attach, remove."""

    def __init__(self, version: str, root: str, parent: str,
                 name: str) -> None:
        self.version = version
        self.root = root
        self.parent = parent
        self.name = name

    @property
    def path(self) -> str:
        return os.path.join(self.root, self.parent, self.name)

    def exists(self) -> bool:
        return os.path.isdir(self.path)

    def create(self, cpus: float, period_us: int = 100000) -> None:
        """Create the cgroup with a quota of ``cpus`` (0 = unlimited)."""
        try:
            if self.version == 'v2':
                self._enable_v2_controller()
            os.makedirs(self.path, exist_ok=True)
            self.set_quota(cpus, period_us)
        except OSError as exc:
            raise CgroupError(reason='cannot set up %s: %s' % (self.path,
                                                               exc))

    def set_quota(self, cpus: float, period_us: int = 100000) -> None:
        quota = int(round(cpus * period_us)) if cpus else -1
        if self.version == 'v1':
            _write(os.path.join(self.path, 'cpu.cfs_period_us'), period_us)
            _write(os.path.join(self.path, 'cpu.cfs_quota_us'), quota)
        else:
            _write(os.path.join(self.path, 'cpu.max'), '%s %d' % (
                quota if quota > 0 else 'max', period_us))

    def quota(self) -> float | None:
        """The configured quota in CPUs, None when unlimited."""
        if self.version == 'v1':
            quota = int(_read(os.path.join(self.path, 'cpu.cfs_quota_us')))
            period = int(_read(os.path.join(self.path, 'cpu.cfs_period_us')))
        else:
            q, p = _read(os.path.join(self.path, 'cpu.max')).split()
            if q == 'max':
                return None
            quota, period = int(q), int(p)
        return None if quota < 0 else quota / period

    def _enable_v2_controller(self) -> None:
        parent = os.path.join(self.root, self.parent)
        os.makedirs(parent, exist_ok=True)
        for path in (self.root, parent):
            control = os.path.join(path, 'cgroup.subtree_control')
            current = _read(control).split() if os.path.exists(control) \
                else []
            if 'cpu' not in current:
                _write(control, '+cpu')

    def wrapper(self) -> list[str]:
        """argv prefix that moves the process into the cgroup, then execs."""
        procs = os.path.join(self.path, 'cgroup.procs')
        return ['/bin/sh', '-c', 'echo $$ > "%s" && exec "$@"' % procs,
                'elastman-cgroup']

    def attach(self, pid: int) -> None:
        _write(os.path.join(self.path, 'cgroup.procs'), pid)

    def pids(self) -> list[int]:
        try:
            return [int(p) for p in _read(os.path.join(
                self.path, 'cgroup.procs')).split()]
        except FileNotFoundError:
            return []

    def stats(self) -> dict[str, int]:
        """cpu.stat as a dict (throttling counters)."""
        try:
            text = _read(os.path.join(self.path, 'cpu.stat'))
        except FileNotFoundError:
            return {}
        out = {}
        for line in text.splitlines():
            key, _, value = line.partition(' ')
            if value.strip().isdigit():
                out[key] = int(value)
        return out

    def remove(self, timeout: float = 10.0) -> None:
        """Kill what is left inside, then remove the cgroup; idempotent."""
        if not self.exists():
            return
        deadline = time.monotonic() + timeout
        while True:
            pids = self.pids()
            if not pids:
                break
            for pid in pids:
                LOG.warning('killing leftover pid %d in cgroup %s', pid,
                            self.path)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if time.monotonic() > deadline:
                raise CgroupError(reason='processes %s stay in %s'
                                  % (pids, self.path))
            time.sleep(0.2)
        while True:
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError as exc:
                # A fake tree (tests) holds files; a real cgroup is busy for
                # a moment after its last task exited.
                if exc.errno == errno.ENOTEMPTY and not _is_cgroupfs(
                        self.path):
                    _remove_tree(self.path)
                    return
                if time.monotonic() > deadline:
                    raise CgroupError(reason='cannot remove %s: %s'
                                      % (self.path, exc))
                time.sleep(0.2)


def _is_cgroupfs(path: str) -> bool:
    try:
        stat = os.statvfs(path)
    except OSError:
        return False
    # cgroup (v1) and cgroup2 report no blocks at all.
    return stat.f_blocks == 0 and path.startswith('/sys/fs/cgroup')


def _remove_tree(path: str) -> None:
    for base, dirs, files in os.walk(path, topdown=False):
        for name in files:
            os.unlink(os.path.join(base, name))
        for name in dirs:
            os.rmdir(os.path.join(base, name))
    os.rmdir(path)


def _read(path: str) -> str:
    with open(path) as f:
        return f.read().strip()


def _write(path: str, value) -> None:
    with open(path, 'w') as f:
        f.write(str(value))
