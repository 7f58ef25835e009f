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
"""Creating, registering, scaling and deleting a cluster, written once.

The API (:mod:`elastman.api.controllers.clusters`) and the CLI
(``elastman-manage local-cluster``) both call :class:`ClusterService`, as
Senlin's API and command line both go through its engine service: each
front end checks its own input and the caller's rights, the service writes
what a lifecycle request is in the store, the same way for both. A request
that needs servers created or deleted is an action journalled PENDING
before anyone is told of it; the actuator holding the cluster's lease
carries it out. ``notify`` (the API: a cast to the actuator) only hurries
it: an actuator finds a PENDING action in the journal on its own.
"""
from __future__ import annotations

from typing import Callable
import uuid

from oslo_log import log as logging

from elastman.common import exception
from elastman.common import trusts
from elastman.store import nodes as nodes_store

LOG = logging.getLogger(__name__)

#: A cluster takes a scale request in these states only.
SCALABLE = ('ACTIVE', 'ERROR')

#: ``notify(cluster, action)``: tell the actuator of a journalled action.
Notify = Callable[[dict, dict], None]


class LifecycleError(exception.ElastmanException):
    msg_fmt = '%(reason)s'


class Conflict(LifecycleError):
    """The cluster's state does not allow the request."""


class OutOfBounds(LifecycleError):
    """The requested size lies outside the cluster's policy bounds."""


class ClusterService:
    """A cluster's lifecycle on ``store``."""

    def __init__(self, conf, store, notify: Notify | None = None) -> None:
        self.conf = conf
        self.store = store
        self.notify = notify

    # create and register ------------------------------------------------------
    def create(self, project_id: str, name: str, spec: dict, policy: dict,
               *, requested_by: str | None,
               cluster_id: uuid.UUID | None = None) -> tuple[dict, dict]:
        """A managed cluster: its row, CREATING, and the ``create`` action
        for ``spec['size']`` servers of ``spec['flavor']``.
        """
        spec = dict(spec, mode='managed')
        row = self.store.clusters.create(project_id, name, spec, policy,
                                         state='CREATING',
                                         **_given(cluster_id))
        action = self.request(row, 'create', spec['size'], spec['flavor'],
                              requested_by=requested_by)
        return row, action

    def register(self, project_id: str, name: str, spec: dict, policy: dict,
                 seeds: list[tuple[str, int]], *, requested_by: str | None,
                 cluster_id: uuid.UUID | None = None) -> tuple[dict, dict]:
        """An existing cluster: its row, ACTIVE, its seeds as nodes, and the
        ``register`` action that discovers its ring and maps it to servers.
        """
        spec = dict(spec, mode='registered',
                    seeds=['%s:%d' % s for s in seeds])
        row = self.store.clusters.create(project_id, name, spec, policy,
                                         state='ACTIVE',
                                         **_given(cluster_id))
        for host, port in seeds:
            self.store.nodes.upsert(row['id'], host, address=host,
                                    cql_port=port, seed=True,
                                    state=nodes_store.UNKNOWN, flavor=spec.get('flavor'),
                                    jmx_host=host, jmx_port=spec['jmx_port'])
        action = self.request(row, 'register', len(seeds), None,
                              requested_by=requested_by)
        return row, action

    # scale --------------------------------------------------------------------
    def scale(self, cluster: dict, count: int, flavor: str | None, *,
              requested_by: str | None) -> dict:
        """The ``scale`` action to ``count`` nodes; Conflict while the
        cluster is busy, OutOfBounds outside its policy's sizes.
        """
        if cluster['state'] not in SCALABLE:
            raise Conflict(reason='cluster %s is %s' % (cluster['id'],
                                                        cluster['state']))
        policy = cluster.get('policy') or {}
        low, high = policy.get('min_size', 1), policy.get('max_size', 1000)
        if not low <= count <= high:
            raise OutOfBounds(reason='count %d is outside the policy bounds '
                              '[%d, %d]' % (count, low, high))
        return self.request(cluster, 'scale', count, flavor,
                            requested_by=requested_by)

    # delete -------------------------------------------------------------------
    def delete(self, cluster: dict, *,
               requested_by: str | None) -> dict | None:
        """Delete the cluster. A managed cluster with servers, a trust or an
        unfinished action goes DELETING and gets a ``delete`` action (the one
        already journalled, if any), which is returned; any other cluster
        (registered: its servers are not elastman's) is gone on return, its
        trust deleted too, and None is returned.
        """
        spec = cluster.get('spec') or {}
        nodes = self.store.nodes.list(cluster['id'])
        unfinished = self.unfinished(cluster['id'])
        journalled = [a for a in unfinished if a['kind'] == 'delete']
        if journalled:
            return journalled[-1]
        if spec.get('mode') == 'managed' and (
                spec.get('trust_id') or unfinished
                or any(n.get('server_id') for n in nodes)):
            self.store.clusters.update(cluster['id'], state='DELETING',
                                       status_reason='delete requested')
            return self.request(cluster, 'delete', 0, None,
                                requested_by=requested_by)
        for node in nodes:
            self.store.nodes.delete(cluster['id'], node['node_id'])
        self.store.clusters.delete(cluster['id'])
        if spec.get('trust_id'):
            self.drop_trust(cluster['id'], spec['trust_id'])
        LOG.info('cluster %s (%s) deleted', cluster['id'], cluster['name'])
        return None

    def drop_trust(self, cluster_id, trust_id: str) -> None:
        """Delete a trust elastman no longer needs (a failure is logged)."""
        try:
            trusts.delete_trust(self.conf, trust_id)
        except (trusts.TrustError, exception.ConfigurationError) as exc:
            LOG.warning('cluster %s: its trust %s not deleted: %s',
                        cluster_id, trust_id, exc)

    # the journal --------------------------------------------------------------
    def request(self, cluster: dict, kind: str, count: int,
                flavor: str | None, *, requested_by: str | None) -> dict:
        """Journal ``kind`` for ``cluster`` as a PENDING action, then notify.
        """
        action = self.store.actions.create(
            cluster['id'], kind, {'count': count, 'flavor': flavor,
                                  'requested_by': requested_by},
            step='requested', state='PENDING')
        if self.notify is not None:
            try:
                self.notify(cluster, action)
            except Exception:  # the journal row is what counts
                LOG.exception('cannot tell the actuator of the %s of cluster '
                              '%s; action %s stays PENDING', kind,
                              cluster['id'], action['id'])
        return action

    def unfinished(self, cluster_id) -> list[dict]:
        """The cluster's actions that are not over, oldest first."""
        return sorted(self.store.actions.unfinished(cluster_id),
                      key=lambda a: a['created_at'])


def _given(cluster_id: uuid.UUID | None) -> dict:
    return {} if cluster_id is None else {'cluster_id': cluster_id}
