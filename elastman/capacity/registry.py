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
labelled cells of both labels, otherwise by its flavour's model. Where
neither has a boundary and both have only met the SLO, the flavour's answers
too: its pooled cells reach at least as far as the VM's own, so a VM that
joined at a low load is not held to the little it has served yet (its
siblings of the same flavour served more within the SLO).

State in pieces: a registry tells what changed since it was last saved
(:meth:`ModelRegistry.changes`): the cells the samples touched, one summary
per VM and per flavour (its model, version and cell revision), and its own
small document (parameters, last fit). A registry rebuilt from the summaries
(:meth:`ModelRegistry.from_summaries`) answers capacities at once; it reads a
VM's cells through its ``cell_loader`` only when a model that needs them is
refitted, and files the samples that came before in the meantime.

A flavour's memory: with ``keep_departed`` a VM that leaves the cluster hands
its cells to its flavour (:meth:`ModelRegistry.unregister_node`). While the
flavour's serving VMs have no violated cell, the flavour pools its memory
with their cells. The boundary a VM learnt by crossing the SLO outlives the
VM: a scale-in that removes the VMs that crossed it does not leave the
flavour with met cells only, nor with the boundary it last fitted, which
the new met cells cannot move. Where serving VMs have crossed the SLO
themselves, their cells alone are the flavour's: old crossings (an
interference episode the index did not explain, a crowd) do not pile up.
The memory is stored as cells under :func:`memory_key`; the flavour's
summary holds its revision.
"""
from __future__ import annotations

import collections
from collections import abc
import dataclasses
import math
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
from oslo_log import log as logging

from elastman.capacity import capacity as cap_mod
from elastman.capacity import features as feat_mod
from elastman.capacity import grid as grid_mod
from elastman.capacity import model as model_mod
from elastman.capacity.params import ModelParams
from elastman.capacity import serialization as ser
from elastman.capacity.validation import check_sample
from elastman.capacity.validation import InvalidSample
from elastman.common import schedule

LOG = logging.getLogger(__name__)

VM = 'vm'
FLAVOR = 'flavor'
REGISTRY_FORMAT = 'elastman.capacity.registry'

#: Reads the stored cells of some VMs: ``loader(node ids)`` returns
#: ``{node id: {cell name: encoded cell}}`` (see :mod:`.grid`).
CellLoader = Callable[[Sequence[str]], Mapping[str, Mapping[str, bytes]]]

#: What a flavour's memory is stored under in place of a node id
MEMORY_PREFIX = 'flavor-memory:'


def memory_key(flavor: str) -> str:
    """The cell owner a flavour's memory is stored as."""
    return MEMORY_PREFIX + flavor


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


@dataclasses.dataclass
class Changes:
    """What changed in a registry since it was last saved.

    ``cells``: per VM, its changed cells (name -> encoded cell); ``reset``:
    VMs whose stored cells are to be dropped first (their grid restarted);
    ``vms``/``flavors``: summaries to write, each with only the fields that
    changed (``model`` is present when the model or its version changed);
    ``removed``: VMs that left; ``document``: the registry's own document
    when it changed (else None).
    """

    cells: dict[str, dict[str, bytes]]
    reset: set[str]
    vms: dict[str, dict[str, Any]]
    flavors: dict[str, dict[str, Any]]
    removed: set[str]
    document: dict[str, Any] | None

    @property
    def n_cells(self) -> int:
        return sum(len(c) for c in self.cells.values())

    def __bool__(self) -> bool:
        return bool(self.cells or self.reset or self.vms or self.flavors
                    or self.removed or self.document is not None)


def _fit_job(job: tuple) -> model_mod.FittedModel:
    x, y, w, params, mask, now = job
    return model_mod.fit(x, y, params, mask, now, weights=w)


#: A flavour keeps its boundary when its cells turn one-class (the load
#: stays below it) unless more than this share of their weight lies on the
#: wrong side of it: a boundary the VMs keep crossing within the SLO (one
#: learnt from a transient overload whose violated cells were pruned since)
#: would otherwise hold every VM "possibly over capacity" for good.
MAX_CONTRADICTED = 0.5


def misclassified(model: model_mod.FittedModel, x: Any, y: Any, w: Any) -> float:
    """The share of the cells' weight (all cells alike when none has any)
    that ``model`` puts on the other side of its boundary.
    """
    x, y, w = np.asarray(x, dtype=float), np.asarray(y), np.asarray(w, dtype=float)
    if not len(y) or not model.two_class:
        return 0.0
    if not w.sum() > 0:
        w = np.ones(len(y))
    wrong = model.predict(x) != np.where(y > 0, 1, -1)
    return float(w[wrong].sum() / w.sum())


class ModelRegistry:
    """Capacity models of the VMs of one cluster."""

    def __init__(self, cluster_id: str, params: ModelParams,
                 features: Sequence[feat_mod.Feature] | None = None,
                 cell_loader: CellLoader | None = None) -> None:
        self.cluster_id = cluster_id
        self.params = params
        self.features = list(features or feat_mod.load_features(params.features))
        self._check_features()
        self.nodes: dict[str, str] = {}              # node id -> flavour
        self.grids: dict[str, grid_mod.CellGrid] = {}   # loaded cells
        self.vm_slots: dict[str, _Slot] = {}
        self.flavor_slots: dict[str, _Slot] = {}
        self.last_fit: float | None = None
        self.rejected: collections.Counter[str] = collections.Counter()
        self.accepted = 0
        #: newest sample time the owner has read per VM (filed or not)
        self.sampled_until: dict[str, float] = {}
        self.cell_loader = cell_loader
        # cells still in the store: node -> (their revision, sampled_until
        # as stored); samples filed for them meanwhile wait in _pending
        self._unloaded: dict[str, tuple[int, float | None]] = {}
        self._pending: dict[str, list[tuple[list[float], float, float]]] = {}
        # changes since the last save
        self._dirty_vms: dict[str, set[str]] = {}
        self._dirty_flavors: set[str] = set()
        self._removed: set[str] = set()
        self._reset: set[str] = set()
        self._document_dirty = True     # a new registry has never been saved

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
        known = self.nodes.get(node_id)
        if known == flavor:
            return
        if known is not None:
            LOG.info('node %s moves from flavour %s to %s: its cells restart',
                     node_id, known, flavor)
            self._restart_grid(node_id)
            self.vm_slots.pop(node_id, None)
            self.flavor_slots.setdefault(known, _Slot()).fitted_revision = -1
            self._dirty('vm', node_id, 'model')
        self.nodes[node_id] = flavor
        if node_id not in self._unloaded:
            self.grids.setdefault(node_id, self._new_grid())
        self.vm_slots.setdefault(node_id, _Slot())
        self.flavor_slots.setdefault(flavor, _Slot())
        self._removed.discard(node_id)
        self._dirty('vm', node_id, 'flavor', 'revision')

    def unregister_node(self, node_id: str) -> None:
        """Forget ``node_id``. With ``keep_departed`` its cells join its
        flavour's memory; otherwise they leave the flavour pool at the next
        refit.
        """
        if self.params.keep_departed and node_id in self.nodes:
            self._remember(node_id)
        flavor = self.nodes.pop(node_id, None)
        self.grids.pop(node_id, None)
        self._unloaded.pop(node_id, None)
        self._pending.pop(node_id, None)
        self.vm_slots.pop(node_id, None)
        self.sampled_until.pop(node_id, None)
        self._dirty_vms.pop(node_id, None)
        self._reset.discard(node_id)
        if flavor is not None:
            self.flavor_slots.setdefault(flavor, _Slot()).fitted_revision = -1
            self._removed.add(node_id)

    def _remember(self, node_id: str) -> None:
        """Fold the cells of ``node_id`` into its flavour's memory."""
        flavor = self.nodes[node_id]
        key = memory_key(flavor)
        try:
            self.load_cells([node_id, key])
        except RuntimeError as exc:
            LOG.warning('cluster %s: the cells of departing node %s stay out '
                        'of flavour %s\'s memory: %s', self.cluster_id,
                        node_id, flavor, exc)
            return
        grid = self.grids.get(node_id)
        if grid is None or not len(grid):
            return
        memory = self.grids.setdefault(key, self._new_grid())
        memory.absorb(grid)
        self._dirty(FLAVOR, flavor)
        LOG.debug('cluster %s: flavour %s keeps the %d cells of departed node '
                  '%s', self.cluster_id, flavor, len(grid), node_id)

    def has_memory(self, flavor: str) -> bool:
        """Whether ``flavor`` keeps cells of departed VMs."""
        key = memory_key(flavor)
        return key in self.grids or key in self._unloaded

    def _new_grid(self) -> grid_mod.CellGrid:
        return grid_mod.CellGrid(self.params.granularity_vector(),
                                 self.params.buffer_size)

    def _restart_grid(self, node_id: str) -> None:
        """Empty cells for ``node_id``; its stored cells are dropped at the
        next save. The revision keeps growing, so that no fit of the old
        cells passes for a fit of the new ones.
        """
        revision = self.revision(node_id) + 1 if node_id in self.nodes else 0
        self._unloaded.pop(node_id, None)
        self._pending.pop(node_id, None)
        grid = self.grids[node_id] = self._new_grid()
        grid.revision = revision
        self._reset.add(node_id)

    def revision(self, node_id: str) -> int:
        """How many samples the VM's cells have taken (grows with each)."""
        grid = self.grids.get(node_id)
        if grid is not None:
            return grid.revision
        return self._unloaded[node_id][0] + len(self._pending.get(node_id, ()))

    def loaded(self, node_id: str) -> bool:
        """Whether the VM's cells are in memory."""
        return node_id in self.grids

    def load_cells(self, node_ids: Iterable[str]) -> int:
        """Read the cells of the given VMs that are still in the store (and
        file the samples that waited for them); returns how many VMs.
        """
        need = [n for n in node_ids if n in self._unloaded]
        if not need:
            return 0
        if self.cell_loader is None:
            raise RuntimeError('cells of %d VM(s) of cluster %s are in the store '
                               'and this registry cannot read them'
                               % (len(need), self.cluster_id))
        stored = self.cell_loader(need)
        gran, size = self.params.granularity_vector(), self.params.buffer_size
        for node in need:
            revision, _ = self._unloaded.pop(node)
            try:
                grid = grid_mod.CellGrid.from_cells(gran, size,
                                                    stored.get(node) or {},
                                                    revision)
            except ValueError as exc:
                LOG.error('cluster %s: stored cells of node %s are unusable '
                          '(%s); they restart', self.cluster_id, node, exc)
                grid = self._new_grid()
                grid.revision = revision
                self._reset.add(node)
            pending = self._pending.pop(node, ())
            for point, value, ts in pending:
                grid.add(point, value, ts)
            self.grids[node] = grid
            if pending or node in self._reset:
                self._dirty(VM, node, 'revision')
        return len(need)

    def _dirty(self, scope: str, key: str, *fields: str) -> None:
        if scope == VM:
            self._dirty_vms.setdefault(key, set()).update(fields)
        else:
            self._dirty_flavors.add(key)

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
        node = sample['node_id']
        if self.params.scales_by_interference:
            try:
                point = feat_mod.scale_loads(self.features, point,
                                             feat_mod.slowdown(sample))
            except ValueError as exc:
                self.rejected['interference_index'] += 1
                LOG.warning('capacity model of cluster %s: sample of node %s '
                            'rejected: %s', self.cluster_id, node, exc)
                return False
        grid = self.grids.get(node)
        if grid is not None:
            grid.add(point, value, ts)
            self._dirty(VM, node, 'revision')
        else:   # stored with the cells once they are loaded
            self._pending.setdefault(node, []).append((point, value, ts))
        self.accepted += 1
        return True

    def note_sampled(self, node_id: str, ts: float) -> None:
        """The owner has read ``node_id``'s samples up to ``ts`` (epoch s),
        whether they were filed or left out; saved with the VM's summary so
        that another owner resumes reading after it.
        """
        if node_id in self.nodes and ts > self.sampled_until.get(node_id, -math.inf):
            self.sampled_until[node_id] = ts
            if node_id in self.grids:
                self._dirty(VM, node_id, 'revision')

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

    def is_due(self, now: float, phase: float | None = None) -> bool:
        """Whether a refit is due at ``now``: ``update_period`` after the
        last fit, or at the registry's ``phase`` of the period
        (:func:`elastman.common.schedule.is_due`).
        """
        return schedule.is_due(now, self.last_fit, self.params.update_period,
                               phase)

    def _training_set(self, grids: list[grid_mod.CellGrid], now: float):
        p = self.params
        kw = dict(now=now, max_age=p.cell_max_age, half_life=p.recency_half_life,
                  weight_floor=p.recency_floor, keep_violated=p.keep_violated,
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
        due: list[tuple[str, str, list[str]]] = []
        revisions: dict[tuple[str, str], int] = {}
        by_flavor: dict[str, list[str]] = collections.defaultdict(list)
        for node, flavor in self.nodes.items():
            by_flavor[flavor].append(node)
            revision = self.revision(node)
            if force or revision != self.vm_slots[node].fitted_revision:
                due.append((VM, node, [node]))
                revisions[(VM, node)] = revision
        for flavor, members in by_flavor.items():
            slot = self.flavor_slots.setdefault(flavor, _Slot())
            pool = self._flavor_pool(flavor, members)
            rev = sum(self.revision(n) for n in pool) + len(pool)
            if force or rev != slot.fitted_revision:
                due.append((FLAVOR, flavor, pool))
                revisions[(FLAVOR, flavor)] = rev
        # only the models refitted now need their cells
        self.load_cells({n for _, _, members in due for n in members})
        jobs = []
        for scope, key, members in due:
            x, y, w = self._pool(scope, key, members, now)
            jobs.append((scope, key, (x, y, w, self.params, mask, now)))
        mapper = executor.map if executor is not None else map
        models = list(mapper(_fit_job, [j[2] for j in jobs]))
        updates = []
        for (scope, key, (x, y, w, *_)), model in zip(jobs, models):
            slot = (self.vm_slots if scope == VM else self.flavor_slots)[key]
            slot.fitted_revision = revisions[(scope, key)]
            self._dirty(scope, key, 'fitted_revision')
            if (scope == FLAVOR and slot.model is not None and slot.model.two_class
                    and not model.two_class):
                wrong = misclassified(slot.model, x, y, w)
                if wrong <= MAX_CONTRADICTED:
                    LOG.debug('flavour %s keeps its two-class model over a %s '
                              'fit', key, model.kind)
                    continue
                LOG.info('flavour %s: its cells contradict its boundary (%.0f%% '
                         'of their weight on the wrong side); their own fit '
                         '(%s) replaces it', key, 100 * wrong, model.kind)
            if slot.model is not None and _same(slot.model, model):
                continue
            slot.model, slot.imported = model, False
            slot.version += 1
            self._dirty(scope, key, 'model')
            updates.append(self._update(scope, key, slot))
        self.last_fit = now
        self._document_dirty = True
        return updates

    def _flavor_pool(self, flavor: str, members: list[str]) -> list[str]:
        """The grids a flavour model may pool: its VMs' and its memory's."""
        return members + ([memory_key(flavor)] if self.has_memory(flavor) else [])

    def flavor_training_set(self, flavor: str, now: float
                            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The cells a refit at ``now`` would fit the flavour's model on:
        centres, labels (+1 met, -1 violated) and SVM sample weights.
        """
        pool = self._flavor_pool(
            flavor, [n for n, f in self.nodes.items() if f == flavor])
        self.load_cells(pool)
        return self._pool(FLAVOR, flavor, pool, now)

    def _pool(self, scope: str, key: str, members: list[str], now: float):
        """The training set of a model: its VMs' cells; for a flavour whose
        serving VMs have crossed no boundary (no violated cell), its
        memory's cells with them.
        """
        memory = memory_key(key) if scope == FLAVOR else None
        serving = [n for n in members if n != memory]
        x, y, w = self._training_set([self.grids[n] for n in serving], now)
        if len(serving) < len(members) and not (y < 0).any():
            x, y, w = self._training_set([self.grids[n] for n in members], now)
        return x, y, w

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
        if (flav is not None and flav.kind == model_mod.ALL_MET
                and own is not None and own.kind == model_mod.ALL_MET):
            # both only met the SLO: the flavour's pooled cells reach further
            return flav, FLAVOR
        if own is not None and own.kind != model_mod.EMPTY:
            return own, VM
        if flav is not None:
            return flav, FLAVOR
        return own, VM

    def point_and_slowdown(self, workload: Mapping[str, Any] | Sequence[float]
                           ) -> tuple[list[float], float]:
        """Feature coordinates of a sample-like dict, its loads grown by its
        :meth:`slowdown`, and that slowdown (read once: a decision asks both
        of every VM); a bare sequence is the point itself, slowdown 1.
        """
        # collections.abc, not typing: typing's isinstance is several times
        # slower, and this runs for every VM of every decision
        if isinstance(workload, abc.Mapping):
            factor = self.slowdown(workload)
            point = feat_mod.extract_point(self.features, workload)
            return feat_mod.scale_loads(self.features, point, factor), factor
        return [float(v) for v in workload], 1.0

    def slowdown(self, workload: Mapping[str, Any] | Sequence[float]) -> float:
        """How many times the load of ``workload`` counts: ``1 +`` its
        interference index when the index scales the load, else 1 (also for
        a bare point, and for an index that is not a number >= 0).
        """
        if (not self.params.scales_by_interference
                or not isinstance(workload, abc.Mapping)):
            return 1.0
        try:
            return feat_mod.slowdown(workload)
        except ValueError:
            return 1.0

    def capacity(self, node_id: str, workload: Mapping[str, Any] | Sequence[float]
                 ) -> cap_mod.CapacityEstimate:
        """Capacity of ``node_id`` along the ray through ``workload``, with
        ``seen``: how far along that ray the answering model has data
        (:func:`capacity.seen_load`).
        """
        model, source = self.model_for(node_id)
        point, factor = self.point_and_slowdown(workload)
        if model is None:
            est = cap_mod.CapacityEstimate(math.nan, float('nan'), math.nan, [],
                                           math.nan, cap_mod.UNKNOWN,
                                           model_mod.EMPTY)
        else:
            est = cap_mod.capacity(model, point).slowed(factor)
        est.source = source
        return est

    # -- parameters ------------------------------------------------------

    def drop_models(self) -> None:
        """Forget every fitted model (their feature space is gone); the next
        round refits from the cells.
        """
        for node, slot in self.vm_slots.items():
            slot.model = None
            self._dirty(VM, node, 'model')
        for flavor, slot in self.flavor_slots.items():
            slot.model = None
            self._dirty(FLAVOR, flavor)
        self.last_fit = None
        self._document_dirty = True

    def update_params(self, params: ModelParams) -> None:
        """Adopt new parameters; cells survive unless the grid itself changed."""
        if params.grid_signature() != self.params.grid_signature() or \
                params.buffer_size != self.params.buffer_size:
            LOG.info('cluster %s: grid parameters changed, capacity cells restart',
                     self.cluster_id)
            self.features = feat_mod.load_features(params.features)
            self.params = params
            for node in self.nodes:
                self._restart_grid(node)
                self._dirty(VM, node, 'revision')
            for flavor in list(self.flavor_slots):
                if self.has_memory(flavor):
                    self.grids.pop(memory_key(flavor), None)
                    self._unloaded.pop(memory_key(flavor), None)
                    self._reset.add(memory_key(flavor))
                    self._dirty(FLAVOR, flavor)
        self.params = params
        self._document_dirty = True
        for slot in list(self.vm_slots.values()) + list(self.flavor_slots.values()):
            slot.fitted_revision = -1

    # -- state -----------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume: params, members, cells, models
        (reads the cells still in the store first).
        """
        self.load_cells(list(self.nodes))

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
        self._dirty(FLAVOR, flavor, 'model')
        self._document_dirty = True
        return self._update(FLAVOR, flavor, slot)

    # -- state in pieces ---------------------------------------------------

    def document(self) -> dict[str, Any]:
        """The registry's own small document (no VM, no cell)."""
        return ser.wrap(REGISTRY_FORMAT, {
            'cluster_id': self.cluster_id,
            'params': self.params.to_dict(),
            'last_fit': self.last_fit})

    def _vm_summary(self, node: str, fields: set[str]) -> dict[str, Any]:
        slot = self.vm_slots[node]
        if node in self._unloaded:
            # what the store holds; samples waiting for the cells are
            # saved with them (and read again by an owner that restarts)
            revision, until = self._unloaded[node]
        else:
            revision, until = self.revision(node), self.sampled_until.get(node)
        out: dict[str, Any] = {'revision': revision, 'sampled_until': until}
        if 'flavor' in fields or 'model' in fields:
            out['flavor'] = self.nodes[node]
        if fields & {'model', 'fitted_revision', 'flavor'}:
            out['fitted_revision'] = slot.fitted_revision
        if 'model' in fields or 'flavor' in fields:
            out.update(_slot_summary(slot))
        return out

    def changes(self) -> Changes:
        """What changed since :meth:`mark_saved` (see :class:`Changes`)."""
        cells = {}
        for node, grid in self.grids.items():
            if grid.n_changed:
                cells[node] = grid.changed_cells()
        vms = {node: self._vm_summary(node, fields)
               for node, fields in self._dirty_vms.items() if node in self.nodes}
        flavors = {}
        for flavor in self._dirty_flavors:
            slot = self.flavor_slots.get(flavor)
            if slot is not None:
                flavors[flavor] = dict(_slot_summary(slot),
                                       fitted_revision=slot.fitted_revision,
                                       revision=self._memory_revision(flavor))
        return Changes(cells=cells, reset=set(self._reset), vms=vms,
                       flavors=flavors, removed=set(self._removed),
                       document=self.document() if self._document_dirty else None)

    def _memory_revision(self, flavor: str) -> int | None:
        return self.revision(memory_key(flavor)) if self.has_memory(flavor) else None

    def mark_saved(self) -> None:
        """Everything :meth:`changes` returned is stored."""
        for grid in self.grids.values():
            grid.mark_saved()
        self._dirty_vms.clear()
        self._dirty_flavors.clear()
        self._removed.clear()
        self._reset.clear()
        self._document_dirty = False

    def mark_all_changed(self) -> None:
        """Treat everything as changed (e.g. to write a new layout)."""
        for node, grid in self.grids.items():
            grid.mark_all_changed()
            self._reset.add(node)
        for node in self.nodes:
            self._dirty(VM, node, 'flavor', 'model', 'revision')
        self._dirty_flavors.update(self.flavor_slots)
        self._document_dirty = True

    @classmethod
    def from_summaries(cls, document: Mapping[str, Any],
                       vms: Mapping[str, Mapping[str, Any]],
                       flavors: Mapping[str, Mapping[str, Any]],
                       cell_loader: CellLoader | None = None,
                       features: Sequence[feat_mod.Feature] | None = None
                       ) -> 'ModelRegistry':
        """A registry from its document and its VM and flavour summaries
        (the form :meth:`changes` writes). Its cells stay in the store until
        a refit needs them (``cell_loader``); without a loader it answers
        capacities and versions but cannot refit.
        """
        body = ser.unwrap(REGISTRY_FORMAT, document)
        reg = cls(body['cluster_id'], ModelParams.from_dict(body['params']),
                  features, cell_loader)
        reg.last_fit = body.get('last_fit')
        reg._document_dirty = False
        for key, row in flavors.items():
            reg.flavor_slots[key] = _slot_from_summary(row)
            # a flavour's revision is its memory's (None: it has none)
            if row.get('revision') is not None:
                reg._unloaded[memory_key(key)] = (int(row['revision']), None)
        for node, row in vms.items():
            flavor = row.get('flavor') or 'default'
            reg.nodes[node] = flavor
            reg.vm_slots[node] = _slot_from_summary(row)
            reg.flavor_slots.setdefault(flavor, _Slot())
            until = row.get('sampled_until')
            until = None if until is None else float(until)
            reg._unloaded[node] = (int(row.get('revision') or 0), until)
            if until is not None:
                reg.sampled_until[node] = until
        return reg


def _slot_summary(slot: _Slot) -> dict[str, Any]:
    return {'version': slot.version, 'imported': slot.imported,
            'model': slot.model.to_dict() if slot.model is not None else None}


def _slot_from_summary(row: Mapping[str, Any]) -> _Slot:
    model = row.get('model')
    fitted = row.get('fitted_revision')
    return _Slot(model_mod.FittedModel.from_dict(model) if model else None,
                 int(row.get('version') or 0),
                 -1 if fitted is None else int(fitted),
                 bool(row.get('imported')))


def _same(a: model_mod.FittedModel, b: model_mod.FittedModel) -> bool:
    """True when two fits describe the same model (fit time aside)."""
    da, db = a.to_dict(), b.to_dict()
    da.pop('fitted_at'), db.pop('fitted_at')
    return da == db
