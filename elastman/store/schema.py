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
"""The store's schema, as an ordered list of migrations.

``elastman-manage db sync`` creates the keyspace and applies every migration
newer than the version recorded in ``schema_migrations``. Each statement is
idempotent, so re-running, or two syncs racing, is harmless.
"""
from __future__ import annotations

import dataclasses

from oslo_log import log as logging
from oslo_utils import timeutils

from elastman.common import exception

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class Migration:
    version: int
    description: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, 'clusters, nodes, samples, models, forecasts, actions', (
        """CREATE TABLE IF NOT EXISTS clusters (
            id uuid PRIMARY KEY, project_id text, name text, state text,
            status_reason text, spec text, policy text,
            created_at timestamp, updated_at timestamp)""",
        "CREATE INDEX IF NOT EXISTS clusters_project ON clusters (project_id)",
        """CREATE TABLE IF NOT EXISTS nodes (
            cluster_id uuid, node_id text, server_id text, address text,
            flavor text, state text, seed boolean, cql_port int,
            jmx_host text, jmx_port int, host text, details text,
            created_at timestamp, updated_at timestamp,
            PRIMARY KEY (cluster_id, node_id))""",
        """CREATE TABLE IF NOT EXISTS samples (
            cluster_id uuid, node_id text, ts timestamp, up boolean,
            interval_s double, reads_per_s double, writes_per_s double,
            read_bytes_mean double, write_bytes_mean double,
            read_p50_ms double, read_p95_ms double, read_p99_ms double,
            write_p50_ms double, write_p95_ms double, write_p99_ms double,
            extra map<text, double>,
            PRIMARY KEY ((cluster_id, node_id), ts))
            WITH CLUSTERING ORDER BY (ts DESC)""",
        """CREATE TABLE IF NOT EXISTS cluster_workload (
            cluster_id uuid, ts timestamp, reads_per_s double,
            writes_per_s double, nodes_up int, nodes_total int,
            PRIMARY KEY (cluster_id, ts))
            WITH CLUSTERING ORDER BY (ts DESC)""",
        """CREATE TABLE IF NOT EXISTS models (
            scope text, model_id text, version int, params text,
            payload blob, summary text, created_at timestamp,
            PRIMARY KEY ((scope, model_id), version))
            WITH CLUSTERING ORDER BY (version DESC)""",
        """CREATE TABLE IF NOT EXISTS model_cells (
            scope text, model_id text, cell text, payload blob,
            updated_at timestamp,
            PRIMARY KEY ((scope, model_id), cell))""",
        """CREATE TABLE IF NOT EXISTS forecasts (
            cluster_id uuid, metric text, ts timestamp, horizon_s int,
            step_s int, predicted list<double>, forecaster text,
            weights map<text, double>,
            PRIMARY KEY ((cluster_id, metric), ts))
            WITH CLUSTERING ORDER BY (ts DESC)""",
        """CREATE TABLE IF NOT EXISTS actions (
            cluster_id uuid, id timeuuid, kind text, state text, step text,
            params text, result text, reason text,
            created_at timestamp, updated_at timestamp,
            PRIMARY KEY (cluster_id, id))
            WITH CLUSTERING ORDER BY (id DESC)""",
        """CREATE TABLE IF NOT EXISTS decisions (
            cluster_id uuid, ts timestamp, action text, record text,
            PRIMARY KEY (cluster_id, ts))
            WITH CLUSTERING ORDER BY (ts DESC)""",
        """CREATE TABLE IF NOT EXISTS leases (
            name text PRIMARY KEY, holder text, acquired_at timestamp)""",
    )),
    Migration(2, 'host agents and their interference reports', (
        """CREATE TABLE IF NOT EXISTS host_agents (
            host text PRIMARY KEY, last_report_at timestamp, details text)""",
        """CREATE TABLE IF NOT EXISTS host_reports (
            host text, ts timestamp, vms text,
            PRIMARY KEY (host, ts))
            WITH CLUSTERING ORDER BY (ts DESC)
            AND default_time_to_live = 604800""",
    )),
    Migration(3, 'clusters\' encrypted credentials', (
        """CREATE TABLE IF NOT EXISTS cluster_credentials (
            cluster_id uuid PRIMARY KEY, secret blob,
            updated_at timestamp)""",
    )),
    Migration(4, 'why and since when a node is in its state (node health)', (
        "ALTER TABLE nodes ADD IF NOT EXISTS state_reason text",
        "ALTER TABLE nodes ADD IF NOT EXISTS state_changed_at timestamp",
    )),
    Migration(5, 'forecasts carry their peak and its upper quantile', (
        'ALTER TABLE forecasts ADD IF NOT EXISTS peak list<double>',
        'ALTER TABLE forecasts ADD IF NOT EXISTS upper list<double>',
        'ALTER TABLE forecasts ADD IF NOT EXISTS quantile double',
    )),
    Migration(6, 'capacity summaries and cells, one row each', (
        """CREATE TABLE IF NOT EXISTS capacity_summaries (
            cluster_id text, scope text, key text, flavor text,
            version int, revision bigint, fitted_revision bigint,
            sampled_until double, imported boolean, model blob,
            updated_at timestamp,
            PRIMARY KEY (cluster_id, scope, key))""",
        """CREATE TABLE IF NOT EXISTS capacity_cells (
            cluster_id text, node_id text, cell text, data blob,
            PRIMARY KEY ((cluster_id, node_id), cell))""",
    )),
    Migration(7, 'the live copies of each worker', (
        """CREATE TABLE IF NOT EXISTS worker_members (
            worker text, holder text, seen_at timestamp,
            PRIMARY KEY (worker, holder))""",
    )),
    Migration(8, 'the cluster\'s own read p99 per monitor round', (
        'ALTER TABLE cluster_workload ADD IF NOT EXISTS read_p99_ms double',
        'ALTER TABLE cluster_workload ADD IF NOT EXISTS '
        'read_with_queue_p99_ms double',
    )),
    Migration(9, 'forecasts say when their first point begins', (
        'ALTER TABLE forecasts ADD IF NOT EXISTS starts_at timestamp',
    )),
)

LATEST = MIGRATIONS[-1].version

_VERSION_TABLE = """CREATE TABLE IF NOT EXISTS schema_migrations (
    version int PRIMARY KEY, description text, applied_at timestamp)"""


def keyspace_ddl(conf) -> str:
    if conf.store.replication_strategy == 'NetworkTopologyStrategy':
        if not conf.store.datacenter_replication:
            raise exception.ConfigurationError(
                reason='[store] datacenter_replication must name at least one '
                       'datacenter for NetworkTopologyStrategy')
        parts = ["'class': 'NetworkTopologyStrategy'"]
        for dc, rf in sorted(conf.store.datacenter_replication.items()):
            if not str(rf).isdigit() or int(rf) < 1:
                raise exception.ConfigurationError(
                    reason='[store] datacenter_replication: %s:%s is not a '
                           'positive replication factor' % (dc, rf))
            parts.append("'%s': %d" % (dc.replace("'", "''"), int(rf)))
        replication = '{%s}' % ', '.join(parts)
    else:
        replication = ("{'class': 'SimpleStrategy', 'replication_factor': %d}"
                       % conf.store.replication_factor)
    return ('CREATE KEYSPACE IF NOT EXISTS %s WITH replication = %s'
            % (conf.store.keyspace, replication))


def current_version(session, keyspace: str) -> int:
    """The newest applied migration, 0 for an empty or missing keyspace."""
    meta = session.cluster.metadata.keyspaces.get(keyspace)
    if meta is None or 'schema_migrations' not in meta.tables:
        return 0
    rows = session.execute('SELECT version FROM %s.schema_migrations'
                           % keyspace)
    return max((r['version'] for r in rows), default=0)


def sync(session, conf) -> list[int]:
    """Bring the keyspace to LATEST; return the versions applied now."""
    keyspace = conf.store.keyspace
    session.execute(keyspace_ddl(conf))
    session.execute(_VERSION_TABLE.replace(
        'schema_migrations', keyspace + '.schema_migrations', 1))
    found = current_version(session, keyspace)
    if found > LATEST:
        raise exception.ConfigurationError(
            reason='keyspace %s is at schema version %d, newer than this '
                   'elastman (%d)' % (keyspace, found, LATEST))
    applied = []
    session.set_keyspace(keyspace)
    for migration in MIGRATIONS:
        if migration.version <= found:
            continue
        LOG.info('applying schema migration %d: %s', migration.version,
                 migration.description)
        for statement in migration.statements:
            session.execute(statement)
        session.execute(
            'INSERT INTO schema_migrations (version, description, applied_at)'
            ' VALUES (%s, %s, %s)',
            (migration.version, migration.description, timeutils.utcnow()))
        applied.append(migration.version)
    return applied


def check(session, conf) -> None:
    """Raise SchemaOutOfDate unless the keyspace is at LATEST."""
    found = current_version(session, conf.store.keyspace)
    if found != LATEST:
        raise exception.SchemaOutOfDate(keyspace=conf.store.keyspace,
                                        found=found, needed=LATEST)
