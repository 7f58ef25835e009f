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
"""elastman's state in Cassandra: one facade over small repositories."""
from __future__ import annotations

from elastman.store import actions
from elastman.store import capacity
from elastman.store import clusters
from elastman.store import connection
from elastman.store import credentials
from elastman.store import forecasts
from elastman.store import hosts
from elastman.store import leases
from elastman.store import members
from elastman.store import models
from elastman.store import nodes
from elastman.store import samples
from elastman.store import schema


class Store:
    """A session on elastman's keyspace and the repositories that use it."""

    def __init__(self, session, conf) -> None:
        self.session = session
        self.clusters = clusters.ClusterRepository(session, conf)
        self.nodes = nodes.NodeRepository(session, conf)
        self.samples = samples.SampleRepository(session, conf)
        self.models = models.ModelRepository(session, conf)
        self.capacity = capacity.CapacityRepository(session, conf)
        self.forecasts = forecasts.ForecastRepository(session, conf)
        self.actions = actions.ActionRepository(session, conf)
        self.leases = leases.LeaseRepository(session, conf)
        self.members = members.MemberRepository(session, conf)
        self.hosts = hosts.HostRepository(session, conf)
        self.credentials = credentials.CredentialRepository(session, conf)

    @classmethod
    def open(cls, conf, check_schema: bool = True) -> 'Store':
        """Connect to the keyspace; SchemaOutOfDate if it needs a sync."""
        session = connection.connect(conf)
        try:
            if check_schema:
                schema.check(session, conf)
        except Exception:
            connection.close(session)
            raise
        return cls(session, conf)

    def close(self) -> None:
        connection.close(self.session)
