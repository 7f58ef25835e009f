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
"""Scenario files of the live evaluation (``scenarios/*.yaml``).

A scenario names the cluster (size, flavour, addresses), the SLO, the scaling
policy and elastman settings for the run, and the YCSB phases: each with a
duration, a target throughput (or a ``[from, to]`` ramp in steps), a
read/update mix and a record size, as in OnlineElastMan, Table 3.1. A phase
with ``until: scale_out`` (or ``scale_in``) ends as soon as such an action
has completed during the phase (wherever it started); its duration is then
the most it may last.

A scenario's targets hold for the machine it was written on. Its optional
``calibration`` section makes them hold on another one: ``reference_ops``
is the load (ops/s) the static cluster served at the SLO on that machine,
and ``phases`` is a stepped probe of the static cluster that measures the
same load here (:mod:`elastman.evaluation.live_calibration`); the targets
are then scaled by the ratio (:meth:`Scenario.scaled`).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import yaml

from elastman.api import schemas
from elastman.evaluation import ycsb

MINUTE = 60.0
DEFAULT_ELASTMAN = {
    'monitor': {'sampling_interval': 10},
    'trainer': {'update_period': 60},
    # a forecast step of the policy's control period
    'predictor': {'period': 30, 'step': 60, 'horizon': 10},
    'actuator': {'control_period': 60, 'join_timeout': 420,
                 'forecast_max_age': 300},
}
DEFAULT_POLICY = {'slo_metric': 'read_p99_ms', 'min_size': 3, 'max_size': 6,
                  'alpha': 1.0, 'beta': 0.5, 'control_period_s': 60,
                  'cooldown_s': 120, 'warmup_s': 600, 'dry_run': False}
PHASE_KEYS = {'name', 'minutes', 'seconds', 'target', 'steps', 'read',
              'update', 'insert', 'fieldcount', 'fieldlength', 'threads',
              'distribution', 'until'}
#: What a phase may wait for (``until``): a completed action of that kind.
UNTIL_EVENTS = ('scale_out', 'scale_in')


class ScenarioError(ValueError):
    """A scenario file is invalid."""


# -- scenarios --------------------------------------------------------------

@dataclasses.dataclass
class Scenario:
    """A live evaluation: cluster, SLO, elastman settings and YCSB phases."""

    name: str
    phases: list[ycsb.Phase]
    description: str = ''
    slo_ms: float = 35.0
    size: int = 3
    flavor: str = 'eval'
    flavor_spec: str = 'cpu=0.5,heap=384M'
    network: str = '127.0.80.0/25'
    jmx_port_base: int = 17600
    store_address: str = '127.0.80.200'
    policy: dict[str, Any] = dataclasses.field(default_factory=dict)
    elastman: dict[str, dict[str, Any]] = dataclasses.field(
        default_factory=dict)
    recordcount: int = 10000
    consistency: str = 'ONE'
    replication_factor: int = 3
    load: ycsb.Phase | None = None
    #: phase name -> the action kind that ends it early (``until``)
    until: dict[str, str] = dataclasses.field(default_factory=dict)
    #: the static probe that calibrates the targets (``calibration``)
    probe_phases: list[ycsb.Phase] = dataclasses.field(default_factory=list)
    #: ops/s the static cluster served at the SLO where the targets were set
    reference_ops: float | None = None
    #: the probe phase (a ramp: its steps) the served load is measured in
    probe_measure: str | None = None

    @property
    def duration_s(self) -> float:
        return sum(p.duration_s for p in self.phases)

    def scaling_policy(self) -> dict[str, Any]:
        """What the API would store: its defaults, the evaluation's, then
        the scenario's.
        """
        policy = dict(schemas.POLICY_DEFAULTS)
        policy.update(DEFAULT_POLICY, slo_threshold_ms=self.slo_ms,
                      flavors=[self.flavor])
        policy.update(self.policy)
        return policy

    def held_static(self) -> 'Scenario':
        """The same run with the cluster held at its initial size: the
        baseline an elastic run is compared with. elastman still samples,
        trains, forecasts and records its decisions (a dry run).
        """
        policy = dict(self.policy, min_size=self.size, max_size=self.size,
                      dry_run=True)
        return dataclasses.replace(self, name='%s-static' % self.name,
                                   policy=policy)

    def probe(self) -> 'Scenario':
        """The calibration probe: the static cluster under the scenario's
        ``calibration`` phases.
        """
        if not self.probe_phases or not self.reference_ops:
            raise ScenarioError('scenario %s has no calibration section'
                                % self.name)
        static = self.held_static()
        return dataclasses.replace(static, name='%s-probe' % self.name,
                                   phases=list(self.probe_phases), until={})

    def scaled(self, factor: float) -> 'Scenario':
        """The same scenario with every phase's target times ``factor``
        (the load phase, unthrottled, stays as it is).
        """
        if not factor > 0:
            raise ScenarioError('a target scale must be > 0, got %r' % factor)
        phases = [dataclasses.replace(p, target=round(p.target * factor))
                  for p in self.phases]
        return dataclasses.replace(self, phases=phases)

    def elastman_conf(self) -> dict[str, dict[str, Any]]:
        groups = {g: dict(v) for g, v in DEFAULT_ELASTMAN.items()}
        groups['trainer']['slo_threshold_ms'] = self.slo_ms
        for group, values in self.elastman.items():
            groups.setdefault(group, {}).update(values)
        return groups


def _expand(raw: Mapping[str, Any], defaults: Mapping[str, Any],
            index: int) -> list[ycsb.Phase]:
    """One YAML phase as one or more Phases (a ramp becomes steps)."""
    unknown = set(raw) - PHASE_KEYS
    if unknown:
        raise ScenarioError('phase %d: unknown keys %s'
                            % (index + 1, ', '.join(sorted(unknown))))
    item = dict(defaults)
    item.update(raw)
    name = str(item.get('name') or 'phase%d' % (index + 1))
    if 'minutes' in item:
        duration = float(item['minutes']) * MINUTE
    elif 'seconds' in item:
        duration = float(item['seconds'])
    else:
        raise ScenarioError('phase %s: needs minutes or seconds' % name)
    target = item.get('target')
    if isinstance(target, (list, tuple)):
        if len(target) != 2:
            raise ScenarioError('phase %s: a ramp target is [from, to]' % name)
        start, end = (float(t) for t in target)
        steps = int(item.get('steps') or max(1, round(duration / MINUTE)))
    elif isinstance(target, (int, float)) and not isinstance(target, bool):
        start = end = float(target)
        steps = 1
    else:
        raise ScenarioError('phase %s: target must be a number or [from, to]'
                            % name)
    read = float(item.get('read', 0.95))
    update = float(item.get('update', max(0.0, 1.0 - read)))
    phases = []
    for i in range(steps):
        frac = i / (steps - 1) if steps > 1 else 0.0
        try:
            phases.append(ycsb.Phase(
                name if steps == 1 else '%s.%d' % (name, i + 1),
                duration_s=duration / steps,
                target=round(start + (end - start) * frac),
                read_proportion=read, update_proportion=update,
                insert_proportion=float(item.get('insert', 0.0)),
                fieldcount=int(item.get('fieldcount', 10)),
                fieldlength=int(item.get('fieldlength', 100)),
                threads=int(item.get('threads', 16)),
                distribution=str(item.get('distribution', 'uniform'))))
        except (TypeError, ValueError) as exc:
            raise ScenarioError(str(exc))
    return phases


def parse_scenario(data: Mapping[str, Any]) -> Scenario:
    """Build a Scenario from its YAML document (see scenarios/*.yaml)."""
    if not isinstance(data, Mapping):
        raise ScenarioError('a scenario is a mapping')
    known = {'name', 'description', 'slo_ms', 'cluster', 'policy',
             'elastman', 'ycsb', 'phases', 'defaults', 'calibration'}
    unknown = set(data) - known
    if unknown:
        raise ScenarioError('unknown keys: %s' % ', '.join(sorted(unknown)))
    defaults = dict(data.get('defaults') or {})
    raw_phases = data.get('phases')
    if not raw_phases or not isinstance(raw_phases, list):
        raise ScenarioError('phases: a non-empty list is required')
    phases, until, _ = _phase_list(raw_phases, defaults)
    probe_phases, reference_ops, probe_measure = _calibration(
        data.get('calibration'), defaults)
    cluster = dict(data.get('cluster') or {})
    bad = set(cluster) - {'size', 'flavor', 'flavor_spec', 'network',
                          'jmx_port_base', 'store_address',
                          'replication_factor'}
    if bad:
        raise ScenarioError('cluster: unknown keys %s'
                            % ', '.join(sorted(bad)))
    work = dict(data.get('ycsb') or {})
    bad = set(work) - {'recordcount', 'consistency', 'load'}
    if bad:
        raise ScenarioError('ycsb: unknown keys %s' % ', '.join(sorted(bad)))
    load_raw = dict(work.get('load') or {})
    load_raw.setdefault('seconds', 3600)
    load_raw.setdefault('target', 0)
    load_raw.setdefault('name', 'load')
    load_raw.setdefault('read', 0.0)
    load_raw.setdefault('update', 0.0)
    load_raw.setdefault('insert', 1.0)
    load = _expand(load_raw, {k: v for k, v in defaults.items()
                              if k in ('fieldcount', 'fieldlength',
                                       'threads')}, -1)[0]
    try:
        scenario = Scenario(
            name=str(data.get('name') or 'scenario'), phases=phases,
            description=str(data.get('description') or '').strip(),
            slo_ms=float(data.get('slo_ms', 35.0)),
            policy=dict(data.get('policy') or {}),
            elastman={str(g): dict(v) for g, v in
                      (data.get('elastman') or {}).items()},
            recordcount=int(work.get('recordcount', 10000)),
            consistency=str(work.get('consistency', 'ONE')).upper(),
            load=load, until=until, probe_phases=probe_phases,
            reference_ops=reference_ops, probe_measure=probe_measure,
            **cluster)
    except (TypeError, ValueError) as exc:
        raise ScenarioError(str(exc))
    if scenario.slo_ms <= 0 or scenario.size < 1 or scenario.recordcount < 1:
        raise ScenarioError('slo_ms, cluster size and recordcount must be '
                            'positive')
    policy = scenario.scaling_policy()
    if not policy['min_size'] <= scenario.size <= policy['max_size']:
        raise ScenarioError('cluster size %d is outside the policy bounds '
                            '[%d, %d]' % (scenario.size, policy['min_size'],
                                          policy['max_size']))
    return scenario


def _phase_list(raw_phases: list, defaults: Mapping[str, Any],
                what: str = '') -> tuple[list[ycsb.Phase], dict[str, str],
                                         list[str]]:
    """A list of YAML phases expanded: the phases, their ``until`` events
    and each YAML phase's name (a ramp's steps are ``name.1`` ...).
    """
    phases: list[ycsb.Phase] = []
    until: dict[str, str] = {}
    stems: list[str] = []
    for i, raw in enumerate(raw_phases):
        if not isinstance(raw, Mapping):
            raise ScenarioError('%sphase %d is not a mapping' % (what, i + 1))
        expanded = _expand(raw, defaults, i)
        if raw.get('until') is not None:
            if raw['until'] not in UNTIL_EVENTS:
                raise ScenarioError('phase %s: until must be one of %s' % (
                    expanded[0].name, ', '.join(UNTIL_EVENTS)))
            if len(expanded) != 1:
                raise ScenarioError('phase %s: a ramp cannot have until'
                                    % expanded[0].name)
            until[expanded[0].name] = raw['until']
        stems.append(str(raw.get('name') or expanded[0].name))
        phases.extend(expanded)
    names = [p.name for p in phases]
    if len(set(names)) != len(names):
        raise ScenarioError('%sphase names must be unique' % what)
    return phases, until, stems


def _calibration(raw: Any, defaults: Mapping[str, Any]
                 ) -> tuple[list[ycsb.Phase], float | None, str | None]:
    """The probe phases, reference load and measured phase of a
    ``calibration`` section (``measure``: a phase name, by default the
    last one).
    """
    if raw is None:
        return [], None, None
    if not isinstance(raw, Mapping):
        raise ScenarioError('calibration: a mapping is required')
    bad = set(raw) - {'reference_ops', 'phases', 'measure'}
    if bad:
        raise ScenarioError('calibration: unknown keys %s'
                            % ', '.join(sorted(bad)))
    try:
        reference = float(raw['reference_ops'])
    except (KeyError, TypeError, ValueError):
        raise ScenarioError('calibration: reference_ops (ops/s) is required')
    if not reference > 0:
        raise ScenarioError('calibration: reference_ops must be > 0')
    raw_phases = raw.get('phases')
    if not raw_phases or not isinstance(raw_phases, list):
        raise ScenarioError('calibration: phases, a non-empty list, is '
                            'required')
    phases, until, stems = _phase_list(raw_phases, defaults, 'calibration ')
    if until:
        raise ScenarioError('calibration: a probe phase cannot have until')
    measure = str(raw.get('measure') or stems[-1])
    if measure not in stems:
        raise ScenarioError('calibration: measure names no phase (%s)'
                            % ', '.join(stems))
    return phases, reference, measure


def load_scenario(path: str) -> Scenario:
    try:
        with open(path) as f:
            data = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as exc:
        raise ScenarioError('%s: %s' % (path, exc))
    return parse_scenario(data)


def schedule(scenario: Scenario) -> list[tuple[float, float, ycsb.Phase]]:
    """(start offset, end offset, phase) of every phase, in seconds."""
    out, t = [], 0.0
    for p in scenario.phases:
        out.append((t, t + p.duration_s, p))
        t += p.duration_s
    return out
