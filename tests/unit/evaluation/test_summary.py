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
"""A run's summary row, on a hand-made run of five two-minute steps."""
import numpy as np
import pytest

from elastman.evaluation import summary


def _run():
    series = {'t': np.arange(5) * 120.0,
              'violation': np.array([0, 1, 1, 0, 0]),
              'in_flight': np.array([0, 1, 0, 0, 1]),
              'over_interfered': np.array([1, 0, 2, 0, 0]),
              'vms': np.array([3, 3, 4, 5, 5]),
              'p99': np.array([10.0, 40.0, 50.0, 20.0, 12.0])}
    return {'series': series, 'actions': [{'kind': 'scale_out'}, {'kind': 'scale_out'}]}


def test_summarise_counts_minutes_vm_hours_and_actions():
    row = summary.summarise('elastman', _run(), step_s=120)
    assert row['policy'] == 'elastman'
    assert row['violation_minutes'] == 4.0          # two steps of two minutes
    assert row['violation_pct'] == pytest.approx(40.0)
    assert row['violation_minutes_in_flight'] == 2.0
    # the first step's interfered VM was over capacity in no violation
    assert row['violation_minutes_interfered'] == 2.0
    assert row['vm_hours'] == pytest.approx(20 * 120 / 3600)
    assert (row['actions'], row['max_vms'], row['mean_vms']) == (2, 5, 4.0)
    assert row['p99_median_ms'] == 20.0
    # the oracle's ratio is the report's to add
    assert set(summary.FIELDS) - set(row) == {'vm_hours_vs_oracle'}


def test_a_run_without_the_interference_column_counts_none():
    run = _run()
    del run['series']['over_interfered']
    assert summary.summarise('target', run, step_s=120)['violation_minutes_interfered'] == 0.0
