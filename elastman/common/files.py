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
"""Files that other processes read while this one writes them."""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
from typing import Any


def replace_json(path: str, data: Any, **dump_args: Any) -> None:
    """Write ``data`` as JSON to ``path`` so that a reader sees the old file
    or the whole new one, never a part.

    The temporary file is this writer's own (``mkstemp``), so two processes
    writing the same path at once do not write into each other's file.
    """
    directory = os.path.dirname(path) or '.'
    fd, tmp = tempfile.mkstemp(prefix='.' + os.path.basename(path),
                               dir=directory)
    try:
        with os.fdopen(fd, 'w') as f:
            json.dump(data, f, **dump_args)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
