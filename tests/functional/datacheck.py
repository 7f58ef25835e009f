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
value written. ``options`` are passed to the driver's ``Cluster`` (credentials
and TLS of a secured cluster, a load-balancing policy).
"""
from __future__ import annotations

from cassandra.cluster import Cluster
from cassandra.concurrent import execute_concurrent_with_args
from cassandra import ConsistencyLevel

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
        keys = sorted(rows)
        results = execute_concurrent_with_args(
            session, select, [(k,) for k in keys], concurrency=32,
            raise_on_first_error=True)
        missing, wrong = [], []
        for key, (ok, result) in zip(keys, results):
            assert ok, result
            row = result.one()
            if row is None:
                missing.append(key)
            elif row.v != rows[key]:
                wrong.append(key)
    assert not missing and not wrong, (
        '%d rows lost (%s), %d wrong (%s) of %d read at %s'
        % (len(missing), missing[:10], len(wrong), wrong[:10], len(rows),
           ConsistencyLevel.value_to_name[consistency]))
    return len(rows)
