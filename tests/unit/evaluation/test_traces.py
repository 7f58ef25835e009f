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
"""The load shapes of the simulator and the frontier sweep."""
import numpy as np
import pytest

from elastman.evaluation import traces as tr


def _need(t):
    """VMs at utilisation 1 the trace needs per minute (nominal hardware)."""
    return t.total / tr.node_ops_capacity(t.reads / t.total, t.size, tr.Hardware())


@pytest.mark.parametrize('name', tr.ALL)
def test_every_trace_peaks_at_the_cluster_size(name):
    t = tr.load(name, 50)
    assert tr.shape(name).name == name
    # the peak needs 50 VMs at the planning utilisation
    assert _need(t).max() == pytest.approx(50 * tr.PEAK_UTILISATION, rel=1e-6)
    assert np.all(t.reads > 0) and np.all(t.writes > 0)


@pytest.mark.parametrize('name', tr.ALL)
def test_shapes_are_deterministic(name):
    a, b = tr.load(name, 50, seed=3), tr.load(name, 50, seed=3)
    assert a.total.tolist() == b.total.tolist()


def test_campaign_rises_slowly_for_ten_hours():
    sh = tr.shape('campaign')
    rise = np.diff(sh.load[60:660])
    assert np.all(rise > 0) and sh.load[660] / sh.load[60] == pytest.approx(5.0)
    assert len(sh) == 900


def test_steps_jump_at_once():
    sh = tr.shape('steps')
    means = sh.load.reshape(10, 48).mean(axis=1)
    jumps = np.abs(np.diff(means))
    assert jumps.min() > 0.1 and jumps.max() > 0.4
    # the biggest one-minute change is at a step boundary
    assert (int(np.argmax(np.abs(np.diff(sh.load)))) + 1) % 48 == 0


def test_flash_crowd_rises_within_minutes():
    sh = tr.shape('flash')
    assert sh.load[125] / sh.load[119] > 2.5
    assert sh.load[300] < 0.75


def test_seasonal_weekend_is_lower():
    sh = tr.shape('seasonal')
    days = sh.load.reshape(7, 1440).max(axis=1)
    assert days[:5].min() > 0.95 and days[5:].max() < 0.6


def test_mix_changes_the_work_per_request():
    t = tr.load('mix', 50)
    rf = t.reads / t.total
    assert rf[100] == pytest.approx(0.95) and rf[200] == pytest.approx(0.70)
    assert t.size[250] == 1024 and t.size[350] == 8192
    need = _need(t)
    # the VMs needed jump at each change, at a nearly constant request rate
    for at in (151, 301):
        assert need[at + 3] / need[at - 3] > 1.08
        assert t.total[at + 3] / t.total[at - 3] < 1.06


def test_export_for_forecast_eval(tmp_path):
    from elastman.predictor import evaluate
    tr.main(['--export', 'flash,mix', '--nodes', '20', '--out', str(tmp_path)])
    series = evaluate.read_trace(str(tmp_path / 'flash-20.csv'))
    assert set(series) == {'reads', 'writes'} and len(series['reads']) == 360
    t = tr.load('flash', 20)
    assert series['reads'][125] == pytest.approx(t.reads[125], abs=0.06)
