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
