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
"""resctrl classes of service for best-effort VMs (Intel RDT MBA and MBM).

One resctrl group ``elastman-<vm>`` per best-effort VM holds every thread of
its QEMU process; its ``schemata`` MB line is the VM's MBA level on every
memory domain. Writes go through :class:`FsGuard`, so nothing outside the
resctrl mount is touched.
"""
from __future__ import annotations

import os
import re

from oslo_log import log as logging

from elastman.hostagent import fsguard
from elastman.hostagent import topology

LOG = logging.getLogger(__name__)
PREFIX = 'elastman-'
_SAFE = re.compile(r'[^A-Za-z0-9_.-]')


class ResctrlManager:
    def __init__(self, root: str, guard: fsguard.FsGuard,
                 info: topology.ResctrlInfo | None = None) -> None:
        self.root = root
        self.guard = guard
        self.info = info or topology.read_resctrl(root)

    def group_path(self, vm: str) -> str:
        return os.path.join(self.root, PREFIX + _SAFE.sub('_', vm)[:48])

    def mb_domains(self) -> list[int]:
        """Memory bandwidth domain ids from the root schemata."""
        try:
            with open(os.path.join(self.root, 'schemata'), encoding='ascii') as f:
                for line in f:
                    line = line.strip()
                    if line.startswith('MB:'):
                        return [int(part.split('=')[0])
                                for part in line[3:].split(';') if '=' in part]
        except OSError:
            pass
        return [0]

    def clamp(self, level: int) -> int:
        gran = max(1, self.info.mba_granularity)
        level = max(self.info.mba_min, min(100, int(level)))
        return min(100, -(-level // gran) * gran)

    def ensure_group(self, vm: str, pid: int | None = None) -> str:
        """Create the VM's group and move all its QEMU threads into it."""
        path = self.group_path(vm)
        if not os.path.isdir(path):
            self.guard.makedirs(path)
        if pid:
            self.assign(vm, pid)
        return path

    def assign(self, vm: str, pid: int) -> int:
        """Write every thread of ``pid`` to the group's tasks; returns count."""
        tasks = os.path.join(self.group_path(vm), 'tasks')
        count = 0
        try:
            tids = os.listdir('/proc/%d/task' % pid)
        except OSError:
            return 0
        for tid in tids:
            try:
                self.guard.write(tasks, tid)
                count += 1
            except OSError as exc:
                LOG.debug('thread %s of %d not moved: %s', tid, pid, exc)
        return count

    def set_mba(self, vm: str, level: int) -> int:
        level = self.clamp(level)
        line = 'MB:' + ';'.join('%d=%d' % (d, level) for d in self.mb_domains())
        path = self.group_path(vm)
        if not os.path.isdir(path):
            self.guard.makedirs(path)
        self.guard.write(os.path.join(path, 'schemata'), line + '\n')
        return level

    def read_mbm(self, vm: str) -> dict[int, int]:
        """Cumulative bytes per memory node of the VM's group.

        MBM counts per L3 domain (socket): ``mbm_local_bytes`` went to the
        socket's own node, the rest of ``mbm_total_bytes`` to remote nodes
        (attributed evenly among them).
        """
        base = os.path.join(self.group_path(vm), 'mon_data')
        out: dict[int, int] = {}
        try:
            entries = sorted(os.listdir(base))
        except OSError:
            return out
        domains = [int(e.rsplit('_', 1)[-1]) for e in entries
                   if e.startswith('mon_L3_')]
        for entry, dom in zip(entries, domains):
            total = _read_int(os.path.join(base, entry, 'mbm_total_bytes'))
            local = _read_int(os.path.join(base, entry, 'mbm_local_bytes'))
            out[dom] = out.get(dom, 0) + local
            others = [d for d in domains if d != dom]
            for other in others:
                out[other] = out.get(other, 0) + (total - local) // len(others)
        return out

    def remove_group(self, vm: str) -> None:
        path = self.group_path(vm)
        if os.path.isdir(path):
            self.guard.rmdir(path)


def _read_int(path: str) -> int:
    try:
        with open(path, encoding='ascii') as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0
