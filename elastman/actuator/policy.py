"""The scaling policy of one cluster: SLO, size bounds, controller tuning.

A policy is stored with its cluster (JSON) and validated on the way in; the
decision logic (:mod:`elastman.actuator.decision`) reads nothing else.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

REMOVE_BY = ('capacity', 'interference')
#: How the scale-out count is taken once more than ``alpha`` VMs violate:
#: ``sum`` (seed 000: the net sum of (w-c)/c over the flavour) or
#: ``violators`` (the sum over the violating VMs only).
SCALE_OUT_COUNTS = ('sum', 'violators')
#: What ``w > c`` means when ``c`` is only a lower bound (no violation seen):
#: ``uncertain`` (neither scale out nor scale in) or ``over`` (take ``c``, the
#: largest load seen to meet the SLO, as the capacity; ``explore`` lets the
#: load go that fraction beyond it, without headroom, so that the model keeps
#: learning where the boundary is).
BEYOND_LOWER = ('uncertain', 'over')
#: What a capacity beyond the largest load the model has seen along the ray
#: (an estimate's optional ``seen``) means: ``trust`` it, or take it as only a
#: ``lower`` bound at ``seen`` (the boundary there is an extrapolation).
EXTRAPOLATION = ('trust', 'lower')
#: The decision options new clusters get unless their policy says otherwise
#: (the API's defaults, ``elastman-manage local-cluster``, the evaluations):
#: the set that did best in the simulator (doc/source/evaluation.rst,
#: "Decision options beyond the paper"). ScalingPolicy's own defaults stay
#: seed 000's rule.
RECOMMENDED_OPTIONS = {'headroom': 0.2, 'scale_out_count': 'violators',
                       'extrapolation': 'lower',
                       'max_scale_in_fraction': 0.1}


class InvalidPolicy(ValueError):
    """A scaling policy value is out of range."""


@dataclasses.dataclass(frozen=True)
class ScalingPolicy:
    """How elastman scales one cluster.

    ``alpha``: VMs of a flavour that may exceed their capacity before a
    scale-out (load-imbalance tolerance); ``beta``: VMs' worth of spare
    capacity kept per flavour on scale-in. ``flavor_costs`` maps each flavour
    the cluster may grow with to its price per hour (any unit); an empty map
    means "grow with the flavours already in the cluster, all at cost 1".
    ``warmup_s`` is counted from the cluster's start (model training);
    ``cooldown_s`` from the completion of the last action. ``max_vm_excess``
    caps one VM's ``(w - c)/c`` term, so that a model that extrapolates a
    near-zero capacity far from its cells cannot ask for hundreds of VMs.
    """

    slo_metric: str = 'read_p99_ms'
    slo_threshold_ms: float = 35.0
    min_size: int = 3
    max_size: int = 100
    replication_factor: int = 3
    alpha: float = 1.0
    beta: float = 0.5
    max_vm_excess: float = 4.0
    headroom: float = 0.0
    scale_out_count: str = 'sum'
    beyond_lower: str = 'uncertain'
    max_scale_in_fraction: float = 1.0
    extrapolation: str = 'trust'
    explore: float = 0.0
    cooldown_s: float = 300.0
    warmup_s: float = 2400.0
    control_period_s: float = 300.0
    flavor_costs: Mapping[str, float] = dataclasses.field(default_factory=dict)
    default_flavor: str | None = None
    remove_by: str = 'capacity'
    dry_run: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, 'flavor_costs',
                           {str(k): float(v) for k, v in dict(self.flavor_costs).items()})
        self.validate()

    @property
    def floor(self) -> int:
        """Smallest allowed cluster size: max(replication factor, min_size)."""
        return max(self.replication_factor, self.min_size)

    def cost(self, flavor: str) -> float:
        return self.flavor_costs.get(flavor, 1.0)

    def validate(self) -> None:
        """Raise :class:`InvalidPolicy` on the first bad value."""
        def bad(msg: str) -> None:
            raise InvalidPolicy(msg)

        if not (isinstance(self.slo_metric, str) and self.slo_metric):
            bad('slo_metric must be a non-empty string')
        if not (_finite(self.slo_threshold_ms) and self.slo_threshold_ms > 0):
            bad('slo_threshold_ms must be a positive number')
        for name in ('min_size', 'max_size', 'replication_factor'):
            v = getattr(self, name)
            if not (isinstance(v, int) and not isinstance(v, bool) and v >= 1):
                bad('%s must be an integer >= 1' % name)
        if self.max_size < self.floor:
            bad('max_size (%d) must be >= max(replication_factor, min_size) (%d)'
                % (self.max_size, self.floor))
        if not (_finite(self.max_vm_excess) and self.max_vm_excess > 0):
            bad('max_vm_excess must be positive')
        for name in ('alpha', 'beta', 'cooldown_s', 'warmup_s'):
            v = getattr(self, name)
            if not (_finite(v) and v >= 0):
                bad('%s must be a number >= 0' % name)
        if not (_finite(self.control_period_s) and self.control_period_s > 0):
            bad('control_period_s must be positive')
        for flavor, cost in self.flavor_costs.items():
            if not (_finite(cost) and cost > 0):
                bad('cost of flavour %s must be positive' % flavor)
        if self.default_flavor is not None and self.flavor_costs and \
                self.default_flavor not in self.flavor_costs:
            bad('default_flavor %s has no cost in flavor_costs' % self.default_flavor)
        if not (_finite(self.headroom) and 0 <= self.headroom < 1):
            bad('headroom must be a number >= 0 and < 1')
        if not (_finite(self.max_scale_in_fraction) and 0 < self.max_scale_in_fraction <= 1):
            bad('max_scale_in_fraction must be a number > 0 and <= 1')
        if not (_finite(self.explore) and 0 <= self.explore <= 10):
            bad('explore must be a number >= 0 and <= 10')
        if self.scale_out_count not in SCALE_OUT_COUNTS:
            bad('scale_out_count must be one of %s' % ', '.join(SCALE_OUT_COUNTS))
        if self.beyond_lower not in BEYOND_LOWER:
            bad('beyond_lower must be one of %s' % ', '.join(BEYOND_LOWER))
        if self.extrapolation not in EXTRAPOLATION:
            bad('extrapolation must be one of %s' % ', '.join(EXTRAPOLATION))
        if self.remove_by not in REMOVE_BY:
            bad('remove_by must be one of %s' % ', '.join(REMOVE_BY))
        if not isinstance(self.dry_run, bool):
            bad('dry_run must be a boolean')

    def replace(self, **changes: Any) -> 'ScalingPolicy':
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d['flavor_costs'] = dict(self.flavor_costs)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'ScalingPolicy':
        """Build from a stored/API document; unknown keys are rejected."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise InvalidPolicy('unknown policy fields: %s' % ', '.join(sorted(unknown)))
        try:
            return cls(**dict(data))
        except TypeError as exc:
            raise InvalidPolicy(str(exc))

    @classmethod
    def for_cluster(cls, cluster: Mapping[str, Any]) -> 'ScalingPolicy':
        """The policy a cluster row carries (as the API stores it)."""
        stored = dict(cluster.get('policy') or {})
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in stored.items() if k in names}
        flavors = stored.get('flavors') or []
        if flavors and 'flavor_costs' not in values:
            values['flavor_costs'] = {f: 1.0 for f in flavors}
        spec = cluster.get('spec') or {}
        if spec.get('flavor') and not values.get('default_flavor'):
            values['default_flavor'] = spec['flavor']
        if 'replication_factor' not in values:
            # an explicitly small cluster (min_size below 3) says its RF is
            # small
            values['replication_factor'] = min(3, int(values.get('min_size',
                                                                 3)))
        return cls(**values)


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
