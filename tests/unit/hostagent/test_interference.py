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
"""The interference index: host counters -> features -> Hubbub-Scale's
linear model (or the CPU-wait prior), and the agent's report.
"""
from __future__ import annotations

import os
import random
import time

import pytest

from elastman.hostagent import interference
from elastman.hostagent import perfcounters
from tests.unit.hostagent import helpers


def _busy(seconds):
    """Burn ``seconds`` of this thread's CPU time (however long it takes on
    a loaded machine).
    """
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_proc_counters_of_a_real_process():
    reader = interference.CounterReader()
    pid = os.getpid()
    before = reader.read({'me': pid})['me']
    _busy(0.3)
    after = reader.read({'me': pid})['me']
    r = interference.rates(before, after)
    assert 0.25 <= r.cpu * (after.t - before.t) <= 1.0  # the CPU we burnt
    assert after.run_s - before.run_s >= 0.25
    assert 0.0 <= r.wait_share < 1.0
    assert reader.read({'gone': 2 ** 22 + 7}) == {}     # no such process
    assert reader.sources['proc'] and not reader.sources['mbm']


def test_each_thread_file_of_a_real_process():
    pid = os.getpid()
    comms = interference.read_threads(pid, 'comm')
    assert pid in comms                           # the main thread
    assert all(name.endswith('\n') for name in comms.values())
    assert interference.read_threads(pid, 'no-such-file') == {}


def test_perf_software_counter_on_a_real_process():
    counters = perfcounters.open_counters(os.getpid(), ('task_clock',))
    if counters is None:
        pytest.skip('perf_event_open refused here (perf_event_paranoid)')
    first = counters.read()['task_clock']
    _busy(0.2)
    assert counters.read()['task_clock'] - first >= 0.18e9
    counters.close()
    if not perfcounters.pmu_available():
        assert perfcounters.open_counters(os.getpid(),
                                          ('cache_misses',)) is None


def _r(cpu=0.0, wait=0.0, mbm=None, perf=None):
    return interference.Rates(cpu, wait, mbm or {}, perf or {})


def test_features_from_what_the_host_has():
    norm = interference.Normaliser()
    homes = {'lc': 0, 'be0': 0, 'be1': 1}
    f = interference.features('lc', 0, homes, 4, {
        'lc': _r(2.0, 0.2), 'be0': _r(3.0), 'be1': _r(4.0)}, norm)
    assert f == {'lc_run_delay': 0.2, 'corunner_cpu': 0.75}
    f = interference.features('lc', 0, homes, 4, {
        'lc': _r(2.0, 0.1, {0: 1e9}, {'cache_references': 1e6}),
        'be0': _r(3.0, 0, {0: 4e9, 1: 1e9}, {'cache_references': 5e6,
                                             'cache_misses': 1e6}),
        'be1': _r(1.0, 0, {0: 2e9}, {'cache_references': 9e6})}, norm)
    assert f['corunner_bw'] == 1.0            # the largest seen so far
    assert f['corunner_llc_refs'] == 1.0      # only be0 shares node 0
    assert set(f) == set(interference.FEATURES)


def test_prior_is_the_cpu_wait_slowdown():
    assert interference.prior({'lc_run_delay': 0.0}) == 0.0
    assert interference.prior({'lc_run_delay': 0.2}) == pytest.approx(0.25)
    assert interference.prior({'lc_run_delay': 0.8}) == 1.0
    assert interference.prior({}) == 0.0


def test_model_learns_the_drop_from_the_counters():
    """Latency grows with co-runner CPU and bandwidth as 0.4 cpu + 0.8 bw;
    the fitted index tracks the drop, the prior does not see bandwidth.
    """
    rng = random.Random(7)
    model = interference.IndexModel(min_pairs=30)
    for i in range(400):
        cpu, bw = rng.random(), rng.random() if i % 3 else 0.0
        feats = {'lc_run_delay': 0.05 * cpu, 'corunner_cpu': cpu,
                 'corunner_bw': bw}
        drop = 0.4 * cpu + 0.8 * bw
        model.observe('lc', feats, 10.0 * (1 + drop) * rng.uniform(0.97, 1.03),
                      rate=1000.0)
    index, source = model.index({'lc_run_delay': 0.0, 'corunner_cpu': 0.5,
                                 'corunner_bw': 0.5})
    assert source == 'regression'
    assert index == pytest.approx(0.6, abs=0.12)
    assert model.weights['corunner_bw'] > model.weights['corunner_cpu'] > 0
    assert interference.IndexModel().index({'lc_run_delay': 0.5}) == \
        (1.0, 'prior')


def test_agent_reports_an_index_from_real_counters(tmp_path):
    from elastman.hostagent import manager
    agent = manager.HostAgentManager(helpers.agent_conf(tmp_path))
    agent.monitor.register('lc', 0, 35.0)
    agent._pids = {'lc': os.getpid()}
    assert agent.report_interference() == {}      # the first reading
    _busy(0.1)
    payload = agent.report_interference()['lc']
    assert payload['index_source'] == 'prior'
    assert 0.0 <= payload['interference_index'] <= 1.0
    assert set(payload['features']) == {'lc_run_delay', 'corunner_cpu'}
    assert payload['slo_ms'] == 35.0 and payload['node'] == 0
