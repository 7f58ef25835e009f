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
"""In-memory online trainer of one cluster's capacity models.

Independent of transport and store: the trainer worker feeds it samples, calls
:meth:`ModelRegistry.refit` when :meth:`ModelRegistry.is_due`, stores and
publishes the :class:`ModelUpdate` list it gets back, and persists
:meth:`ModelRegistry.state_dict` so that a restarted (or another) trainer
resumes with :meth:`ModelRegistry.from_state`.

Models: one per VM and one per flavour (the cells of the flavour's VMs pooled
by cell). A VM is answered by its own model once that has ``min_cells``
labelled cells of both labels, otherwise by its flavour's model.
"""
from __future__ import annotations

import collections
import dataclasses
import math
from typing import Any, Iterable, Mapping, Sequence

from oslo_log import log as logging

from elastman.capacity import capacity as cap_mod
from elastman.capacity import features as feat_mod
from elastman.capacity import grid as grid_mod
from elastman.capacity import model as model_mod
from elastman.capacity.params import ModelParams
from elastman.capacity import serialization as ser
from elastman.capacity.validation import check_sample
from elastman.capacity.validation import InvalidSample

LOG = logging.getLogger(__name__)

VM = 'vm'
FLAVOR = 'flavor'


@dataclasses.dataclass
class ModelUpdate:
    """A model that changed at a refit: store it and publish it."""

    scope: str            # 'vm' or 'flavor'
    key: str              # node id or flavour name
    version: int
    model: model_mod.FittedModel
    document: dict[str, Any]   # versioned, JSON-compatible (serialization)


@dataclasses.dataclass
class _Slot:
    model: model_mod.FittedModel | None = None
    version: int = 0
    fitted_revision: int = -1
    imported: bool = False


def _fit_job(job: tuple) -> model_mod.FittedModel:
    x, y, w, params, mask, now = job
    return model_mod.fit(x, y, params, mask, now, weights=w)


class ModelRegistry:
    """Capacity models of the VMs of one cluster."""

    def __init__(self, cluster_id: str, params: ModelParams,
                 features: Sequence[feat_mod.Feature] | None = None) -> None:
        self.cluster_id = cluster_id
        self.params = params
        self.features = list(features or feat_mod.load_features(params.features))
        self._check_features()
        self.nodes: dict[str, str] = {}              # node id -> flavour
        self.grids: dict[str, grid_mod.CellGrid] = {}
        self.vm_slots: dict[str, _Slot] = {}
        self.flavor_slots: dict[str, _Slot] = {}
        self.last_fit: float | None = None
        self.rejected: collections.Counter[str] = collections.Counter()
        self.accepted = 0

    def _check_features(self) -> None:
        names = [f.name for f in self.features]
        if names != list(self.params.features):
            raise ValueError('features %s do not match params %s'
                             % (names, list(self.params.features)))

    @property
    def load_mask(self) -> list[bool]:
        return [f.scales_with_load for f in self.features]

    # -- membership ------------------------------------------------------

    def register_node(self, node_id: str, flavor: str) -> None:
        """Start (or keep) modelling ``node_id`` of ``flavor``."""
        if self.nodes.get(node_id) not in (None, flavor):
            LOG.info('node %s moves from flavour %s to %s: its cells restart',
                     node_id, self.nodes[node_id], flavor)
            self.grids.pop(node_id, None)
            self.vm_slots.pop(node_id, None)
        self.nodes[node_id] = flavor
        self.grids.setdefault(node_id, self._new_grid())
        self.vm_slots.setdefault(node_id, _Slot())
        self.flavor_slots.setdefault(flavor, _Slot())

    def unregister_node(self, node_id: str) -> None:
        """Forget ``node_id`` (its cells leave the flavour pool at the next refit)."""
        flavor = self.nodes.pop(node_id, None)
        self.grids.pop(node_id, None)
        self.vm_slots.pop(node_id, None)
        if flavor is not None:
            self.flavor_slots.setdefault(flavor, _Slot()).fitted_revision = -1

    def _new_grid(self) -> grid_mod.CellGrid:
        return grid_mod.CellGrid(self.params.granularity_vector(),
                                 self.params.buffer_size)

    # -- samples ---------------------------------------------------------

    def add_sample(self, sample: Mapping[str, Any]) -> bool:
        """Validate and file one monitor sample; False (logged) if rejected."""
        try:
            point, value, ts = check_sample(sample, self.features,
                                            self.params.slo_metric,
                                            known_nodes=self.nodes,
                                            cluster_id=self.cluster_id)
        except InvalidSample as exc:
            self.rejected[exc.reason.split(' (')[0]] += 1
            LOG.warning('capacity model of cluster %s: sample of node %s '
                        'rejected: %s', self.cluster_id, exc.node_id, exc.reason)
            return False
        self.grids[sample['node_id']].add(point, value, ts)
        self.accepted += 1
        return True

    def add_samples(self, samples: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
        """File many samples; returns (accepted, rejected)."""
        ok = bad = 0
        for s in samples:
            if self.add_sample(s):
                ok += 1
            else:
                bad += 1
        return ok, bad

    # -- fitting ---------------------------------------------------------

    def is_due(self, now: float) -> bool:
        return self.last_fit is None or now - self.last_fit >= self.params.update_period

    def _training_set(self, grids: list[grid_mod.CellGrid], now: float):
        p = self.params
        kw = dict(now=now, max_age=p.cell_max_age, half_life=p.recency_half_life,
                  keep_violated=p.keep_violated,
                  prune=p.prune_conflicts)
        if len(grids) == 1:
            return grids[0].labelled(p.slo_threshold_ms, p.confidence, **kw)
        return grid_mod.pool(grids, p.slo_threshold_ms, p.confidence, **kw)

    def refit(self, now: float, force: bool = False,
              executor: Any = None) -> list[ModelUpdate]:
        """Refit the models whose cells changed since their last fit.

        ``executor`` (e.g. a ProcessPoolExecutor) spreads the fits; returns
        the models that changed, with their new versions.
        """
        mask = self.load_mask
        jobs: list[tuple[str, str, tuple]] = []
        revisions: dict[tuple[str, str], int] = {}
        by_flavor: dict[str, list[str]] = collections.defaultdict(list)
        for node, flavor in self.nodes.items():
            by_flavor[flavor].append(node)
            grid, slot = self.grids[node], self.vm_slots[node]
            if force or grid.revision != slot.fitted_revision:
                x, y, w = self._training_set([grid], now)
                jobs.append((VM, node, (x, y, w, self.params, mask, now)))
                revisions[(VM, node)] = grid.revision
        for flavor, members in by_flavor.items():
            slot = self.flavor_slots.setdefault(flavor, _Slot())
            rev = sum(self.grids[n].revision for n in members) + len(members)
            if force or rev != slot.fitted_revision:
                x, y, w = self._training_set([self.grids[n] for n in members], now)
                jobs.append((FLAVOR, flavor, (x, y, w, self.params, mask, now)))
                revisions[(FLAVOR, flavor)] = rev
        mapper = executor.map if executor is not None else map
        models = list(mapper(_fit_job, [j[2] for j in jobs]))
        updates = []
        for (scope, key, _), model in zip(jobs, models):
            slot = (self.vm_slots if scope == VM else self.flavor_slots)[key]
            slot.fitted_revision = revisions[(scope, key)]
            if (scope == FLAVOR and slot.model is not None and slot.model.two_class
                    and not model.two_class):
                LOG.debug('flavour %s keeps its two-class model over a %s fit',
                          key, model.kind)
                continue
            if slot.model is not None and _same(slot.model, model):
                continue
            slot.model, slot.imported = model, False
            slot.version += 1
            updates.append(self._update(scope, key, slot))
        self.last_fit = now
        return updates

    def _update(self, scope: str, key: str, slot: _Slot) -> ModelUpdate:
        return ModelUpdate(scope, key, slot.version, slot.model,
                           self._document(scope, key, slot))

    def _document(self, scope: str, key: str, slot: _Slot) -> dict[str, Any]:
        return ser.model_to_dict(slot.model, cluster_id=self.cluster_id,
                                 scope=scope, key=key, version=slot.version,
                                 params=self.params.to_dict())

    # -- queries ---------------------------------------------------------

    def vm_model(self, node_id: str) -> model_mod.FittedModel | None:
        slot = self.vm_slots.get(node_id)
        return slot.model if slot else None

    def flavor_model(self, flavor: str) -> model_mod.FittedModel | None:
        slot = self.flavor_slots.get(flavor)
        return slot.model if slot else None

    def versions(self) -> dict[str, dict[str, int]]:
        return {VM: {k: s.version for k, s in self.vm_slots.items()},
                FLAVOR: {k: s.version for k, s in self.flavor_slots.items()}}

    def model_for(self, node_id: str) -> tuple[model_mod.FittedModel | None, str]:
        """The model that answers for ``node_id`` and its source ('vm'/'flavor')."""
        if node_id not in self.nodes:
            raise KeyError('unknown node %r' % (node_id,))
        own = self.vm_model(node_id)
        flav = self.flavor_model(self.nodes[node_id])
        if own is not None and own.two_class and own.n_cells >= self.params.min_cells:
            return own, VM
        if flav is not None and flav.two_class:
            return flav, FLAVOR
        if own is not None and own.kind != model_mod.EMPTY:
            return own, VM
        if flav is not None:
            return flav, FLAVOR
        return own, VM

    def point_of(self, workload: Mapping[str, Any] | Sequence[float]) -> list[float]:
        """Feature coordinates of a sample-like dict, or the sequence itself."""
        if isinstance(workload, Mapping):
            return feat_mod.extract_point(self.features, workload)
        return [float(v) for v in workload]

    def capacity(self, node_id: str, workload: Mapping[str, Any] | Sequence[float]
                 ) -> cap_mod.CapacityEstimate:
        """Capacity of ``node_id`` along the ray through ``workload``, with
        ``seen``: how far along that ray the answering model has data
        (:func:`capacity.seen_load`).
        """
        model, source = self.model_for(node_id)
        point = self.point_of(workload)
        if model is None:
            est = cap_mod.CapacityEstimate(math.nan, float('nan'), math.nan, [],
                                           math.nan, cap_mod.UNKNOWN,
                                           model_mod.EMPTY)
        else:
            est = cap_mod.capacity(model, point)
        est.source = source
        return est

    # -- parameters ------------------------------------------------------

    def update_params(self, params: ModelParams) -> None:
        """Adopt new parameters; cells survive unless the grid itself changed."""
        if params.grid_signature() != self.params.grid_signature() or \
                params.buffer_size != self.params.buffer_size:
            LOG.info('cluster %s: grid parameters changed, capacity cells restart',
                     self.cluster_id)
            self.features = feat_mod.load_features(params.features)
            self.params = params
            self.grids = {n: self._new_grid() for n in self.nodes}
        self.params = params
        for slot in list(self.vm_slots.values()) + list(self.flavor_slots.values()):
            slot.fitted_revision = -1

    # -- state -----------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume: params, members, cells, models."""
        def slots(d: dict[str, _Slot]) -> dict[str, Any]:
            return {k: {'version': s.version, 'imported': s.imported,
                        'model': s.model.to_dict() if s.model else None}
                    for k, s in d.items()}
        return ser.wrap(ser.STATE_FORMAT, {
            'cluster_id': self.cluster_id,
            'params': self.params.to_dict(),
            'nodes': dict(self.nodes),
            'grids': {n: g.to_dict() for n, g in self.grids.items()},
            'vm_models': slots(self.vm_slots),
            'flavor_models': slots(self.flavor_slots),
            'last_fit': self.last_fit})

    @classmethod
    def from_state(cls, doc: Mapping[str, Any],
                   features: Sequence[feat_mod.Feature] | None = None
                   ) -> 'ModelRegistry':
        body = ser.unwrap(ser.STATE_FORMAT, doc)
        reg = cls(body['cluster_id'], ModelParams.from_dict(body['params']), features)
        reg.nodes = dict(body['nodes'])
        reg.grids = {n: grid_mod.CellGrid.from_dict(g) for n, g in body['grids'].items()}
        for name, target in (('vm_models', reg.vm_slots), ('flavor_models', reg.flavor_slots)):
            for key, s in body[name].items():
                model = model_mod.FittedModel.from_dict(s['model']) if s['model'] else None
                target[key] = _Slot(model, int(s['version']), -1, bool(s['imported']))
        for node in reg.nodes:
            reg.grids.setdefault(node, reg._new_grid())
            reg.vm_slots.setdefault(node, _Slot())
        reg.last_fit = body.get('last_fit')
        return reg

    def export_flavor_model(self, flavor: str) -> dict[str, Any]:
        """A flavour's model as a versioned document for another cloud."""
        slot = self.flavor_slots.get(flavor)
        if slot is None or slot.model is None:
            raise KeyError('no model for flavour %r' % (flavor,))
        doc = self._document(FLAVOR, flavor, slot)
        doc['meta']['flavor'] = flavor
        return doc

    def import_flavor_model(self, doc: Mapping[str, Any],
                            flavor: str | None = None) -> ModelUpdate:
        """Seed a flavour with an exported model (kept until this cluster's
        own cells give a two-class model).
        """
        model, meta = ser.model_from_dict(doc)
        if list(model.features) != list(self.params.features):
            raise ValueError('model features %s do not match this cluster (%s)'
                             % (model.features, list(self.params.features)))
        if model.slo_metric != self.params.slo_metric or not math.isclose(
                model.slo_threshold_ms, self.params.slo_threshold_ms):
            LOG.warning('imported model was trained for %s <= %s ms; this '
                        'cluster uses %s <= %s ms', model.slo_metric,
                        model.slo_threshold_ms, self.params.slo_metric,
                        self.params.slo_threshold_ms)
        flavor = flavor or meta.get('flavor') or meta.get('key')
        if not flavor:
            raise ValueError('the document names no flavour; pass one')
        slot = self.flavor_slots.setdefault(flavor, _Slot())
        slot.model, slot.imported = model, True
        slot.version += 1
        return self._update(FLAVOR, flavor, slot)


def _same(a: model_mod.FittedModel, b: model_mod.FittedModel) -> bool:
    """True when two fits describe the same model (fit time aside)."""
    da, db = a.to_dict(), b.to_dict()
    da.pop('fitted_at'), db.pop('fitted_at')
    return da == db
