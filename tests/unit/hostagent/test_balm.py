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
"""BALM colours and controller phases on the simulated host."""
from __future__ import annotations

import pytest

from elastman.cassandra import histogram
from elastman.evaluation import hostsim as sim
from elastman.hostagent import balm
from elastman.hostagent import ladder


@pytest.mark.parametrize('lat,colour', [
    (36.0, balm.RED), (35.0, balm.YELLOW), (33.3, balm.YELLOW),
    (33.0, balm.GREY), (28.1, balm.GREY), (28.0, balm.GREEN), (1.0, balm.GREEN)])
def test_colours_against_35ms(lat, colour):
    assert balm.colour_of(lat, 35.0) == colour


def test_monitor_window_forgets_samples_before_a_change():
    mon = balm.SloMonitor(window=3.0, pct=95, min_samples=3)
    mon.register('lc', 0, 35.0)
    for i in range(50):
        mon.add_sample('lc', i * 0.02, 50.0)
    ev = mon.evaluate(1.0)
    assert ev.colour == balm.RED and ev.victims == {0}
    mon.mark_change(1.0)
    assert not mon.evaluate(1.0).ready
    for i in range(5):
        mon.add_sample('lc', 1.02 + i * 0.02, 10.0)
    ev = mon.evaluate(1.1)
    assert ev.ready and ev.colour == balm.GREEN and not ev.victims


def test_monitor_worst_lc_per_node():
    mon = balm.SloMonitor(min_samples=1)
    mon.register('a', 0, 35.0)
    mon.register('b', 1, 10.0)
    mon.add_sample('a', 0.0, 34.0)
    mon.add_sample('b', 0.0, 5.0)
    ev = mon.evaluate(0.0)
    assert ev.per_node == {0: balm.YELLOW, 1: balm.GREEN}
    assert ev.colour == balm.YELLOW and ev.victims == {0}


def _host(load=1.0):
    host = sim.SimulatedHost(sim.SimConfig(seed=7))
    host.add_lc(sim.SimLC('lc', node=0, load=load))
    host.add_be(sim.SimBE('hog', node=1, phases=((1.0, 1.0),)))
    host.add_be(sim.SimBE('small', node=1, demand_gbs=2.0, memory_gb=1.0,
                          phases=((1.0, 1.0),)))
    return host


def _drive(host, ctl, mon, seconds):
    for _ in range(int(seconds / host.cfg.tick)):
        host.step()
        mon.add_sample('lc', host.now(), host.observe('lc'))
        ctl.tick()


def test_phase1_throttles_the_biggest_contributor_first():
    host = _host()
    mon = balm.SloMonitor()
    mon.register('lc', 0, 35.0)
    ctl = balm.BalmController(host, mon, balm.BalmConfig(mode='mba'))
    ctl.set_best_effort(['small', 'hog'])
    host.step()
    assert ctl.order_by_bandwidth({0}) == ['hog', 'small']
    _drive(host, ctl, mon, 0.5)
    assert host.get_mba('hog') < 100
    assert host.get_mba('small') == 100  # throttling the hog was enough


def test_balm_moves_pages_inbound_and_restores_mba():
    host = _host()
    mon = balm.SloMonitor()
    mon.register('lc', 0, 35.0)
    ctl = balm.BalmController(host, mon, balm.BalmConfig())
    ctl.set_best_effort(['hog', 'small'])
    before = host.bes['hog'].pages[0]
    _drive(host, ctl, mon, 20)
    assert host.bes['hog'].pages[0] < before  # pages left the victim node
    assert host.get_mba('hog') == 100
    assert host.lc_true_latency['lc'] <= 35.0
    assert ctl.stats.batches > 0


def _escalations(config: balm.BalmConfig) -> list[dict]:
    """What the controller escalates in 15 s on a host it cannot fix: the
    LC alone saturates its node.
    """
    host = sim.SimulatedHost(sim.SimConfig(seed=3))
    host.add_lc(sim.SimLC('lc', node=0, load=1.0, demand_gbs=60.0))
    host.add_be(sim.SimBE('hog', node=1, phases=((1.0, 1.0),)))
    mon = balm.SloMonitor()
    mon.register('lc', 0, 35.0)
    calls = []
    ctl = balm.BalmController(host, mon, config, escalate=calls.append)
    ctl.set_best_effort(['hog'])
    _drive(host, ctl, mon, 15)
    return calls


def test_escalates_after_max_retries_when_unfixable():
    calls = _escalations(balm.BalmConfig(max_retries=2))
    assert calls and calls[0]['victim_nodes'] == [0]
    assert calls[0]['retries'] == 3


def test_rollback_of_a_migration_that_turns_another_node_red():
    host = sim.SimulatedHost(sim.SimConfig(seed=5))
    host.add_lc(sim.SimLC('lc0', node=0, load=1.0))
    host.add_lc(sim.SimLC('lc1', node=1, load=1.0, demand_gbs=33.0))
    host.add_be(sim.SimBE('hog', node=0, phases=((1.0, 1.0),)),
                {0: 0.8, 1: 0.2})
    mon = balm.SloMonitor()
    mon.register('lc0', 0, 35.0)
    mon.register('lc1', 1, 35.0)
    ctl = balm.BalmController(host, mon, balm.BalmConfig(mode='pgm'))
    ctl.set_best_effort(['hog'])
    for _ in range(int(10 / host.cfg.tick)):
        host.step()
        for lc in ('lc0', 'lc1'):
            mon.add_sample(lc, host.now(), host.observe(lc))
        ctl.tick()
    assert ctl.stats.rollbacks >= 1


def test_monitor_histograms_take_the_percentile_of_every_request():
    mon = balm.SloMonitor(window=3.0, min_samples=3, request_pct=99.0)
    mon.register('lc', 0, 35.0)
    fast = histogram.offsets(100).index(1109)       # ~1 ms reads
    slow = histogram.offsets(100).index(42510)      # ~40 ms reads
    for i in range(10):                             # 200 ms of polls
        mon.add_histogram('lc', i * 0.02, {fast: 50})
    ev = mon.evaluate(0.2)
    assert ev.ready and ev.colour == balm.GREEN
    assert ev.latency['lc'] < 1.2
    # 2% of the window's reads are slow: its p99 is above the SLO
    for i in range(10, 20):
        mon.add_histogram('lc', i * 0.02, {fast: 49, slow: 1 if i % 2 else 2})
    ev = mon.evaluate(0.4)
    assert ev.colour == balm.RED and ev.victims == {0}
    # an idle window is green, not "not ready"
    for i in range(20, 30):
        mon.add_histogram('lc', 4.0 + i * 0.02, {})
    ev = mon.evaluate(4.6)
    assert ev.ready and ev.colour == balm.GREEN and 'lc' not in ev.latency


def _cross(seed=11, mba=True):
    host = sim.SimulatedHost(sim.SimConfig(seed=seed, mba=mba))
    host.add_lc(sim.SimLC('lc', node=0, load=1.0))
    host.add_be(sim.SimBE('hog', node=1, phases=((1.0, 1.0),)))
    mon = balm.SloMonitor()
    mon.register('lc', 0, 35.0)
    return host, mon


def test_ladder_without_mba_throttles_the_cpu_quota_first():
    host, mon = _cross(mba=False)
    ctl = balm.BalmController(host, mon, balm.BalmConfig(mode='ladder'))
    ctl.set_best_effort(['hog'])
    _drive(host, ctl, mon, 0.6)
    actions = [e for e in ctl.events if e['kind'] == 'action']
    assert actions[0]['rung'] == 'cpu_quota'
    assert actions[0]['level'] == pytest.approx(10.0)
    assert host.get_mba('hog') == 100               # no MBA on this host
    colours = [e for e in ctl.events if e['kind'] == 'colour']
    assert colours[0]['colour'] in balm.DANGER
    assert actions[0]['t'] - colours[0]['t'] <= 0.05  # within a poll or two
    _drive(host, ctl, mon, 20)
    assert host.lc_true_latency['lc'] <= 35.0
    assert ctl.stats.cpu_steps > 1 and ctl.stats.batches > 0


def test_ladder_repins_the_vcpus_when_the_memory_went_first():
    host = sim.SimulatedHost(sim.SimConfig(seed=4))
    host.add_lc(sim.SimLC('lc', node=0, load=1.0))
    # a BE on the LC's socket whose memory already sits mostly on node 1
    host.add_be(sim.SimBE('hog', node=0, phases=((1.0, 1.0),)),
                {0: 0.45, 1: 0.55})
    mon = balm.SloMonitor()
    mon.register('lc', 0, 35.0)
    ctl = balm.BalmController(host, mon, balm.BalmConfig(mode='ladder'))
    ctl.set_best_effort(['hog'])
    _drive(host, ctl, mon, 10)
    assert ctl.stats.repins == 1 and host.home_node('hog') == 1
    pins = [e for e in ctl.events if e.get('rung') == 'vcpu_pin']
    first_batch = [e for e in ctl.events if e.get('rung') == 'page_migration']
    assert not first_batch or pins[0]['t'] < first_batch[0]['t']


def test_repin_checks_the_target_and_the_vms_memory_first():
    """Merlin's checks before a vCPU move: the target's LCs are green, and
    the VM's memory is not left behind on the victim node.
    """
    host = sim.SimulatedHost(sim.SimConfig(seed=4))
    host.add_be(sim.SimBE('hog', node=0), {0: 0.45, 1: 0.55})
    ctl = balm.BalmController(host, balm.SloMonitor(),
                              balm.BalmConfig(mode='ladder'))
    ctl.set_best_effort(['hog'])

    def ev(node1):
        per_node = {0: balm.RED} if node1 is None else \
            {0: balm.RED, 1: node1}
        return balm.Evaluation(balm.RED, frozenset({0}), per_node)
    assert ctl._pin_target('hog', {0}, ev(balm.GREEN)) == 1
    assert ctl._pin_target('hog', {0}, ev(None)) == 1      # no LC there
    assert ctl._pin_target('hog', {0}, ev(balm.GREY)) is None
    assert ctl._pin_target('hog', {0}, ev(balm.YELLOW)) is None
    assert ctl._pin_target('hog', {1}, ev(balm.GREEN)) is None  # not home
    host.bes['hog'].pages = {0: 10.0, 1: 6.0}
    assert ctl._pin_target('hog', {0}, ev(balm.GREEN)) is None
    assert balm.BalmController(host, balm.SloMonitor(), balm.BalmConfig(
        mode='balm'))._pin_target('hog', {0}, ev(balm.GREEN)) is None


def test_escalation_recommends_live_migration_once_per_interval():
    calls = _escalations(balm.BalmConfig(
        mode='ladder', max_retries=1, escalation_interval=10.0))
    assert 1 <= len(calls) <= 2
    assert calls[0]['recommendation'] == {
        'action': 'live_migration', 'server_id': 'hog',
        'cost_ms': ladder.step_cost('live_migration')}


def test_unknown_rung_is_named():
    with pytest.raises(ValueError, match='warp_drive'):
        balm.BalmConfig(mode='ladder', rungs=('mba', 'warp_drive')).enabled
