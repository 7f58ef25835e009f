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
"""``name=value`` options, such as ``--set headroom=0.3``: the value is
JSON where it parses as JSON (``0.3``, ``false``, ``{"m1": 2}``), else the
bare word as a string.
"""
from __future__ import annotations

import json
from typing import Any, Iterable


def parse(specs: Iterable[str], form: str = 'FIELD=VALUE') -> dict[str, Any]:
    """``{name: value}`` of the assignments; ValueError names the one
    without a name or a value (``form`` is how the option spells it).
    """
    out: dict[str, Any] = {}
    for spec in specs:
        name, sep, raw = (part.strip() for part in spec.partition('='))
        if not sep or not name or not raw:
            raise ValueError('--set %r: expected %s' % (spec, form))
        try:
            out[name] = json.loads(raw)
        except ValueError:
            out[name] = raw
    return out
