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
"""/v1/clusters: register or create, show, rename, delete, scale."""
from __future__ import annotations

import uuid

from oslo_log import log as logging

from elastman.api.controllers import access
from elastman.api.controllers import base
from elastman.api import errors
from elastman.api import schemas
from elastman.api import views
from elastman.common import exception
from elastman.common import trusts
from elastman.lifecycle import service as lifecycle

LOG = logging.getLogger(__name__)

RULE = 'elastman:cluster:%s'
DEFAULT_CQL_PORT = 9042
DEFAULT_JMX_PORT = 7199


def _split_seed(seed: str, default_port: int) -> tuple[str, int]:
    host, sep, port = seed.rpartition(':')
    if not sep or host.endswith(':') or (':' in host and not
                                         host.endswith(']')):
        return seed, default_port        # no port, or a bare IPv6 address
    try:
        value = int(port)
    except ValueError:
        raise errors.bad_request('seed %r: port is not a number' % seed)
    if not 1 <= value <= 65535:
        raise errors.bad_request('seed %r: port out of range' % seed)
    return host.strip('[]'), value


class ClusterController(base.Controller):

    def _needs_trust(self) -> bool:
        """Whether clusters act in their projects through trusts: the API
        knows its callers (Keystone) and the actuator boots Nova servers.
        """
        return (self.conf.api.auth_strategy == 'keystone'
                and self.conf.actuator.compute_driver == 'nova')

    def _trust(self, req, ctx) -> str | None:
        """A trust from the caller to the [trustee] user in the caller's
        project, or None where clusters need none.
        """
        if not self._needs_trust():
            return None
        if not trusts.configured(self.conf):
            raise errors.APIError(500, 'elastman cannot act in project %s: '
                                  '[trustee] auth_type is not set'
                                  % ctx.project_id)
        user_auth = req.environ.get('keystone.token_auth')
        if user_auth is None:
            raise errors.APIError(401, 'a user token is needed to delegate '
                                  'to elastman')
        try:
            return trusts.create_trust(self.conf, user_auth, ctx.user_id,
                                       ctx.project_id, list(ctx.roles))
        except trusts.TrustError as exc:
            raise errors.APIError(403, str(exc))

    def _lifecycle(self, ctx) -> lifecycle.ClusterService:
        """The lifecycle service, casting each action to the actuator."""
        return lifecycle.ClusterService(
            self.conf, self.store,
            notify=lambda row, action: self._cast(ctx, row, action))

    def _renew_trust(self, req, ctx, row: dict) -> dict:
        """A cluster whose trust Keystone no longer accepts (expired,
        deleted, trustor gone) gets a new one from the caller, a member of
        its project, before the caller's request is carried out.
        """
        spec = dict(row.get('spec') or {})
        old = spec.get('trust_id')
        if not old or not self._needs_trust():
            return row
        try:
            trusts.trust_session(self.conf, old, row['project_id'])
            return row
        except trusts.TrustError as exc:
            LOG.info('cluster %s: %s', row['id'], exc)
        spec['trust_id'] = self._trust(req, ctx)
        LOG.info('cluster %s: trust %s replaces %s, which Keystone refuses',
                 row['id'], spec['trust_id'], old)
        return self.store.clusters.update(row['id'], spec=spec)

    def index(self, req, ctx):
        limit, marker = self.page_args(req)
        all_projects = req.GET.get('all_projects', 'false').lower()
        if all_projects not in ('true', 'false', '1', '0', 'yes', 'no'):
            raise errors.bad_request('all_projects must be true or false')
        target = {'project_id': ctx.project_id}
        self.enforcer.check(ctx, RULE % 'list', target)
        project = ctx.project_id
        if all_projects in ('true', '1', 'yes'):
            self.enforcer.check(ctx, RULE % 'list_all_projects', target)
            project = None
        page = self.page(lambda: self.store.clusters.list(
            project, limit=limit, marker=marker))
        return 200, {'clusters': [
            views.cluster(row, self.store.nodes.list(row['id']))
            for row in page], 'next_marker': page.next_marker}

    def create(self, req, ctx):
        body = self.body(req)
        body = schemas.validate(schemas.CLUSTER_CREATE, body)
        self.enforcer.check(ctx, RULE % 'create',
                            {'project_id': ctx.project_id})
        policy = (schemas.normalize_policy(body['policy'])
                  if 'policy' in body else {})
        doc = access.document(body)
        if doc is not None:
            access.check_keys(self.conf)
        cql_port = body.get('cql_port', DEFAULT_CQL_PORT)
        spec = {'cql_port': cql_port,
                'jmx_port': body.get('jmx_port', DEFAULT_JMX_PORT),
                'security': access.summary(doc)}
        spec.update({k: body[k] for k in schemas.SERVER_FIELDS if k in body})
        trust_id = self._trust(req, ctx)
        if trust_id:
            spec['trust_id'] = trust_id
        # the credentials first: a row nobody reaches is all a failure here
        # can leave, and no worker ever sees the cluster without them
        cluster_id = uuid.uuid4()
        if doc is not None:
            self.store.credentials.set(cluster_id, doc)
        try:
            row = self._create(ctx, body, spec, policy, cluster_id)
        except Exception:
            if doc is not None:
                self.store.credentials.delete(cluster_id)
            if trust_id:
                self._lifecycle(ctx).drop_trust(cluster_id, trust_id)
            raise
        LOG.info('cluster %s (%s) %s for project %s', row['id'], row['name'],
                 row['spec']['mode'], ctx.project_id)
        nodes = self.store.nodes.list(row['id'])
        return 201, {'cluster': views.cluster(row, nodes, detail=True)}

    def _create(self, ctx, body: dict, spec: dict, policy: dict,
                cluster_id: uuid.UUID) -> dict:
        service = self._lifecycle(ctx)
        seeds = [_split_seed(s, spec['cql_port'])
                 for s in body.get('seeds', ())]
        if seeds:
            row, _action = service.register(
                ctx.project_id, body['name'], dict(spec, flavor=body.get(
                    'flavor')), policy, seeds, requested_by=ctx.user_id,
                cluster_id=cluster_id)
        else:
            row, _action = service.create(
                ctx.project_id, body['name'], dict(
                    spec, flavor=body['flavor'], image=body['image'],
                    size=body['size']), policy, requested_by=ctx.user_id,
                cluster_id=cluster_id)
        return row

    def show(self, req, ctx, cluster_id):
        row = self.cluster(ctx, cluster_id, RULE % 'get')
        nodes = self.store.nodes.list(row['id'])
        return 200, {'cluster': views.cluster(row, nodes, detail=True)}

    def update(self, req, ctx, cluster_id):
        body = self.body(req)
        body = schemas.validate(schemas.CLUSTER_UPDATE, body)
        row = self.cluster(ctx, cluster_id, RULE % 'update')
        row = self.store.clusters.update(row['id'], **body)
        nodes = self.store.nodes.list(row['id'])
        return 200, {'cluster': views.cluster(row, nodes, detail=True)}

    def delete(self, req, ctx, cluster_id):
        """Unregister (204), or for a managed cluster with servers, a trust
        or an action under way, ask the actuator to delete them (202; the
        cluster goes DELETING).
        """
        row = self.cluster(ctx, cluster_id, RULE % 'delete')
        if (row.get('spec') or {}).get('mode') == 'managed':
            row = self._renew_trust(req, ctx, row)
        action = self._lifecycle(ctx).delete(row, requested_by=ctx.user_id)
        if action is not None:
            return 202, None
        LOG.info('cluster %s deleted by project %s', row['id'],
                 ctx.project_id)
        return 204, None

    def scale(self, req, ctx, cluster_id):
        body = self.body(req)
        body = schemas.validate(schemas.CLUSTER_SCALE, body)
        row = self.cluster(ctx, cluster_id, RULE % 'scale')
        if row['state'] not in lifecycle.SCALABLE:
            raise errors.APIError(409, 'cluster %s is %s' % (cluster_id,
                                                             row['state']))
        row = self._renew_trust(req, ctx, row)
        try:
            action = self._lifecycle(ctx).scale(
                row, body['count'], body.get('flavor'),
                requested_by=ctx.user_id)
        except lifecycle.Conflict as exc:
            raise errors.APIError(409, str(exc))
        except lifecycle.OutOfBounds as exc:
            raise errors.bad_request(str(exc))
        return 202, {'action': views.action(action)}

    def _cast(self, ctx, row: dict, action: dict) -> None:
        """Tell the actuator of a journalled action (it finds a PENDING one
        by itself when it was down).
        """
        if self.actuator is None:
            return
        params = action['params']
        try:
            self.actuator.scale(ctx, str(row['id']), params['count'],
                                params['flavor'],
                                action_id=str(action['id']))
        except exception.ElastmanException as exc:
            LOG.warning('actuator not reachable (%s); action %s stays '
                        'PENDING', exc, action['id'])
