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
"""Parameters of the capacity model (defaults in [trainer], overridable per
cluster policy).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

KERNELS = ('linear', 'rbf', 'poly')
SOLVERS = ('auto', 'libsvm', 'liblinear')
#: how a linear model keeps more load from meeting the SLO better
MONOTONE_OFF, MONOTONE_DROP, MONOTONE_TOTAL = 'off', 'drop', 'total'
MONOTONE = (MONOTONE_OFF, MONOTONE_DROP, MONOTONE_TOTAL)
SLO_METRICS = ('read_p50_ms', 'read_p95_ms', 'read_p99_ms',
               'write_p50_ms', 'write_p95_ms', 'write_p99_ms',
               'read_with_queue_p99_ms')

DEFAULT_FEATURES = ('read_rate', 'write_rate', 'data_size')
#: the host agents' interference index: a feature, or the load's scale
INTERFERENCE = 'interference_index'
DEFAULT_GRANULARITY = {'read_rate': 100.0, 'write_rate': 100.0,
                       'data_size': 512.0, 'interference_index': 0.1}


class InvalidParams(ValueError):
    """A model parameter is out of range."""


@dataclasses.dataclass(frozen=True)
class ModelParams:
    """Everything that shapes a capacity model.

    ``granularity`` maps each feature name to its cell width.
    ``recency_half_life`` (seconds, 0 = off) makes newer samples count more,
    both inside a cell's label and as SVM sample weights, so the model follows
    a capacity change; ``recency_floor`` (0-1) is the least weight a met
    cell falls to, so that cells met hours ago still hold the boundary's
    level against a few fresh ones. ``prune_conflicts`` drops a cell contradicted by a newer
    one under load monotonicity. ``cell_max_age`` (seconds, 0 = never) ignores
    samples older than that altogether. With ``keep_violated`` a violated
    cell's SVM weight does not fade with its age (a met cell's does): the
    learnt boundary is kept until a newer cell contradicts it or new samples
    refill its cells, however long the load stays below it.
    With ``keep_departed`` the cells of a VM that leaves the cluster stay
    with its flavour (the flavour's memory), which pools them while its
    serving VMs have no violated cell: the boundary a departed VM learnt
    outlives it (:mod:`elastman.capacity.registry`).
    With ``interference_scale`` (and without the ``interference_index``
    feature) the host agents' index scales the load: a sample's load
    coordinates are learnt as ``(1 + index)`` times what the VM served, and
    a capacity is divided by its VM's ``1 + index`` (see
    :func:`elastman.capacity.features.slowdown`).
    With ``monotone`` other than ``off`` a linear model gives no load
    coordinate a weight that says more of that load meets the SLO better
    (``drop`` leaves such a coordinate out, ``total`` fits the loads as
    their sum; :func:`elastman.capacity.model.fit`).
    """

    slo_metric: str = 'read_p99_ms'
    slo_threshold_ms: float = 35.0
    features: tuple[str, ...] = DEFAULT_FEATURES
    granularity: Mapping[str, float] = dataclasses.field(
        default_factory=lambda: dict(DEFAULT_GRANULARITY))
    buffer_size: int = 10
    confidence: float = 0.5
    update_period: float = 300.0
    kernel: str = 'linear'
    svm_c: float = 10.0
    gamma: float | str = 'scale'
    solver: str = 'auto'
    min_cells: int = 20
    recency_half_life: float = 300.0
    recency_floor: float = 0.03
    prune_conflicts: bool = True
    cell_max_age: float = 0.0
    balanced: bool = False
    keep_violated: bool = True
    keep_departed: bool = True
    interference_scale: bool = True
    monotone: str = MONOTONE_TOTAL

    def __post_init__(self) -> None:
        object.__setattr__(self, 'features', tuple(self.features))
        gran = {k: float(v) for k, v in dict(self.granularity).items()}
        for name in self.features:
            gran.setdefault(name, DEFAULT_GRANULARITY.get(name, 1.0))
        object.__setattr__(self, 'granularity', gran)
        self.validate()

    def validate(self) -> None:
        """Raise :class:`InvalidParams` on the first bad value."""
        def bad(msg: str) -> None:
            raise InvalidParams(msg)

        if self.slo_metric not in SLO_METRICS:
            bad('slo_metric must be one of %s' % ', '.join(SLO_METRICS))
        if not (_finite(self.slo_threshold_ms) and self.slo_threshold_ms > 0):
            bad('slo_threshold_ms must be a positive number')
        if not self.features or len(set(self.features)) != len(self.features):
            bad('features must be a non-empty list without duplicates')
        for name in self.features:
            g = self.granularity.get(name)
            if not (_finite(g) and g > 0):
                bad('granularity of %s must be a positive number' % name)
        if not (isinstance(self.buffer_size, int) and 1 <= self.buffer_size <= 10000):
            bad('buffer_size must be an integer in [1, 10000]')
        if not (_finite(self.confidence) and 0 < self.confidence <= 1):
            bad('confidence must be in (0, 1]')
        if not (_finite(self.update_period) and self.update_period > 0):
            bad('update_period must be positive')
        if self.kernel not in KERNELS:
            bad('kernel must be one of %s' % ', '.join(KERNELS))
        if not (_finite(self.svm_c) and self.svm_c > 0):
            bad('svm_c must be positive')
        if isinstance(self.gamma, str):
            if self.gamma not in ('scale', 'auto'):
                bad("gamma must be 'scale', 'auto' or a positive number")
        elif not (_finite(self.gamma) and self.gamma > 0):
            bad("gamma must be 'scale', 'auto' or a positive number")
        if self.solver not in SOLVERS:
            bad('solver must be one of %s' % ', '.join(SOLVERS))
        if self.solver == 'liblinear' and self.kernel != 'linear':
            bad('solver liblinear needs the linear kernel')
        if not (isinstance(self.min_cells, int) and self.min_cells >= 2):
            bad('min_cells must be an integer >= 2')
        if not (_finite(self.cell_max_age) and self.cell_max_age >= 0):
            bad('cell_max_age must be >= 0')
        if not (_finite(self.recency_half_life) and self.recency_half_life >= 0):
            bad('recency_half_life must be >= 0')
        if not (_finite(self.recency_floor) and 0 <= self.recency_floor <= 1):
            bad('recency_floor must be in [0, 1]')
        if not isinstance(self.keep_departed, bool):
            bad('keep_departed must be true or false')
        if not isinstance(self.interference_scale, bool):
            bad('interference_scale must be true or false')
        if self.monotone not in MONOTONE:
            bad('monotone must be one of %s' % ', '.join(MONOTONE))

    # -- conversions -----------------------------------------------------

    def granularity_vector(self) -> list[float]:
        return [self.granularity[n] for n in self.features]

    @property
    def scales_by_interference(self) -> bool:
        """Whether the interference index scales the load (it does not
        when it is a feature of its own).
        """
        return self.interference_scale and INTERFERENCE not in self.features

    def grid_signature(self) -> dict[str, Any]:
        """What the cells depend on: changing it invalidates the cells."""
        return {'features': list(self.features),
                'granularity': self.granularity_vector(),
                'slo_metric': self.slo_metric,
                'interference_scale': self.scales_by_interference}

    def replace(self, **changes: Any) -> 'ModelParams':
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d['features'] = list(self.features)
        d['granularity'] = dict(self.granularity)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'ModelParams':
        """Build from a dict (e.g. a scaling policy); unknown keys rejected."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise InvalidParams('unknown model parameters: %s'
                                % ', '.join(sorted(unknown)))
        return cls(**dict(data))

    @classmethod
    def from_conf(cls, conf: Any, **overrides: Any) -> 'ModelParams':
        """Defaults from the [trainer] group, then ``overrides``."""
        t = conf.trainer
        gran = dict(DEFAULT_GRANULARITY)
        gran.update({k: float(v) for k, v in (t.granularity or {}).items()})
        values = dict(slo_metric=t.slo_metric,
                      slo_threshold_ms=t.slo_threshold_ms,
                      features=tuple(t.features), granularity=gran,
                      buffer_size=t.buffer_size, confidence=t.confidence,
                      update_period=float(t.update_period),
                      kernel=t.svm_kernel, svm_c=t.svm_c,
                      solver=t.svm_solver, min_cells=t.min_cells,
                      recency_half_life=float(t.recency_half_life),
                      recency_floor=float(t.recency_floor),
                      prune_conflicts=t.prune_conflicts,
                      cell_max_age=float(t.cell_max_age),
                      interference_scale=t.interference_feature == 'scale')
        values.update(overrides)
        return cls(**values)


def _finite(x: Any) -> bool:
    return (isinstance(x, (int, float)) and not isinstance(x, bool)
            and math.isfinite(x))
