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
"""Exponential back-off of failed actions, read from the action journal.

After an action of some kind failed, the next action of that kind on the same
cluster waits ``base * 2**(n - 1)`` seconds (at most ``[actuator]
backoff_max``) from the last failure, where ``n`` counts the failures in a row
with the same failure code (``no_valid_host``, ``quota``, ``join_timeout``,
...). A success of that kind ends the run; a different code starts a new one.
Only a successful action starts the cool-down, so without this a scale-out
that fails (and rolls its servers back) would be tried again every control
period: create, fail, delete, create.

The journal is the state: the back-off survives a restart and every
actuator sees the same one.
"""
from __future__ import annotations

import dataclasses
from typing import Iterable

from elastman.common import timestamps


@dataclasses.dataclass
class Hold:
    """A kind of action held back on one cluster."""

    kind: str
    code: str
    failures: int
    delay_s: float
    until: float
    last_reason: str | None

    def describe(self, now: float) -> str:
        return ('%s held back %.0f s more (back-off %.0f s after %d failure(s)'
                ' in a row: %s)' % (self.kind, self.until - now, self.delay_s,
                                    self.failures, self.code))

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def failure_code(action: dict) -> str:
    failure = (action.get('result') or {}).get('failure') or {}
    return failure.get('code') or 'unknown'


def hold_for(actions: Iterable[dict], kind: str, now: float, base_s: float,
             max_s: float) -> Hold | None:
    """The back-off in force for a new action of ``kind``, or None.

    ``actions`` are the cluster's journalled actions, newest first.
    """
    failures = []
    for action in actions:
        if action['kind'] != kind:
            continue
        if action['state'] == 'SUCCEEDED':
            break
        if action['state'] == 'FAILED':
            failures.append(action)
    if not failures:
        return None
    code = failure_code(failures[0])
    run = 0
    for action in failures:
        if failure_code(action) != code:
            break
        run += 1
    delay = min(max_s, base_s * 2 ** (run - 1))
    last = timestamps.epoch(failures[0].get('updated_at')) or now
    if now >= last + delay:
        return None
    return Hold(kind=kind, code=code, failures=run, delay_s=delay,
                until=last + delay, last_reason=failures[0].get('reason'))
