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
"""Per-process hardware counters through ``perf_event_open(2)`` (ctypes).

One counter per event and thread of a process (QEMU's vCPU threads among
them); a read sums the threads, opening counters for threads that appeared
since. Hardware events need a PMU the kernel exposes
(``/sys/bus/event_source/devices/cpu``); virtual machines and containers
often have none, and then :func:`open_counters` returns None and the caller
falls back to what /proc has (see :mod:`elastman.hostagent.interference`).
"""
from __future__ import annotations

import ctypes
import os
import platform as _platform
import struct

from oslo_log import log as logging

from elastman.hostagent import libc

LOG = logging.getLogger(__name__)

_SYS_PERF_EVENT_OPEN = {'x86_64': 298, 'aarch64': 241, 'ppc64le': 319,
                        's390x': 331}
PMU_DIR = '/sys/bus/event_source/devices/cpu'

PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE = 0, 1
# (type, config, user space only)
EVENTS = {
    'instructions_user': (PERF_TYPE_HARDWARE, 1, True),    # UIPT's numerator
    'cache_references': (PERF_TYPE_HARDWARE, 2, False),    # LLC references
    'cache_misses': (PERF_TYPE_HARDWARE, 3, False),        # LLC misses
    'task_clock': (PERF_TYPE_SOFTWARE, 1, False),          # ns on a CPU
}
_ATTR_SIZE = 128
_EXCLUDE_KERNEL, _EXCLUDE_HV = 1 << 5, 1 << 6


def pmu_available() -> bool:
    """Whether the kernel exposes a CPU PMU (hardware events)."""
    return os.path.isdir(PMU_DIR)


def perf_event_open(tid: int, event: str) -> int:
    """A counting fd for ``event`` of thread ``tid`` on any CPU."""
    etype, config, user_only = EVENTS[event]
    nr = _SYS_PERF_EVENT_OPEN.get(_platform.machine())
    if nr is None:
        raise OSError('perf_event_open: unsupported architecture %s'
                      % _platform.machine())
    attr = ctypes.create_string_buffer(_ATTR_SIZE)
    flags = (_EXCLUDE_KERNEL | _EXCLUDE_HV) if user_only else 0
    struct.pack_into('=IIQQQQQ', attr, 0, etype, _ATTR_SIZE, config, 0, 0, 0,
                     flags)
    fd = libc.syscall()(ctypes.c_long(nr), attr, ctypes.c_int(tid),
                        ctypes.c_int(-1), ctypes.c_int(-1), ctypes.c_ulong(0))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, 'perf_event_open(%s, tid %d): %s'
                      % (event, tid, os.strerror(err)))
    return int(fd)


class ProcessCounters:
    """Cumulative counts of ``events`` over every thread of ``pid``."""

    def __init__(self, pid: int, events) -> None:
        self.pid = pid
        self.events = tuple(events)
        self._fds: dict[tuple[int, str], int] = {}
        self._gone: dict[str, int] = {e: 0 for e in self.events}

    def _threads(self) -> list[int]:
        try:
            return [int(t) for t in os.listdir('/proc/%d/task' % self.pid)]
        except OSError:
            return []

    def read(self) -> dict[str, int]:
        """Counts since the counters were opened (threads that ended keep
        what they counted).
        """
        for tid in self._threads():
            for event in self.events:
                if (tid, event) not in self._fds:
                    try:
                        self._fds[(tid, event)] = perf_event_open(tid, event)
                    except OSError as exc:
                        LOG.debug('no %s counter for thread %d: %s', event,
                                  tid, exc)
                        self._fds[(tid, event)] = -1
        totals = dict(self._gone)
        for (tid, event), fd in list(self._fds.items()):
            if fd < 0:
                continue
            try:
                value = struct.unpack('=Q', os.read(fd, 8))[0]
            except OSError:
                continue
            if not os.path.exists('/proc/%d/task/%d' % (self.pid, tid)):
                self._gone[event] += value
                os.close(fd)
                del self._fds[(tid, event)]
            totals[event] += value
        return totals

    def close(self) -> None:
        for fd in self._fds.values():
            if fd >= 0:
                os.close(fd)
        self._fds.clear()


def open_counters(pid: int, events) -> ProcessCounters | None:
    """Counters of ``pid``, or None when this host cannot count ``events``
    (no PMU for hardware events, or the kernel refuses).
    """
    events = tuple(events)
    if any(EVENTS[e][0] == PERF_TYPE_HARDWARE for e in events) and \
            not pmu_available():
        return None
    counters = ProcessCounters(pid, events)
    try:
        tid = counters._threads()[0]
        os.close(perf_event_open(tid, events[0]))
    except (OSError, IndexError) as exc:
        LOG.info('no performance counters for pid %d: %s', pid, exc)
        return None
    return counters
