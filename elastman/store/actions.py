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
"""The action journal (scaling actions as resumable state machines) and the
decision record of every control period.
"""
from __future__ import annotations

import datetime
from typing import Callable
import uuid

from cassandra.util import uuid_from_time
from oslo_utils import timeutils

from elastman.common import exception
from elastman.store import base

TERMINAL_STATES = frozenset({'SUCCEEDED', 'FAILED', 'ROLLED_BACK'})
#: Steps at which a scale-out still takes more servers (a top-up): the
#: executor reads its count again before each group of joins.
GROWABLE_STEPS = ('requested', 'planned', 'creating')
#: Steps at which a scale-in may still keep nodes it has not begun to
#: remove: the executor reads its nodes again before each decommission.
SHRINKABLE_STEPS = ('requested', 'planned', 'cleaning', 'decommissioning')


def not_begun(action: dict) -> list[str]:
    """The nodes of a scale-in it has not begun to remove: neither its
    result's ``leaving`` nor among its ``decommissioned``.
    """
    result = action.get('result') or {}
    begun = set(result.get('decommissioned') or []) | {result.get('leaving')}
    return [n for n in (action.get('params') or {}).get('nodes') or []
            if n not in begun]


def _decode(row: dict | None) -> dict | None:
    if row is not None:
        row['params'] = base.loads(row['params'])
        row['result'] = base.loads(row['result'])
    return row


class ActionRepository(base.Repository):

    def create(self, cluster_id: uuid.UUID, kind: str, params: dict,
               step: str = 'created', state: str = 'RUNNING') -> dict:
        """Journal a new action before any of its side effects happen."""
        now = timeutils.utcnow()
        action_id = uuid_from_time(now)
        self._execute(
            'INSERT INTO actions (cluster_id, id, kind, state, step, params, '
            'created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
            (cluster_id, action_id, kind, state, step, base.dumps(params),
             now, now))
        return self.get(cluster_id, action_id)

    def get(self, cluster_id: uuid.UUID, action_id: uuid.UUID) -> dict:
        row = _decode(self._one('SELECT * FROM actions WHERE cluster_id = ? '
                                'AND id = ?', (cluster_id, action_id)))
        if row is None:
            raise exception.NotFound(kind='action', id=action_id)
        return row

    def advance(self, cluster_id: uuid.UUID, action_id: uuid.UUID,
                step: str, state: str = 'RUNNING',
                expected_step: str | None = None,
                result: dict | None = None, reason: str | None = None,
                expected_params: dict | None = None) -> None:
        """Record the next step; with ``expected_step`` only if the journal
        still shows that step, and with ``expected_params`` only if the
        action's parameters are still those (a lightweight transaction).
        """
        cql = ('UPDATE actions SET step = ?, state = ?, result = ?, '
               'reason = ?, updated_at = ? WHERE cluster_id = ? AND id = ?')
        params = (step, state, base.dumps(result), reason, timeutils.utcnow(),
                  cluster_id, action_id)
        if expected_step is None:
            self._execute(cql, params)
            return
        cql += ' IF step = ?'
        params += (expected_step,)
        if expected_params is not None:
            cql += ' AND params = ?'
            params += (base.dumps(expected_params),)
        if not self._applied(cql, params):
            raise exception.Conflict(
                reason='action %s is no longer at step %s%s' % (
                    action_id, expected_step,
                    '' if expected_params is None else
                    ' with the parameters it was read with'))

    def top_up(self, cluster_id: uuid.UUID, action_id: uuid.UUID, count: int,
               record: dict) -> dict | None:
        """Add ``count`` servers to a scale-out still at one of
        :data:`GROWABLE_STEPS`: its ``count`` grows and ``top_ups`` lists
        ``record`` (a lightweight transaction on the step and parameters
        read, so that the executor, which leaves ``creating`` only with the
        parameters it last read, cannot miss it). The action as updated;
        None when it had moved on.
        """
        return self._resize(cluster_id, action_id, 'top_ups',
                            lambda action, wanted: int(count), record)

    def trim(self, cluster_id: uuid.UUID, action_id: uuid.UUID, count: int,
             record: dict) -> dict | None:
        """Take up to ``count`` servers not created yet from a scale-out
        still at one of :data:`GROWABLE_STEPS`: its ``count`` shrinks (never
        below the servers it created, nor to none) and ``trims`` lists
        ``record`` with the number taken (the same lightweight transaction
        as :meth:`top_up`). The action as updated; None when it had moved
        on or had nothing left to trim.
        """
        def change(action: dict, wanted: int) -> int:
            created = len((action.get('result') or {}).get('servers') or [])
            return -max(0, min(int(count), wanted - max(created, 1)))

        return self._resize(cluster_id, action_id, 'trims', change, record)

    def keep(self, cluster_id: uuid.UUID, action_id: uuid.UUID,
             nodes: list[str], record: dict, attempts: int = 3) -> dict | None:
        """Take ``nodes`` out of a scale-in still at one of
        :data:`SHRINKABLE_STEPS`, those of them it has not begun to remove
        (not in its result's ``leaving`` nor ``decommissioned``): its
        ``nodes`` shrink and ``keeps`` lists ``record`` with the nodes kept.
        A lightweight transaction on the step, parameters and result read,
        so that a node the executor claims (:meth:`advance` with
        ``expected_params``) is never both removed and kept; a race with
        the executor's progress is retried. The action as updated; None
        when it had moved on or had none of ``nodes`` left to keep.
        """
        for _ in range(attempts):
            action = self.get(cluster_id, action_id)
            if action['kind'] != 'scale_in' or action['state'] in TERMINAL_STATES \
                    or action['step'] not in SHRINKABLE_STEPS:
                return None
            before, wanted = action['params'] or {}, set(nodes)
            kept = [n for n in not_begun(action) if n in wanted]
            if not kept:
                return None
            after = dict(before, nodes=[n for n in before['nodes'] if n not in kept],
                         keeps=list(before.get('keeps') or []) + [
                             dict(record, nodes=kept)])
            if self._applied(
                    'UPDATE actions SET params = ?, updated_at = ? WHERE '
                    'cluster_id = ? AND id = ? IF step = ? AND params = ? '
                    'AND result = ?',
                    (base.dumps(after), timeutils.utcnow(), cluster_id, action_id,
                     action['step'], base.dumps(before),
                     base.dumps(action['result']))):
                action['params'] = after
                return action
        return None

    def _resize(self, cluster_id: uuid.UUID, action_id: uuid.UUID, listed: str,
                change: Callable[[dict, int], int], record: dict) -> dict | None:
        """Change the ``count`` of a scale-out still at one of
        :data:`GROWABLE_STEPS` by ``change(action, count)`` (nothing when
        0) and list ``record``, with the change's size, under ``listed``.
        """
        action = self.get(cluster_id, action_id)
        if action['kind'] != 'scale_out' or action['state'] in TERMINAL_STATES \
                or action['step'] not in GROWABLE_STEPS:
            return None
        before = action['params'] or {}
        delta = change(action, int(before['count']))
        if delta == 0:
            return None
        entry = dict(record, count=abs(delta))
        after = dict(before, count=int(before['count']) + delta,
                     **{listed: list(before.get(listed) or []) + [entry]})
        if not self._applied(
                'UPDATE actions SET params = ?, updated_at = ? WHERE '
                'cluster_id = ? AND id = ? IF step = ? AND params = ?',
                (base.dumps(after), timeutils.utcnow(), cluster_id, action_id,
                 action['step'], base.dumps(before))):
            return None
        action['params'] = after
        return action

    def list(self, cluster_id: uuid.UUID, limit: int = 100,
             marker: str | None = None) -> base.Page:
        page = self._page('SELECT * FROM actions WHERE cluster_id = ?',
                          (cluster_id,), limit, marker)
        for row in page:
            _decode(row)
        return page

    def unfinished(self, cluster_id: uuid.UUID) -> list[dict]:
        """Actions a restarted actuator must finish or roll back."""
        return [_decode(r) for r in self._iterate(
            'SELECT * FROM actions WHERE cluster_id = ?', (cluster_id,))
            if r['state'] not in TERMINAL_STATES]

    def record_decision(self, cluster_id: uuid.UUID, ts: datetime.datetime,
                        action: str, record: dict) -> None:
        self._execute('INSERT INTO decisions (cluster_id, ts, action, record)'
                      ' VALUES (?, ?, ?, ?)',
                      (cluster_id, ts, action, base.dumps(record)))

    def decisions(self, cluster_id: uuid.UUID, limit: int = 100,
                  marker: str | None = None) -> base.Page:
        return self._page('SELECT * FROM decisions WHERE cluster_id = ?',
                          (cluster_id,), limit, marker, ('record',))
