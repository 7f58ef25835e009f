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
"""One simulated run in figures: violation minutes, VM-hours, actions."""
from __future__ import annotations

from typing import Any

import numpy as np

#: the columns of ``summary.csv``, in order
FIELDS = ('policy', 'violation_minutes', 'violation_pct',
          'violation_minutes_in_flight', 'violation_minutes_interfered', 'vm_hours',
          'vm_hours_vs_oracle', 'actions', 'max_vms', 'mean_vms', 'p99_median_ms')


def summarise(name: str, result: dict[str, Any], step_s: int) -> dict[str, Any]:
    """The row of ``summary.csv`` for policy ``name``'s run ``result``
    (``simulator.run``'s; steps of ``step_s`` seconds), without
    ``vm_hours_vs_oracle``, which needs the oracle's run.
    """
    s = result['series']
    minutes = len(s['t'])
    viol = int(s['violation'].sum())
    in_flight = int((s['violation'] * s['in_flight']).sum())
    # minutes whose VMs over capacity include one in an interference episode
    over_interfered = np.asarray(s.get('over_interfered', np.zeros(minutes)))
    interfered = int((s['violation'] * (over_interfered > 0)).sum())
    return {'policy': name, 'violation_minutes': viol * step_s / 60,
            'violation_pct': 100.0 * viol / max(minutes, 1),
            'violation_minutes_in_flight': in_flight * step_s / 60,
            'violation_minutes_interfered': interfered * step_s / 60,
            'vm_hours': float(s['vms'].sum()) * step_s / 3600.0,
            'actions': len(result['actions']), 'max_vms': int(s['vms'].max()),
            'mean_vms': float(s['vms'].mean()),
            'p99_median_ms': float(np.median(s['p99']))}
