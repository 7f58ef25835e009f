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
"""Saving and restoring a cluster's trainer state in the store, in pieces.

A registry is stored as (see :mod:`elastman.store.capacity`):

* its own small document (parameters, last fit), versioned in ``models``
  under the scope ``trainer-state``;
* one capacity summary per VM and per flavour (``capacity_summaries``): the
  answering model, its version, the VM's flavour and cell revision;
* each VM's cells, one row per cell (``capacity_cells``).

:func:`save_state` writes only what changed since the last save, so a round
in which 1% of the VMs took samples writes about 1% of the cells.
:func:`load_capacity` gives the actuator a registry built from the summaries
alone; :func:`load_state` gives the trainer one that reads a VM's cells when a
refit first needs them. Published models are stored under ``vm`` /
``flavor`` with the key ``<cluster id>/<node or flavour>``.
"""
from __future__ import annotations

from typing import Any

from oslo_log import log as logging

from elastman.capacity import registry as model_registry
from elastman.capacity import serialization
from elastman.common import exception

LOG = logging.getLogger(__name__)

STATE_SCOPE = 'trainer-state'
#: the cells of the layout before capacity summaries: one blob per VM
LEGACY_CELLS_SCOPE = 'trainer-cells'
KEEP_STATE_VERSIONS = 3
KEEP_MODEL_VERSIONS = 20


def model_key(cluster_id: str, key: str) -> str:
    return '%s/%s' % (cluster_id, key)


def save_state(store, registry: model_registry.ModelRegistry) -> int | None:
    """Write what changed in ``registry`` since it was last saved.

    Returns the new version of the registry's document when that changed
    (a refit, new parameters, an import), else None.
    """
    changes = registry.changes()
    cluster_id = registry.cluster_id
    if changes.reset:
        store.capacity.drop_cells(cluster_id, changes.reset)
    store.capacity.save_cells(cluster_id, changes.cells)
    store.capacity.save_summaries(cluster_id, model_registry.VM, changes.vms)
    store.capacity.save_summaries(cluster_id, model_registry.FLAVOR,
                                  changes.flavors)
    if changes.removed:
        store.capacity.delete_summaries(cluster_id, model_registry.VM,
                                        changes.removed)
        store.capacity.drop_cells(cluster_id, changes.removed)
    version = None
    if changes.document is not None:
        version = store.models.save(STATE_SCOPE, cluster_id,
                                    serialization.dumps(changes.document),
                                    params=registry.params.to_dict(),
                                    summary={'nodes': len(registry.nodes)})
        store.models.prune(STATE_SCOPE, cluster_id, KEEP_STATE_VERSIONS)
    registry.mark_saved()
    return version


def _document(store, cluster_id: str) -> dict[str, Any] | None:
    try:
        row = store.models.get(STATE_SCOPE, cluster_id)
    except exception.NotFound:
        return None
    return serialization.loads(row['payload'])


def _from_document(store, cluster_id: str, doc: dict[str, Any],
                   with_cells: bool) -> model_registry.ModelRegistry | None:
    try:
        if doc.get('format') == serialization.STATE_FORMAT:
            return _legacy(store, cluster_id, doc)
        vms, flavors = store.capacity.summaries(cluster_id)

        def read_cells(nodes):
            return store.capacity.cells(cluster_id, nodes)

        loader = read_cells if with_cells else None
        return model_registry.ModelRegistry.from_summaries(doc, vms, flavors,
                                                           loader)
    except (serialization.FormatError, KeyError, ValueError, TypeError) as exc:
        LOG.error('saved trainer state of cluster %s is unusable (%s); '
                  'starting afresh', cluster_id, exc)
        return None


def load_state(store, cluster_id: str
               ) -> model_registry.ModelRegistry | None:
    """The saved registry of a cluster (None if there is none), reading each
    VM's cells only when a refit needs them.

    A cluster saved in the layout before capacity summaries (one document
    and one blob of cells per VM) is read whole and written again in pieces.
    """
    doc = _document(store, cluster_id)
    if doc is None:
        return None
    registry = _from_document(store, cluster_id, doc, with_cells=True)
    if registry is not None and doc.get('format') == serialization.STATE_FORMAT:
        registry.mark_all_changed()
        save_state(store, registry)
        store.models.delete_cells(LEGACY_CELLS_SCOPE, cluster_id)
        LOG.info('cluster %s: trainer state of %d VMs rewritten as capacity '
                 'summaries and cells', cluster_id, len(registry.nodes))
    return registry


def load_capacity(store, cluster_id: str
                  ) -> model_registry.ModelRegistry | None:
    """What the actuator decides from: the cluster's capacity summaries
    (each VM's and flavour's model and version), without any cell. The
    registry answers ``capacity()`` and ``versions()``; it cannot refit.
    """
    doc = _document(store, cluster_id)
    if doc is None:
        return None
    return _from_document(store, cluster_id, doc, with_cells=False)


def _legacy(store, cluster_id: str, state: dict[str, Any]
            ) -> model_registry.ModelRegistry:
    cells = store.models.cells(LEGACY_CELLS_SCOPE, cluster_id)
    state['grids'] = {node: serialization.loads(cells[node])
                      for node in state.get('nodes', {}) if node in cells}
    return model_registry.ModelRegistry.from_state(state)


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
               clusters: list[dict], exclude: str,
               candidates: list[tuple[float, str, dict]] | None = None
               ) -> dict[str, Any] | None:
    """The newest flavour model of ``flavor`` that another cluster learnt
    with a boundary (two classes) on the same features: a new cluster's
    prior. None if no other cluster has one. ``candidates`` (from
    :func:`prior_candidates`) spares reading every cluster's model again.
    """
    if candidates is None:
        candidates = prior_candidates(store, flavor, features, clusters)
    for fitted, cluster_id, doc in candidates:
        if cluster_id != exclude:
            LOG.info('flavour %s: prior from cluster %s', flavor, cluster_id)
            return doc
    return None


def prior_candidates(store, flavor: str, features: list[str],
                     clusters: list[dict]) -> list[tuple[float, str, dict]]:
    """Every cluster's two-class model of ``flavor`` on ``features``, as
    ``(fitted at, cluster id, document)``, newest first.
    """
    found = []
    for cluster in clusters:
        cluster_id = str(cluster['id'])
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
        found.append((fitted, cluster_id, doc))
    found.sort(key=lambda c: c[0], reverse=True)
    return found
