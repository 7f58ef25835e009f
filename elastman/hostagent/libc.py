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
"""The C library's ``syscall(2)``, for the Linux calls glibc has no wrapper
of (perf_event_open, move_pages).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools


@functools.lru_cache(maxsize=None)
def syscall():
    """libc's ``syscall``, loaded once, returning a C long; errno is kept
    for ``ctypes.get_errno()``.
    """
    libc = ctypes.CDLL(ctypes.util.find_library('c') or 'libc.so.6',
                       use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc.syscall
