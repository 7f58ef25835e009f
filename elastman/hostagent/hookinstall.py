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
"""Install elastman's libvirt QEMU hook.

``python -m elastman.hostagent.hookinstall [--socket PATH] [--dest PATH]``
copies ``etc/libvirt/hooks/qemu`` to the hooks directory with the agent's
socket path written into it, then asks libvirtd to re-scan its hooks (SIGHUP),
because libvirtd caches which hook scripts exist.

When ``/etc/libvirt/hooks/qemu`` already exists and is not ours, the hook goes
to ``/etc/libvirt/hooks/qemu.d/elastman`` (libvirt >= 6.5 runs every
executable there too) instead of replacing the operator's script.
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys

HOOKS_DIR = '/etc/libvirt/hooks'
DEFAULT_SOCKET = '/var/lib/elastman/hostagent/hook.sock'
MARKER = 'libvirt QEMU hook of elastman'
_SOCKET_LINE = re.compile(r"^SOCKET_PATH = .*$", re.M)


def hook_source() -> str:
    """Path of the hook script shipped with elastman."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [
        os.path.join(here, '..', '..', 'etc', 'libvirt', 'hooks', 'qemu'),
        os.path.join(sys.prefix, 'etc', 'elastman', 'libvirt', 'qemu'),
    ]
    for path in candidates:
        if os.path.isfile(path):
            return os.path.normpath(path)
    raise FileNotFoundError('elastman libvirt hook not found in %s' % candidates)


def render(socket_path: str, source: str | None = None) -> str:
    """The hook's text with ``SOCKET_PATH`` set to ``socket_path``."""
    with open(source or hook_source(), encoding='utf-8') as f:
        text = f.read()
    return _SOCKET_LINE.sub('SOCKET_PATH = %r' % socket_path, text, count=1)


def default_dest(hooks_dir: str = HOOKS_DIR) -> str:
    main = os.path.join(hooks_dir, 'qemu')
    if os.path.exists(main):
        with open(main, encoding='utf-8', errors='replace') as f:
            if MARKER not in f.read(4096):
                return os.path.join(hooks_dir, 'qemu.d', 'elastman')
    return main


def install(socket_path: str = DEFAULT_SOCKET, dest: str | None = None,
            reload_libvirtd: bool = True) -> str:
    """Write the hook to ``dest`` (mode 0755) and reload libvirtd's hooks."""
    dest = dest or default_dest()
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    tmp = dest + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        f.write(render(socket_path))
    os.chmod(tmp, 0o755)
    os.replace(tmp, dest)
    if reload_libvirtd:
        reload_hooks()
    return dest


def reload_hooks() -> bool:
    """SIGHUP libvirtd so that it notices new or removed hook scripts."""
    try:
        out = subprocess.run(['pgrep', '-x', 'libvirtd'], capture_output=True,
                             text=True, timeout=5).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return False
    for pid in out:
        try:
            os.kill(int(pid), signal.SIGHUP)
        except (OSError, ValueError):
            continue
    return bool(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--socket', default=DEFAULT_SOCKET,
                        help='agent socket ([hostagent] socket_path)')
    parser.add_argument('--dest', default=None,
                        help='where to install (default: %s/qemu, or '
                             'qemu.d/elastman if another qemu hook exists)'
                             % HOOKS_DIR)
    parser.add_argument('--no-reload', action='store_true',
                        help='do not SIGHUP libvirtd')
    args = parser.parse_args(argv)
    dest = install(args.socket, args.dest, not args.no_reload)
    print('installed %s (socket %s)' % (dest, args.socket))
    return 0


if __name__ == '__main__':
    sys.exit(main())
