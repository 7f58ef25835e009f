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
"""The agent writes only under resctrl and its state directory: enforced here.

Every file the agent creates or writes goes through :class:`FsGuard`, which
resolves the path (symlinks included) and refuses anything outside the allowed
roots.
"""
from __future__ import annotations

import os


class OutsideAllowedRoots(PermissionError):
    """A write outside resctrl / the state dir was attempted."""


class FsGuard:
    """Checks and performs writes below a fixed set of roots."""

    def __init__(self, *roots: str) -> None:
        self.roots = tuple(os.path.realpath(r) for r in roots if r)

    def check(self, path: str) -> str:
        """Return the resolved path, or raise OutsideAllowedRoots."""
        real = os.path.realpath(path)
        for root in self.roots:
            if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
                return real
        raise OutsideAllowedRoots('refusing to write %s: outside %s'
                                  % (path, ', '.join(self.roots)))

    def write(self, path: str, data: str) -> None:
        """Write ``data`` to an existing file (sysfs style, no truncation games)."""
        real = self.check(path)
        with open(real, 'w', encoding='ascii') as f:
            f.write(data)

    def write_atomic(self, path: str, data: str) -> None:
        """Replace a regular file atomically."""
        real = self.check(path)
        tmp = real + '.tmp'
        with open(tmp, 'w', encoding='utf-8') as f:
            f.write(data)
        os.replace(tmp, real)

    def makedirs(self, path: str, mode: int = 0o750) -> None:
        real = self.check(path)
        os.makedirs(real, mode=mode, exist_ok=True)

    def rmdir(self, path: str) -> None:
        os.rmdir(self.check(path))
