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
"""Capacity of a VM for a workload point: where the ray from the origin through
that point crosses the model's boundary.

The ray scales the load coordinates (read and write rate) and keeps the others
(data size, interference) at the workload's value. A linear boundary is crossed
in closed form; other kernels are scanned along the ray and the first met ->
violated sign change is refined with :func:`scipy.optimize.brentq`.

Each estimate also carries ``seen`` (:func:`seen_load`): how far along the ray
the model has data, so that a caller can tell a boundary crossing inside the
trained region from an extrapolation beyond it.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Sequence

import numpy as np

from elastman.capacity import model as model_mod

EXACT = 'exact'          # the boundary is crossed at ``scale``
LOWER = 'lower'          # capacity is at least this (no crossing seen / all met)
UPPER = 'upper'          # capacity is below this (all cells violated)
UNKNOWN = 'unknown'      # no labelled cell yet

SCAN_POINTS = 48
RAY_REACH = 1.5          # search up to this multiple of the data's extent


@dataclasses.dataclass
class CapacityEstimate:
    """Capacity ``c`` of a VM for the workload ``w``.

    ``capacity`` and ``load`` are in load units (sum of the load coordinates,
    i.e. requests per second): ``capacity = scale * load``. ``distance`` is
    the signed distance of ``w`` from the boundary in standardised feature
    units, positive on the SLO-met side (NaN for one-class models). ``seen``
    (load units) is the largest load along the ray inside the box of the
    model's training cells (:func:`seen_load`; NaN for an empty model).
    """

    capacity: float
    load: float
    scale: float
    point: list[float]
    distance: float
    bound: str
    model_kind: str
    source: str = ''
    seen: float = math.nan

    @property
    def excess(self) -> float:
        """(w - c) / c, the per-VM term of the scaling decision."""
        if not self.capacity > 0 or not math.isfinite(self.capacity):
            return math.inf if self.capacity == 0 else math.nan
        return (self.load - self.capacity) / self.capacity

    @property
    def violated(self) -> bool:
        return self.load > self.capacity

    def slowed(self, factor: float) -> 'CapacityEstimate':
        """This estimate, made on loads grown ``factor`` times (a slowed-down
        VM's, :func:`elastman.capacity.features.slowdown`), in the loads
        the VM serves: ``capacity``, ``load`` and ``seen`` divided by it.
        """
        if factor == 1.0:
            return self
        return dataclasses.replace(self, capacity=self.capacity / factor,
                                   load=self.load / factor,
                                   seen=self.seen / factor)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d['excess'] = self.excess
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in d.items()}


def _ray(model: model_mod.FittedModel, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Fixed part, load direction and load of ``w``."""
    mask = model.load_mask
    fixed = np.where(mask, 0.0, w)
    direction = np.where(mask, w, 0.0)
    load = float(direction.sum())
    if load <= 0:
        # an idle VM: answer for an even mix of the load coordinates
        direction = mask.astype(np.float64)
    return fixed, direction, load


def _reach(model: model_mod.FittedModel, direction: np.ndarray) -> float:
    """Largest scale of the ray still within the region the model has seen."""
    mask = model.load_mask & (direction > 0)
    ratios = (model.upper[mask] + model.granularity[mask] / 2) / direction[mask]
    return RAY_REACH * float(ratios.max()) if ratios.size else 1.0


def _one_class(model: model_mod.FittedModel, w: np.ndarray, fixed: np.ndarray,
               direction: np.ndarray, load: float) -> CapacityEstimate:
    """Bounds from monotonicity: met at p => met below p; violated at p =>
    violated above p (more load, bigger requests, more interference).
    """
    half = model.granularity / 2
    mask = model.load_mask
    pts = model.points
    if model.kind == model_mod.ALL_MET:
        corner = pts - half                       # surely-met corner of each cell
        ok = (corner[:, ~mask] >= fixed[~mask] - half[~mask]).all(axis=1)
        use = corner[ok] if ok.any() else corner
        with np.errstate(divide='ignore', invalid='ignore'):
            r = np.where(direction[mask] > 0, use[:, mask] / direction[mask], np.inf)
        scale = max(0.0, float(r.min(axis=1).max())) if len(use) else 0.0
        bound = LOWER
    else:
        corner = pts + half                       # surely-violated corner
        ok = (corner[:, ~mask] <= fixed[~mask] + half[~mask]).all(axis=1)
        use = corner[ok] if ok.any() else corner
        with np.errstate(divide='ignore', invalid='ignore'):
            r = np.where(direction[mask] > 0, use[:, mask] / direction[mask],
                         np.where(use[:, mask] > 0, np.inf, 0.0))
        scale = float(r.max(axis=1).min())
        bound = UPPER
    norm = float(direction.sum())
    return CapacityEstimate(capacity=scale * norm, load=load,
                            scale=scale * norm / load if load > 0 else math.inf,
                            point=(fixed + scale * direction).tolist(),
                            distance=math.nan, bound=bound, model_kind=model.kind)


def _seen(model: model_mod.FittedModel, direction: np.ndarray) -> float:
    """:func:`seen_load` for a ray direction already found by :func:`_ray`."""
    if model.upper is None:
        return math.nan
    mask = model.load_mask & (direction > 0)
    if not mask.any():
        return math.nan
    reach = model.upper[mask] + model.granularity[mask] / 2
    t = float((reach / direction[mask]).min())
    return t * float(direction[model.load_mask].sum())


def seen_load(model: model_mod.FittedModel, w: Sequence[float]) -> float:
    """How far along the ray through ``w`` the model has data: the largest
    load (req/s) on the ray that stays inside the box of the cells it was
    fitted on, met and violated alike (``upper`` plus half a cell on every
    load coordinate the ray moves along).

    A boundary crossing below it is bracketed by what the VM was seen to do;
    one beyond it is an extrapolation of the SVM, which the decision may
    refuse to trust (``extrapolation='lower'``). The simulator's elastman
    uses the same function, so its measured behaviour is the service's.
    NaN when the model records no extent (an empty model).
    """
    w = np.asarray(w, dtype=np.float64)
    _, direction, _ = _ray(model, w)
    return _seen(model, direction)


def capacity(model: model_mod.FittedModel, w: Sequence[float]) -> CapacityEstimate:
    """Capacity of ``model`` along the ray through workload point ``w``,
    with ``seen`` (:func:`seen_load`).
    """
    w = np.asarray(w, dtype=np.float64)
    if w.shape != model.load_mask.shape:
        raise ValueError('workload point has %d coordinates, model has %d'
                         % (w.size, model.load_mask.size))
    fixed, direction, load = _ray(model, w)
    est = _crossing(model, w, fixed, direction, load)
    est.seen = _seen(model, direction)
    return est


def _crossing(model: model_mod.FittedModel, w: np.ndarray, fixed: np.ndarray,
              direction: np.ndarray, load: float) -> CapacityEstimate:
    """Where the ray crosses the model's boundary (or the bound one class gives)."""
    if model.kind == model_mod.EMPTY:
        return CapacityEstimate(math.nan, load, math.nan, [], math.nan,
                                UNKNOWN, model.kind)
    if model.kind != model_mod.SVM:
        return _one_class(model, w, fixed, direction, load)

    reach = _reach(model, direction)
    if model.kernel == 'linear':
        f0 = float(model.decision(fixed)[0])
        slope = float(model.coef @ (direction / model.scale))
        if f0 <= 0:
            scale, bound = 0.0, EXACT
        elif slope < 0 and -f0 / slope <= reach * 10:
            scale, bound = -f0 / slope, EXACT
        else:
            scale, bound = reach, LOWER
    else:
        ts = np.linspace(0.0, reach, SCAN_POINTS + 1)
        f = model.decision(fixed[None, :] + ts[:, None] * direction[None, :])
        if f[0] <= 0:
            scale, bound = 0.0, EXACT
        else:
            below = np.flatnonzero(f <= 0)
            if below.size == 0:
                scale, bound = reach, LOWER
            else:
                i = int(below[0])
                g = lambda t: float(model.decision(fixed + t * direction)[0])  # noqa: E731
                # scipy only for curved boundaries: a process that
                # evaluates linear models never loads it
                from scipy.optimize import brentq
                scale = brentq(g, ts[i - 1], ts[i], xtol=reach * 1e-5)
                bound = EXACT

    grad = model.gradient(w)
    gnorm = float(np.linalg.norm(grad))
    dist = float(model.decision(w)[0]) / gnorm if gnorm > 0 else math.nan
    norm = float(direction.sum())
    return CapacityEstimate(capacity=scale * norm, load=load,
                            scale=scale * norm / load if load > 0 else math.inf,
                            point=(fixed + scale * direction).tolist(),
                            distance=dist, bound=bound, model_kind=model.kind)


def capacities(model: model_mod.FittedModel,
               points: Sequence[Sequence[float]]) -> list[CapacityEstimate]:
    """:func:`capacity` for many workload points at once (one row each).

    A linear SVM is answered in closed form for all rows together, which is
    what keeps a decision over a thousand VMs within milliseconds; other
    models are answered row by row.
    """
    w = np.asarray(points, dtype=np.float64).reshape(-1, model.load_mask.size)
    if not len(w):
        return []
    if model.kind != model_mod.SVM or model.kernel != 'linear':
        return [capacity(model, row) for row in w]
    mask = model.load_mask
    fixed = np.where(mask, 0.0, w)
    direction = np.where(mask, w, 0.0)
    load = direction.sum(axis=1)
    idle = load <= 0
    direction[idle] = mask.astype(np.float64)
    f0 = model.decision(fixed)
    slope = (direction / model.scale) @ model.coef
    # the ray's reach (_reach) and the extent of the training data (_seen)
    moving = mask[None, :] & (direction > 0)
    extent = (model.upper + model.granularity / 2)[None, :]
    with np.errstate(divide='ignore', invalid='ignore'):
        ratios = np.where(moving, extent / direction, np.nan)
    any_moving = moving.any(axis=1)
    reach = np.where(any_moving, RAY_REACH * np.nanmax(
        np.where(any_moving[:, None], ratios, 1.0), axis=1), 1.0)
    t_seen = np.nanmin(np.where(any_moving[:, None], ratios, np.nan), axis=1) \
        if any_moving.any() else np.full(len(w), np.nan)
    norm = direction.sum(axis=1)
    seen = np.where(any_moving, t_seen * direction[:, mask].sum(axis=1), np.nan)
    with np.errstate(divide='ignore', invalid='ignore'):
        cross = -f0 / slope
    crossing = (f0 > 0) & (slope < 0) & (cross <= reach * 10)
    scale = np.where(f0 <= 0, 0.0, np.where(crossing, cross, reach))
    bound = np.where((f0 <= 0) | crossing, EXACT, LOWER)
    gnorm = float(np.linalg.norm(model.coef))
    dist = model.decision(w) / gnorm if gnorm > 0 else np.full(len(w), np.nan)
    # plain floats and lists, converted once for all rows: a thousand VMs
    # element by element spend more in numpy scalars than in the algebra
    caps = (scale * norm).tolist()
    loads = load.tolist()
    crossed = (fixed + scale[:, None] * direction).tolist()
    return [CapacityEstimate(capacity=c, load=ld,
                             scale=c / ld if ld > 0 else math.inf,
                             point=p, distance=d, bound=b,
                             model_kind=model.kind, seen=s)
            for c, ld, p, d, b, s in zip(caps, loads, crossed, dist.tolist(),
                                         bound.tolist(), seen.tolist())]
