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
"""Rows written before a scaling action, read back after it.

Every scale-out, scale-in and replacement in the functional tests is checked
this way: each row written before the action is read back by its key, at
consistency ALL (QUORUM where a node is dead on purpose), and must hold the
value written. A read that times out (a replica busy compacting or cleaning
up on a loaded two-core machine) is read again, a few times, before it
counts: a timeout says nothing about whether the row is there, a missing or
wrong row does. ``options`` are passed to the driver's ``Cluster``
(credentials and TLS of a secured cluster, a load-balancing policy).
"""
from __future__ import annotations

from cassandra.cluster import Cluster
from cassandra.concurrent import execute_concurrent_with_args
from cassandra import ConsistencyLevel
from cassandra import OperationTimedOut
from cassandra import ReadTimeout
import tenacity

#: how many times a key whose read timed out is read again
TIMEOUT_RETRIES = 5


class _TimedOut(Exception):
    """Some reads timed out; their keys are read again."""


KEYSPACE = 'data'
TABLE = 'kv'


def create(address: str, replication_factor: int = 3, **options) -> None:
    with Cluster([address], **options) as cql:
        session = cql.connect()
        session.execute(
            "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': "
            "'SimpleStrategy', 'replication_factor': %d}"
            % (KEYSPACE, replication_factor))
        session.execute('CREATE TABLE IF NOT EXISTS %s.%s (k int PRIMARY '
                        'KEY, v text)' % (KEYSPACE, TABLE))


def write(address: str, keys, consistency=ConsistencyLevel.ALL,
          **options) -> dict:
    """Write one row per key; returns {key: value} of what was written."""
    rows = {k: 'v%d' % k for k in keys}
    with Cluster([address], **options) as cql:
        session = cql.connect()
        insert = session.prepare('INSERT INTO %s.%s (k, v) VALUES (?, ?)'
                                 % (KEYSPACE, TABLE))
        insert.consistency_level = consistency
        results = execute_concurrent_with_args(
            session, insert, list(rows.items()), concurrency=32,
            raise_on_first_error=True)
        assert all(r.success for r in results)
    return rows


def verify(address: str, rows: dict,
           consistency=ConsistencyLevel.ALL, **options) -> int:
    """Read every row of ``rows`` back by key at ``consistency``; assert
    each holds its value; return how many were verified.
    """
    with Cluster([address], **options) as cql:
        session = cql.connect()
        select = session.prepare('SELECT v FROM %s.%s WHERE k = ?'
                                 % (KEYSPACE, TABLE))
        select.consistency_level = consistency
        found: dict = {}
        pending = sorted(rows)

        @tenacity.retry(retry=tenacity.retry_if_exception_type(_TimedOut),
                        stop=tenacity.stop_after_attempt(TIMEOUT_RETRIES + 1),
                        wait=tenacity.wait_fixed(2), reraise=True)
        def read_pending() -> None:
            results = execute_concurrent_with_args(
                session, select, [(k,) for k in pending], concurrency=16,
                raise_on_first_error=False)
            timed_out = []
            for key, (ok, result) in zip(pending, results):
                if ok:
                    row = result.one()
                    found[key] = None if row is None else row.v
                elif isinstance(result, (ReadTimeout, OperationTimedOut)):
                    timed_out.append(key)
                else:
                    raise result
            pending[:] = timed_out
            if timed_out:
                raise _TimedOut('%d reads timed out' % len(timed_out))

        try:
            read_pending()
        except _TimedOut:
            raise AssertionError(
                '%d of %d reads at %s still timed out after %d retries'
                % (len(pending), len(rows),
                   ConsistencyLevel.value_to_name[consistency],
                   TIMEOUT_RETRIES)) from None
        missing = sorted(k for k, v in found.items() if v is None)
        wrong = sorted(k for k, v in found.items()
                       if v is not None and v != rows[k])
    assert not missing and not wrong, (
        '%d rows lost (%s), %d wrong (%s) of %d read at %s'
        % (len(missing), missing[:10], len(wrong), wrong[:10], len(rows),
           ConsistencyLevel.value_to_name[consistency]))
    return len(rows)
