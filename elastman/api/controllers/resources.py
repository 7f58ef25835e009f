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
"""Read-only views below a cluster: nodes, capacity models, forecasts,
decision records and actions.
"""
from __future__ import annotations

import re
import uuid

from elastman.api.controllers import base
from elastman.api import errors
from elastman.api import views
from elastman.common import exception

RULE = 'elastman:cluster:%s'
MODEL_SCOPES = ('flavor', 'vm')
_METRIC = re.compile(r'^[A-Za-z0-9_.\-]{1,64}$')


def model_id(cluster_id, key: str) -> str:
    """Store key of a published model (see elastman.store.model_state)."""
    return '%s/%s' % (cluster_id, key)


class NodeController(base.Controller):

    def index(self, req, ctx, cluster_id):
        row = self.cluster(ctx, cluster_id, RULE % 'node:list')
        return 200, {'nodes': [views.node(n) for n in
                               self.store.nodes.list(row['id'])]}

    def show(self, req, ctx, cluster_id, node_id):
        row = self.cluster(ctx, cluster_id, RULE % 'node:get')
        try:
            node = self.store.nodes.get(row['id'], node_id)
        except exception.NotFound:
            raise errors.not_found('node %s not found' % node_id)
        return 200, {'node': views.node(node)}


class ModelController(base.Controller):

    def index(self, req, ctx, cluster_id):
        """Latest model of every flavour and VM of the cluster."""
        row = self.cluster(ctx, cluster_id, RULE % 'model:get')
        nodes = self.store.nodes.list(row['id'])
        flavors = {n['flavor'] for n in nodes if n.get('flavor')}
        flavors.update((row.get('policy') or {}).get('flavors') or ())
        wanted = [('flavor', f) for f in sorted(flavors)]
        wanted += [('vm', n['node_id']) for n in nodes]
        models = []
        for scope, key in wanted:
            try:
                found = self.store.models.get(scope, model_id(row['id'], key))
            except exception.NotFound:
                continue
            models.append(views.model(scope, key, found, document=False))
        return 200, {'models': models}

    def show(self, req, ctx, cluster_id, scope, key):
        row = self.cluster(ctx, cluster_id, RULE % 'model:get')
        if scope not in MODEL_SCOPES:
            raise errors.not_found('model scope must be flavor or vm')
        version = req.GET.get('version')
        if version is not None:
            try:
                version = int(version)
            except ValueError:
                raise errors.bad_request('version must be an integer')
            if not 1 <= version <= 2 ** 31 - 1:
                raise errors.bad_request('version must be a positive int32')
        try:
            found = self.store.models.get(scope, model_id(row['id'], key),
                                          version)
        except exception.NotFound:
            raise errors.not_found('no %s model %s for cluster %s'
                                   % (scope, key, cluster_id))
        return 200, {'model': views.model(scope, key, found)}


class ForecastController(base.Controller):

    def show(self, req, ctx, cluster_id, metric):
        """Newest forecasts first, with the forecaster weights."""
        row = self.cluster(ctx, cluster_id, RULE % 'forecast:get')
        if not _METRIC.match(metric):
            raise errors.bad_request('invalid metric name')
        limit, marker = self.page_args(req)
        page = self.page(lambda: self.store.forecasts.list(
            row['id'], metric, limit=limit, marker=marker))
        return 200, {'forecasts': [views.forecast(f) for f in page],
                     'next_marker': page.next_marker}


class DecisionController(base.Controller):

    def index(self, req, ctx, cluster_id):
        row = self.cluster(ctx, cluster_id, RULE % 'decision:list')
        limit, marker = self.page_args(req)
        page = self.page(lambda: self.store.actions.decisions(
            row['id'], limit=limit, marker=marker))
        return 200, {'decisions': [views.decision(row['id'], d)
                                   for d in page],
                     'next_marker': page.next_marker}


class ActionController(base.Controller):

    def index(self, req, ctx, cluster_id):
        """Newest first; ``kind`` and ``state`` filter within each page,
        so a page may hold fewer than ``limit`` actions.
        """
        row = self.cluster(ctx, cluster_id, RULE % 'action:list')
        limit, marker = self.page_args(req)
        kind, state = req.GET.get('kind'), req.GET.get('state')
        page = self.page(lambda: self.store.actions.list(
            row['id'], limit=limit, marker=marker))
        actions = [views.action(a) for a in page
                   if (kind is None or a['kind'] == kind)
                   and (state is None or a['state'] == state.upper())]
        return 200, {'actions': actions, 'next_marker': page.next_marker}

    def show(self, req, ctx, cluster_id, action_id):
        row = self.cluster(ctx, cluster_id, RULE % 'action:get')
        try:
            action = self.store.actions.get(row['id'], uuid.UUID(action_id))
        except (ValueError, exception.NotFound):
            raise errors.not_found('action %s not found' % action_id)
        return 200, {'action': views.action(action)}
