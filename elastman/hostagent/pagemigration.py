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
"""Bounded page migration of a QEMU process between NUMA nodes.

``move_batch(pid, src, dst, nbytes)`` finds up to ``nbytes`` of the process'
pages that sit on ``src`` (querying with ``move_pages(2)`` and no target
nodes) and moves them to ``dst`` with ``move_pages(2)``: one bounded batch,
so the controller can check the SLO colour between batches. The syscall is
called through ctypes; no libnuma is needed.
"""
from __future__ import annotations

import ctypes
import os
import platform as _platform

from oslo_log import log as logging

from elastman.hostagent import libc

LOG = logging.getLogger(__name__)

_SYS_MOVE_PAGES = {'x86_64': 279, 'aarch64': 239, 'ppc64le': 301,
                   's390x': 310}
MPOL_MF_MOVE = 1 << 1
PAGE_SIZE = os.sysconf('SC_PAGE_SIZE')
QUERY_CHUNK = 4096  # pages per move_pages call


def move_pages(pid: int, addresses: list[int],
               nodes: list[int] | None) -> list[int]:
    """move_pages(2): with ``nodes`` None, return each page's node (or -errno)."""
    count = len(addresses)
    if not count:
        return []
    pages = (ctypes.c_void_p * count)(*addresses)
    status = (ctypes.c_int * count)()
    node_arr = (ctypes.c_int * count)(*nodes) if nodes is not None else None
    nr = _SYS_MOVE_PAGES.get(_platform.machine())
    if nr is None:
        raise OSError('move_pages: unsupported architecture %s'
                      % _platform.machine())
    ret = libc.syscall()(
        ctypes.c_long(nr), ctypes.c_long(pid), ctypes.c_ulong(count), pages,
        node_arr, status,
        ctypes.c_int(MPOL_MF_MOVE if nodes is not None else 0))
    if ret < 0:
        err = ctypes.get_errno()
        raise OSError(err, 'move_pages(%d): %s' % (pid, os.strerror(err)))
    return list(status)


def writable_ranges(pid: int) -> list[tuple[int, int]]:
    """Private anonymous/guest-RAM mappings of ``pid`` (where its data lives)."""
    ranges = []
    with open('/proc/%d/maps' % pid, encoding='ascii', errors='replace') as f:
        for line in f:
            parts = line.split()
            if len(parts) < 2 or not parts[1].startswith('rw'):
                continue
            name = parts[5] if len(parts) > 5 else ''
            if name.startswith('[') and name not in ('[heap]',):
                continue  # stack, vdso, vvar
            lo, hi = (int(x, 16) for x in parts[0].split('-'))
            ranges.append((lo, hi))
    return ranges


def numa_maps_bytes(pid: int) -> dict[int, int]:
    """Resident bytes of ``pid`` per node, from /proc/<pid>/numa_maps."""
    out: dict[int, int] = {}
    with open('/proc/%d/numa_maps' % pid, encoding='ascii',
              errors='replace') as f:
        for line in f:
            psize = PAGE_SIZE
            fields = line.split()
            for field in fields:
                if field.startswith('kernelpagesize_kB='):
                    psize = int(field.split('=')[1]) * 1024
            for field in fields:
                if field.startswith('N') and '=' in field:
                    node, pages = field[1:].split('=', 1)
                    if node.isdigit() and pages.isdigit():
                        out[int(node)] = out.get(int(node), 0) + \
                            int(pages) * psize
    return out


def pages_on_node(pid: int, node: int, limit: int) -> list[int]:
    """Up to ``limit`` page addresses of ``pid`` currently on ``node``."""
    found: list[int] = []
    for lo, hi in writable_ranges(pid):
        addr = lo
        while addr < hi and len(found) < limit:
            chunk = list(range(addr, min(hi, addr + QUERY_CHUNK * PAGE_SIZE),
                               PAGE_SIZE))
            addr += QUERY_CHUNK * PAGE_SIZE
            try:
                status = move_pages(pid, chunk, None)
            except OSError as exc:
                LOG.debug('query of %#x in %d failed: %s', chunk[0], pid, exc)
                continue
            found.extend(a for a, s in zip(chunk, status) if s == node)
        if len(found) >= limit:
            break
    return found[:limit]


def move_batch(pid: int, src: int, dst: int, nbytes: int) -> int:
    """Move up to ``nbytes`` of ``pid``'s pages from ``src`` to ``dst``.

    Returns the bytes actually moved (0 when nothing was left on ``src``).
    """
    limit = max(1, nbytes // PAGE_SIZE)
    addrs = pages_on_node(pid, src, limit)
    moved = 0
    for i in range(0, len(addrs), QUERY_CHUNK):
        chunk = addrs[i:i + QUERY_CHUNK]
        status = move_pages(pid, chunk, [dst] * len(chunk))
        moved += sum(1 for s in status if s == dst)
    return moved * PAGE_SIZE
