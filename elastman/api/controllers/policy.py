"""/v1/clusters/{cluster_id}/policy: the one scaling policy of a cluster."""
from __future__ import annotations

from elastman.api.controllers import base
from elastman.api import errors
from elastman.api import schemas

RULE = 'elastman:cluster:policy:%s'


class PolicyController(base.Controller):

    def show(self, req, ctx, cluster_id):
        row = self.cluster(ctx, cluster_id, RULE % 'get')
        if not row.get('policy'):
            raise errors.not_found('cluster %s has no scaling policy'
                                   % cluster_id)
        return 200, {'policy': row['policy']}

    def update(self, req, ctx, cluster_id):
        """Replace the policy (absent fields take their defaults)."""
        body = self.body(req)
        row = self.cluster(ctx, cluster_id, RULE % 'set')
        policy = schemas.normalize_policy(body)
        row = self.store.clusters.update(row['id'], policy=policy)
        return 200, {'policy': row['policy']}

    def delete(self, req, ctx, cluster_id):
        row = self.cluster(ctx, cluster_id, RULE % 'delete')
        if not row.get('policy'):
            raise errors.not_found('cluster %s has no scaling policy'
                                   % cluster_id)
        self.store.clusters.update(row['id'], policy={})
        return 204, None
