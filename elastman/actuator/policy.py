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
"""The scaling policy of one cluster: SLO, size bounds, controller tuning.

:class:`ScalingPolicy` is the one source of the policy's fields, defaults and
ranges: each field carries its JSON schema, from which the API's request
schema (:func:`json_schema`) and the OpenAPI component are made, and which
:meth:`ScalingPolicy.validate` applies. A policy is stored with its cluster
(JSON); the decision logic (:mod:`elastman.actuator.decision`) and the
latency guard (:mod:`elastman.actuator.guard`) read nothing else.

The defaults are what a new cluster gets: the planning rule of
OnlineElastMan with the options that measured best in the simulator, and the
latency guard. :data:`PAPER_RULE` turns the options and the guard off, for
the paper's rule as published.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

import jsonschema

from elastman.capacity.params import SLO_METRICS

#: The SLO metric new clusters get: the coordinator's read p99 plus the
#: native-transport queue wait, which is what clients wait for
#: (doc/source/monitoring.rst).
DEFAULT_SLO_METRIC = 'read_with_queue_p99_ms'
REMOVE_BY = ('capacity', 'interference', 'load')
SCALE_OUT_COUNTS = ('sum', 'violators')
VIOLATION_AT = ('target', 'capacity')
BEYOND_LOWER = ('uncertain', 'over', 'extrapolated')
EXTRAPOLATION = ('trust', 'lower')
#: When the old nodes drop the ranges a scale-out moved to the new ones
#: (``nodetool cleanup``): right after the join, or before the next action
#: that takes a node out of the ring.
CLEANUP = ('after_join', 'before_removal')
MAX_NODES = 10000

#: OnlineElastMan's rule as published: no headroom, the net sum over the
#: flavour, trusted extrapolation, unbounded scale-in, no latency guard, no
#: trend, the cleanup right after each join.
PAPER_RULE = {'headroom': 0.0, 'scale_out_count': 'sum',
              'violation_at': 'target', 'extrapolation': 'trust',
              'max_scale_in_fraction': 1.0, 'guard': False,
              'trend_window_s': 0.0, 'scale_in_hold_s': 0.0,
              'scale_in_headroom': 0.0, 'headroom_per_violation': 0.0,
              'cleanup': 'after_join'}


class InvalidPolicy(ValueError):
    """A scaling policy value is out of range."""


def _field(default: Any, schema: Mapping[str, Any], doc: str, **kw: Any) -> Any:
    meta = {'schema': dict(schema), 'doc': doc}
    if callable(default):
        return dataclasses.field(default_factory=default, metadata=meta, **kw)
    return dataclasses.field(default=default, metadata=meta, **kw)


def _number(lo: float | None = None, hi: float | None = None,
            lo_open: bool = False, hi_open: bool = False,
            integer: bool = False) -> dict[str, Any]:
    s: dict[str, Any] = {'type': 'integer' if integer else 'number'}
    if lo is not None:
        s['exclusiveMinimum' if lo_open else 'minimum'] = lo
    if hi is not None:
        s['exclusiveMaximum' if hi_open else 'maximum'] = hi
    return s


_SECONDS = _number(0, 86400)


@dataclasses.dataclass(frozen=True)
class ScalingPolicy:
    """How elastman scales one cluster (each field's ``doc`` says what it
    does; ``help()`` of :func:`describe_fields` lists them).
    """

    slo_metric: str = _field(DEFAULT_SLO_METRIC, {'enum': list(SLO_METRICS)},
                             'the latency metric the SLO is on')
    slo_threshold_ms: float = _field(35.0, _number(0, 600000, lo_open=True),
                                     'the SLO: the metric must stay at or below this')
    min_size: int = _field(3, _number(1, MAX_NODES, integer=True),
                           'fewest nodes (never below the replication factor)')
    max_size: int = _field(10, _number(1, MAX_NODES, integer=True), 'most nodes')
    replication_factor: int = _field(3, _number(1, 100, integer=True),
                                     'replication factor of the data')
    alpha: float = _field(1.0, _number(0, 1000),
                          'VMs of a flavour that may exceed their capacity '
                          '(or be in the guard\'s warning band) before a scale-out')
    alpha_fraction: float = _field(0.0, _number(0, 1),
                                   'with more VMs, alpha grows to this fraction '
                                   'of the flavour\'s VMs (of the cluster\'s, '
                                   'for the guard)')
    beta: float = _field(0.5, _number(0, 1000),
                         'VMs\' worth of spare capacity kept per flavour on scale-in')
    max_vm_excess: float = _field(4.0, _number(0, 1000, lo_open=True),
                                  'cap of one VM\'s (w - c)/c term')
    headroom: float = _field(0.325, _number(0, 1, hi_open=True),
                             'plan each VM for (1 - headroom) of its capacity')
    scale_in_headroom: float = _field(
        0.5, _number(0, 1, hi_open=True),
        'a scale-in leaves each VM at most (1 - scale_in_headroom) of its '
        'capacity, when that is more room than headroom leaves: a band '
        'between the scale-out and the scale-in targets, as reactive '
        'alarms have (0: the headroom alone)')
    scale_in_headroom_s: float = _field(
        7200.0, _number(0, 7 * 86400),
        'seconds after the last scale-out was decided (before the first, '
        'after the cluster was created) during which scale_in_headroom '
        'holds (0: always)')
    headroom_per_violation: float = _field(
        0.01, _number(0, 1),
        'headroom added by each minute the cluster\'s own SLO metric was '
        'above the SLO, decaying with its age (0: a fixed headroom)')
    headroom_memory_s: float = _field(
        10800.0, _number(60, 7 * 86400),
        'time constant (s) of that decay')
    headroom_max: float = _field(0.5, _number(0, 1, hi_open=True),
                                 'the most the violations raise the headroom to')
    scale_out_count: str = _field('violators', {'enum': list(SCALE_OUT_COUNTS)},
                                  'count a scale-out from the violating VMs only, '
                                  'or from the net sum over the flavour (sum)')
    violation_at: str = _field('capacity', {'enum': list(VIOLATION_AT)},
                               'a VM violates (for alpha, the violators\' sum and '
                               'the scale-in block) when its load is over its '
                               'target (1 - headroom) c_x, or over its capacity '
                               'c_x; with capacity, a positive net sum over the '
                               'targets scales out too')
    beyond_lower: str = _field('uncertain', {'enum': list(BEYOND_LOWER)},
                               'a load beyond a lower-bound capacity: uncertain '
                               '(it blocks a scale-in and asks for no VM), over '
                               '(a violation of it), or extrapolated (it blocks '
                               'a scale-in and asks for the VMs its excess over '
                               'the target of the model\'s extrapolated capacity '
                               'needs)')
    max_scale_in_fraction: float = _field(0.1, _number(0, 1, lo_open=True),
                                          'largest fraction of a flavour\'s VMs '
                                          'one scale-in removes (at least one)')
    extrapolation: str = _field('lower', {'enum': list(EXTRAPOLATION)},
                                'a capacity beyond what the model has seen '
                                'along the ray: trust it, or take it as a '
                                'lower bound at what was seen')
    explore: float = _field(0.0, _number(0, 10),
                            'with beyond_lower=over, how far beyond a lower '
                            'bound the load may go')
    guard: bool = _field(True, {'type': 'boolean'},
                         'let the measured latency scale out between control '
                         'periods and block scale-in')
    guard_warning: float = _field(0.8, _number(0, 1, lo_open=True),
                                  'the warning band starts at this fraction of the SLO')
    guard_intervals: int = _field(2, _number(1, 100, integer=True),
                                  'monitor intervals in the warning band before '
                                  'the guard scales out (one when above the SLO)')
    guard_step: float = _field(0.1, _number(0, 10, lo_open=True),
                               'the guard\'s step, as a fraction of the cluster, '
                               'where the model has no boundary')
    guard_red_vms_alone: bool = _field(
        False, {'type': 'boolean'},
        'let VMs above the SLO make the guard scale out while the cluster\'s '
        'own p99 is within it (off: such a round only holds scale-in)')
    guard_top_up: bool = _field(True, {'type': 'boolean'},
                                'while a scale-out still creates its servers, '
                                'a round above the SLO adds to it what the '
                                'guard\'s step says it lacks')
    replan_in_flight: bool = _field(True, {'type': 'boolean'},
                                    'while a scale-out still creates its '
                                    'servers, each control period\'s plan '
                                    'tops it up by the VMs it lacks or trims '
                                    'the servers not created yet that it no '
                                    'longer needs')
    cooldown_s: float = _field(120.0, _SECONDS,
                               'seconds after an action ends: after a '
                               'scale-out no scale-in, after a scale-in no '
                               'planned action (the guard acts while the '
                               'latency rises)')
    warmup_s: float = _field(2400.0, _SECONDS,
                             'seconds of model training before the planning '
                             'loop acts; once every VM has a model with a '
                             'boundary (a prior) it may scale out, but not '
                             'in (the guard acts from the start)')
    control_period_s: float = _field(300.0, _number(10, 86400),
                                     'seconds between two planning decisions')
    flavor_costs: Mapping[str, float] = _field(
        dict, {'type': 'object', 'maxProperties': 32,
               'additionalProperties': _number(0, lo_open=True)},
        'price per hour of each flavour the cluster may grow with')
    default_flavor: str | None = _field(
        None, {'type': ['string', 'null'], 'minLength': 1, 'maxLength': 255},
        'the flavour to grow with when no rule picks one')
    remove_by: str = _field('capacity', {'enum': list(REMOVE_BY)},
                            'which node a scale-in removes first: least '
                            'capacity, most interference, or most load for '
                            'its capacity')
    cleanup: str = _field(
        'before_removal', {'enum': list(CLEANUP)},
        'when the old nodes run nodetool cleanup after a scale-out: '
        'after_join, or before_removal (deferred to the next action that '
        'takes a node out of the ring, so that a rise does not pay for it)')
    plan_on: str = _field('point', {'enum': ['point', 'quantile']},
                          'plan on the forecast\'s point value or its upper quantile')
    trend_window_s: float = _field(
        600.0, _SECONDS,
        "seconds of the cluster's load the planning loop fits a line "
        'through; it plans for at least that line projected over the '
        'measured join time (0: off)')
    trend_max_growth: float = _field(
        1.5, _number(1, 100),
        'the most the trend may grow the planned load by over a join: in '
        'the first minutes after a jump, a step and the start of a rise '
        'fit the same steep line')
    scale_in_hold_s: float = _field(
        0.0, _SECONDS,
        "seconds of the cluster's load a scale-in provides for: the planning "
        'loop removes VMs only down to what the highest load served in that '
        'window needs, so that a load that fell and comes back finds its VMs '
        '(0: off)')
    dry_run: bool = _field(False, {'type': 'boolean'},
                           'decide and record, but do not act')
    auto_heal: bool = _field(True, {'type': 'boolean'},
                             'replace a node the monitor marked DEAD once it '
                             'has been dead for heal_grace_s (off, or in '
                             'dry-run: only recommend it)')
    heal_grace_s: float = _field(180.0, _SECONDS,
                                 'seconds a node stays DEAD before it is '
                                 'replaced')

    def __post_init__(self) -> None:
        object.__setattr__(self, 'flavor_costs',
                           {str(k): v for k, v in dict(self.flavor_costs).items()})
        self.validate()
        object.__setattr__(self, 'flavor_costs',
                           {k: float(v) for k, v in self.flavor_costs.items()})

    @property
    def floor(self) -> int:
        """Smallest allowed cluster size: max(replication factor, min_size)."""
        return max(self.replication_factor, self.min_size)

    def alpha_for(self, vms: int) -> float:
        """The VMs of ``vms`` that may be over capacity (or in the guard's
        band) before a scale-out: ``alpha``, or ``alpha_fraction`` of them
        when that is more. One VM a little over its target in a large
        cluster does not move the cluster's p99; a scale-out for it holds
        the one action a cluster may have in flight while the load rises.
        """
        return max(self.alpha, self.alpha_fraction * vms)

    def cost(self, flavor: str) -> float:
        return self.flavor_costs.get(flavor, 1.0)

    def validate(self) -> None:
        """Raise :class:`InvalidPolicy` on the first bad value."""
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise InvalidPolicy('%s must be a finite number' % f.name)
            error = _first_error(f.metadata['schema'], value)
            if error is not None:
                raise InvalidPolicy('%s: %s' % (f.name, error))
        if self.max_size < self.floor:
            raise InvalidPolicy('max_size (%d) must be >= max(replication_factor, '
                                'min_size) (%d)' % (self.max_size, self.floor))
        if self.default_flavor is not None and self.flavor_costs and \
                self.default_flavor not in self.flavor_costs:
            raise InvalidPolicy('default_flavor %s has no cost in flavor_costs'
                                % self.default_flavor)

    def replace(self, **changes: Any) -> 'ScalingPolicy':
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d['flavor_costs'] = dict(self.flavor_costs)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'ScalingPolicy':
        """Build from a stored/API document; unknown keys are rejected."""
        unknown = set(data) - set(field_names())
        if unknown:
            raise InvalidPolicy('unknown policy fields: %s' % ', '.join(sorted(unknown)))
        try:
            return cls(**dict(data))
        except TypeError as exc:
            raise InvalidPolicy(str(exc))

    @classmethod
    def for_cluster(cls, cluster: Mapping[str, Any],
                    defaults: Mapping[str, Any] | None = None) -> 'ScalingPolicy':
        """The policy a cluster row carries (as the API stores it); a field
        it lacks takes ``defaults`` (e.g. the deployment's [trainer] SLO,
        which the capacity model then uses too), else the class default.
        """
        stored = dict(cluster.get('policy') or {})
        names = set(field_names())
        values = {k: v for k, v in dict(defaults or {}).items() if k in names}
        values.update({k: v for k, v in stored.items() if k in names})
        flavors = stored.get('flavors') or []
        if flavors and 'flavor_costs' not in values:
            values['flavor_costs'] = {f: 1.0 for f in flavors}
        spec = cluster.get('spec') or {}
        if spec.get('flavor') and not values.get('default_flavor'):
            values['default_flavor'] = spec['flavor']
        if 'replication_factor' not in values:
            # an explicitly small cluster (min_size below 3) says its RF is
            # small
            values['replication_factor'] = min(3, int(values.get('min_size', 3)))
        return cls(**values)


def _bool_strict(checker: Any, instance: Any) -> bool:
    return isinstance(instance, bool)


def _number_strict(checker: Any, instance: Any) -> bool:
    return isinstance(instance, (int, float)) and not isinstance(instance, bool)


def _integer_strict(checker: Any, instance: Any) -> bool:
    if isinstance(instance, bool):
        return False
    return isinstance(instance, int) or (isinstance(instance, float)
                                         and instance.is_integer())


_TYPES = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many({
    'boolean': _bool_strict, 'number': _number_strict, 'integer': _integer_strict})
_Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator,
                                          type_checker=_TYPES)


def _first_error(schema: Mapping[str, Any], value: Any) -> str | None:
    error = jsonschema.exceptions.best_match(_Validator(schema).iter_errors(value))
    return None if error is None else error.message


def field_names() -> list[str]:
    return [f.name for f in dataclasses.fields(ScalingPolicy)]


def defaults() -> dict[str, Any]:
    """Every field's default (what a new cluster gets)."""
    return ScalingPolicy().to_dict()


def json_schema() -> dict[str, Any]:
    """The JSON schema of a policy document: one property per field, each
    with its range, default and description.
    """
    props = {}
    for f in dataclasses.fields(ScalingPolicy):
        s = dict(f.metadata['schema'])
        s['description'] = f.metadata['doc']
        default = (f.default_factory() if f.default is dataclasses.MISSING
                   else f.default)
        s['default'] = dict(default) if isinstance(default, Mapping) else default
        props[f.name] = s
    return {'type': 'object', 'additionalProperties': False, 'properties': props}
