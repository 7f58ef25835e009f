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
"""Saving and restoring a cluster's trainer state in the store.

The registry's cells go to ``model_cells`` (one row per VM, so a large cluster
never writes one huge value); the rest of its state (parameters, members,
fitted models) is one versioned document in ``models`` under the scope
``trainer-state``. Published models are stored under ``vm`` / ``flavor`` with
the key ``<cluster id>/<node or flavour>``.
"""
from __future__ import annotations

from typing import Any

from oslo_log import log as logging

from elastman.capacity import registry as model_registry
from elastman.capacity import serialization
from elastman.common import exception

LOG = logging.getLogger(__name__)

STATE_SCOPE = 'trainer-state'
CELLS_SCOPE = 'trainer-cells'
KEEP_STATE_VERSIONS = 3
KEEP_MODEL_VERSIONS = 20


def model_key(cluster_id: str, key: str) -> str:
    return '%s/%s' % (cluster_id, key)


def save_state(store, registry: model_registry.ModelRegistry) -> int:
    state = registry.state_dict()
    grids = state.pop('grids')
    store.models.save_cells(CELLS_SCOPE, registry.cluster_id, {
        node: serialization.dumps(grid) for node, grid in grids.items()})
    version = store.models.save(STATE_SCOPE, registry.cluster_id,
                                serialization.dumps(state),
                                params=registry.params.to_dict(),
                                summary={'nodes': len(registry.nodes),
                                         'accepted': registry.accepted})
    store.models.prune(STATE_SCOPE, registry.cluster_id, KEEP_STATE_VERSIONS)
    return version


def load_state(store, cluster_id: str
               ) -> model_registry.ModelRegistry | None:
    """The saved registry of a cluster, or None if there is none."""
    try:
        row = store.models.get(STATE_SCOPE, cluster_id)
    except exception.NotFound:
        return None
    state: dict[str, Any] = serialization.loads(row['payload'])
    cells = store.models.cells(CELLS_SCOPE, cluster_id)
    state['grids'] = {node: serialization.loads(cells[node])
                      for node in state.get('nodes', {}) if node in cells}
    try:
        return model_registry.ModelRegistry.from_state(state)
    except (serialization.FormatError, KeyError, ValueError) as exc:
        LOG.error('saved trainer state of cluster %s is unusable (%s); '
                  'starting afresh', cluster_id, exc)
        return None


def save_update(store, cluster_id: str,
                update: model_registry.ModelUpdate) -> int:
    """Store one published model; returns the store's version number."""
    key = model_key(cluster_id, update.key)
    version = store.models.save(
        update.scope, key, serialization.dumps(update.document),
        params=update.document.get('meta', {}).get('params', {}),
        summary={'kind': update.model.kind, 'n_cells': update.model.n_cells,
                 'registry_version': update.version})
    store.models.prune(update.scope, key, KEEP_MODEL_VERSIONS)
    return version


def find_prior(store, flavor: str, features: list[str],
               clusters: list[dict], exclude: str) -> dict[str, Any] | None:
    """The newest flavour model of ``flavor`` that another cluster learnt
    with a boundary (two classes) on the same features: a new cluster's
    prior. None if no other cluster has one.
    """
    best = None
    for cluster in clusters:
        cluster_id = str(cluster['id'])
        if cluster_id == exclude:
            continue
        try:
            row = store.models.get(model_registry.FLAVOR,
                                   model_key(cluster_id, flavor))
        except exception.NotFound:
            continue
        if (row.get('summary') or {}).get('kind') != 'svm':
            continue
        doc = serialization.loads(row['payload'])
        model = doc.get('model') or {}
        if list(model.get('features') or []) != list(features):
            continue
        fitted = float(model.get('fitted_at') or 0.0)
        if best is None or fitted > best[0]:
            best = (fitted, cluster_id, doc)
    if best is None:
        return None
    LOG.info('flavour %s: prior from cluster %s', flavor, best[1])
    return best[2]
