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
"""A scenario's targets scaled to the machine it runs on.

A local node's capacity is the machine's: the same 0.3-CPU node served
three to four times fewer requests within the SLO on one day than on
another (doc/source/evaluation-live.rst). A scenario with a
``calibration`` section first runs its probe, the static cluster under a
stepped ramp; the load it served at the SLO here (:func:`knee`), over the
load it served where the targets were written (``reference_ops``), is the
factor every target is scaled by (:func:`factor`), so that an elastic and
a static run made after it face the same share of the static cluster's
capacity on any machine.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Mapping

from elastman.evaluation.live_scenario import Scenario
from elastman.evaluation.live_scenario import ScenarioError


@dataclasses.dataclass(frozen=True)
class Knee:
    """The most the static cluster served within the SLO in the probe."""

    ops: float            # reads + writes per second (the nodes' count)
    minute: int           # the probe's minute that served it
    crossed: bool         # whether a later step went over the SLO
    steps: int            # measured minutes
    backlog: int = 0      # minutes over the SLO before the first within it


def knee(rows: Iterable[Mapping[str, Any]], slo_ms: float,
         measure: str) -> Knee:
    """The highest load the nodes served within ``slo_ms`` in the steps of
    phase ``measure`` (``minutes.csv`` rows, in order), up to the first
    minute after a minute within it whose nodes' read p99 went over it.
    Minutes over the SLO before the first within it are the backlog of
    what ran before the phase (a warm-up the nodes could not serve, cold
    JVMs), not the knee: they are left out and counted (``backlog``).
    Raises :class:`ScenarioError` when no minute was within the SLO.
    """
    best: tuple[float, int] | None = None
    crossed, steps, backlog = False, 0, 0
    for row in rows:
        phase = str(row.get('phase') or '')
        if phase != measure and not phase.startswith(measure + '.'):
            continue
        p99 = row.get('server_read_p99_ms')
        reads, writes = row.get('server_reads_per_s'), row.get('server_writes_per_s')
        if p99 is None or reads is None:
            continue
        steps += 1
        if float(p99) > slo_ms:
            if best is None:
                backlog += 1
                continue
            crossed = True
            break
        served = float(reads) + float(writes or 0.0)
        if best is None or served > best[0]:
            best = (served, int(row['minute']))
    if best is None:
        raise ScenarioError(
            'the probe\'s phase %s has no minute within the SLO of %g ms '
            '(%d measured): start its ramp lower' % (measure, slo_ms, steps))
    return Knee(best[0], best[1], crossed, steps, backlog)


def factor(found: Knee, scenario: Scenario) -> float:
    """The targets' scale: the knee here over the scenario's reference."""
    if not scenario.reference_ops:
        raise ScenarioError('scenario %s has no calibration section'
                            % scenario.name)
    return found.ops / float(scenario.reference_ops)


def describe(found: Knee, scenario: Scenario, scale: float) -> dict[str, Any]:
    """What ``calibration.json`` holds."""
    return {'scenario': scenario.name, 'slo_ms': scenario.slo_ms,
            'measured_phase': scenario.probe_measure,
            'knee_ops': round(found.ops, 1), 'knee_minute': found.minute,
            'crossed': found.crossed, 'measured_minutes': found.steps,
            'backlog_minutes': found.backlog,
            'reference_ops': scenario.reference_ops,
            'scale': round(scale, 4),
            'note': ('' if found.crossed else
                     'no step went over the SLO: the knee is only a lower '
                     'bound of the capacity, so the scaled targets may stay '
                     'under it')}
