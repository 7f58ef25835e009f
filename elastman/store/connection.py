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
"""Connecting to elastman's Cassandra store."""
from __future__ import annotations

import logging as std_logging
import socket

import cassandra
from cassandra import auth
from cassandra import cluster as cql_cluster
from cassandra import policies
from cassandra import query
from oslo_log import log as logging
import tenacity

from elastman.common import exception

LOG = logging.getLogger(__name__)


def _where(conf) -> str:
    return ', '.join('%s:%d' % (h, conf.store.port)
                     for h in conf.store.contact_points)


def connect(conf, keyspace: str | None = None) -> cql_cluster.Session:
    """Return a session on the store; StoreUnavailable if it cannot be had.

    Rows come back as dicts. Connecting is retried ``[store]
    connect_retries`` times, because a store node may still be starting.
    """
    profile = cql_cluster.ExecutionProfile(
        load_balancing_policy=policies.TokenAwarePolicy(
            policies.DCAwareRoundRobinPolicy()),
        request_timeout=conf.store.request_timeout,
        row_factory=query.dict_factory,
        consistency_level=cassandra.ConsistencyLevel.LOCAL_QUORUM,
        serial_consistency_level=cassandra.ConsistencyLevel.LOCAL_SERIAL)
    auth_provider = None
    if conf.store.username:
        auth_provider = auth.PlainTextAuthProvider(conf.store.username,
                                                   conf.store.password or '')

    def _new_cluster() -> cql_cluster.Cluster:
        return cql_cluster.Cluster(
            contact_points=conf.store.contact_points, port=conf.store.port,
            auth_provider=auth_provider,
            connect_timeout=conf.store.connect_timeout,
            control_connection_timeout=conf.store.request_timeout,
            execution_profiles={cql_cluster.EXEC_PROFILE_DEFAULT: profile},
            reconnection_policy=policies.ExponentialReconnectionPolicy(
                1.0, conf.store.reconnect_max_delay),
            # Without it a request of a few kilobytes (a predictor's state
            # document) waits for the store's delayed ACK: about 45 ms per
            # write on loopback instead of about 1 (Nagle's algorithm).
            sockopts=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
            protocol_version=cassandra.ProtocolVersion.V5)

    @tenacity.retry(stop=tenacity.stop_after_attempt(conf.store.connect_retries),
                    wait=tenacity.wait_fixed(1),
                    retry=tenacity.retry_if_exception_type(
                        cql_cluster.NoHostAvailable),
                    reraise=True)
    def _connect() -> cql_cluster.Session:
        # A Cluster that failed to connect has shut itself down: every
        # attempt needs a new one. The driver logs each refused connection
        # with a traceback; the outcome is reported as one line instead.
        cluster = _new_cluster()
        driver_log = logging.getLogger('cassandra.cluster').logger
        level = driver_log.level
        driver_log.setLevel(std_logging.CRITICAL)
        try:
            return cluster.connect(keyspace)
        except Exception:
            cluster.shutdown()
            raise
        finally:
            driver_log.setLevel(level)

    try:
        return _connect()
    except cql_cluster.NoHostAvailable as exc:
        reasons = '; '.join('%s: %s' % (h, e) for h, e in exc.errors.items())
        raise exception.StoreUnavailable(where=_where(conf),
                                         reason=reasons or str(exc))
    except cassandra.InvalidRequest as exc:
        raise exception.StoreUnavailable(where=_where(conf), reason=str(exc))


def close(session: cql_cluster.Session) -> None:
    session.cluster.shutdown()
