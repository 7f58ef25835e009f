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
"""Shared plumbing of the store repositories: prepared statements, paging."""
from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any, Iterator

from cassandra import concurrent
from cassandra import query

from elastman.common import exception


class Page(list):
    """One page of rows plus the marker of the next page (None at the end)."""

    def __init__(self, rows, next_marker: str | None) -> None:
        super().__init__(rows)
        self.next_marker = next_marker


class Repository:
    """Executes prepared statements on one session and keyspace."""

    def __init__(self, session, conf) -> None:
        self._session = session
        self._conf = conf
        self._keyspace = conf.store.keyspace
        self._prepared: dict[str, query.PreparedStatement] = {}

    def _statement(self, cql: str) -> query.PreparedStatement:
        stmt = self._prepared.get(cql)
        if stmt is None:
            stmt = self._session.prepare(_qualify(cql, self._keyspace))
            self._prepared[cql] = stmt
        return stmt

    def _execute(self, cql: str, params: tuple = ()):  # -> ResultSet
        return self._session.execute(self._statement(cql), params)

    def _one(self, cql: str, params: tuple = ()) -> dict | None:
        return self._execute(cql, params).one()

    def _applied(self, cql: str, params: tuple = ()) -> bool:
        """Run a lightweight transaction; True if it was applied."""
        return self._execute(cql, params).was_applied

    def _iterate(self, cql: str, params: tuple = ()) -> Iterator[dict]:
        """All rows, fetched ``[store] page_size`` at a time."""
        bound = self._statement(cql).bind(params)
        bound.fetch_size = self._conf.store.page_size
        yield from self._session.execute(bound)

    def _execute_many(self, cql: str, params: list[tuple]) -> None:
        """Run one statement for many parameter tuples, ``[store]
        concurrency`` requests in flight at a time; raises the first error.
        """
        if params:
            concurrent.execute_concurrent_with_args(
                self._session, self._statement(cql), params,
                concurrency=self._conf.store.concurrency)

    def _fetch_many(self, cql: str, params: list[tuple]) -> list[list[dict]]:
        """The rows of one query per parameter tuple, in their order, with
        ``[store] concurrency`` queries in flight at a time.
        """
        stmt = self._statement(cql)
        bound = []
        for p in params:
            b = stmt.bind(p)
            b.fetch_size = self._conf.store.page_size
            bound.append((b, None))
        results = concurrent.execute_concurrent(
            self._session, bound, concurrency=self._conf.store.concurrency)
        return [list(result) for _ok, result in results]

    def _page(self, cql: str, params: tuple, limit: int,
              marker: str | None, json_columns: tuple[str, ...] = ()
              ) -> Page:
        """One page of at most ``limit`` rows, resumable from ``marker``;
        the ``json_columns`` of each row decoded.
        """
        bound = self._statement(cql).bind(params)
        bound.fetch_size = limit
        state = _decode_marker(marker) if marker else None
        result = self._session.execute(bound, paging_state=state)
        rows = list(result.current_rows)
        for row in rows:
            for column in json_columns:
                row[column] = loads(row[column])
        nxt = result.paging_state
        return Page(rows, base64.urlsafe_b64encode(nxt).decode()
                    if nxt else None)


_TABLE_REF = re.compile(r'\b(FROM|INTO|UPDATE)\s+([A-Za-z_][A-Za-z0-9_]*)\b(?!\.)')


def _qualify(cql: str, keyspace: str) -> str:
    """Name the keyspace in every table reference: a session without a
    current keyspace (no USE) is what Cassandra recommends for prepared
    statements.
    """
    return _TABLE_REF.sub(lambda m: '%s %s.%s' % (m.group(1), keyspace,
                                                  m.group(2)), cql)


def _decode_marker(marker: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(marker.encode())
    except (binascii.Error, ValueError):
        raise exception.ElastmanException('invalid page marker %r' % marker)


def dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True)


def loads(value: str | None) -> Any:
    return None if value is None else json.loads(value)
