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
"""The oracle: the simulator's latency law, and no violation minute."""
import dataclasses

import numpy as np
import pytest

from elastman.evaluation import oracle as om
from elastman.evaluation import policies as pol
from elastman.evaluation import simulator as sm
from elastman.evaluation import traces as tr

FLAVORS = [sm.Flavor('m1.medium')]


def _sim(cfg, name='flash', nodes=20, seed=1, size=20):
    trace = tr.load(name, nodes, None, seed, cfg.hardware)
    return sm.SimCluster(trace, cfg, FLAVORS, {'m1.medium': size}, seed, 'oracle')


@pytest.mark.parametrize('routing', sm.READ_ROUTING)
def test_safe_is_the_simulators_p99_without_noise(routing):
    """Without noise (and z = spike = 0) a minute is safe exactly when the
    simulator's cluster p99 is under the SLO, the reads (two thirds of the
    load) spread as ``read_routing`` says and the writes by token share.
    """
    cfg = sm.SimConfig(latency_noise=0.0, size_noise=0.0, read_routing=routing)
    sim = _sim(cfg)
    plan = om.Planner(sim, z=0.0, spike=0.0)
    rng = np.random.default_rng(4)
    g = np.exp(rng.normal(0, 0.1, 20))
    f = np.exp(rng.normal(0, 0.3, 20))
    token = g / g.sum()
    reads = g * f / (g * f).sum() if routing == 'capacity' else token
    flips = 0
    for x in np.linspace(5, 30, 60):
        u = (x * (2 * reads + token) / 3 + 0.02) / f
        p99 = cfg.slo_ms * (1 - cfg.rho) / np.maximum(1 - cfg.rho * u, (1 - cfg.rho) / 50)
        truth = sm.aggregate_p99(p99, reads, iters=60) <= cfg.slo_ms
        got = plan.safe(g, f[:, None], np.ones((20, 1), bool),
                        np.array([[2 * x / 3, x / 3]]), np.array([0.02]))[0]
        assert got == truth, x
        flips += not truth
    assert 0 < flips < 60                   # both sides of the boundary were tried


def test_reads_that_follow_capacity_let_slow_vms_carry_more_load():
    """With a third of the VMs at half speed, the largest safe load is
    higher when the reads follow capacity than when they follow tokens.
    """
    largest = {}
    for routing in sm.READ_ROUTING:
        cfg = sm.SimConfig(latency_noise=0.0, size_noise=0.0, read_routing=routing)
        plan = om.Planner(_sim(cfg), z=0.0, spike=0.0)
        g, one = np.ones(21), np.ones((21, 1), bool)
        f = np.where(np.arange(21) % 3 == 0, 0.5, 1.0)[:, None]
        ok = [x for x in np.linspace(5, 25, 201)
              if plan.safe(g, f, one, np.array([[x, 0.0]]), np.array([0.02]))[0]]
        largest[routing] = max(ok)
    # token: the half-speed VMs bound it (21 x 0.5 = 10.5 nominal VMs);
    # capacity: the cluster's whole capacity does (17.5 nominal VMs)
    assert largest['token'] < 11.0 < 15.0 < largest['capacity'] < 17.5


def _largest_safe_load(plan):
    g, f, one = np.ones(20), np.ones((20, 1)), np.ones((20, 1), bool)
    loads = np.linspace(10, 22, 241)
    ok = [plan.safe(g, f, one, np.array([[x, 0.0]]), np.array([0.02]))[0]
          for x in loads]
    return loads[np.flatnonzero(ok).max()]


def test_noise_makes_the_oracle_keep_a_margin():
    cfg = sm.SimConfig()
    quiet = om.Planner(_sim(dataclasses.replace(cfg, latency_noise=0.0, size_noise=0.0)),
                       z=0.0, spike=0.0)
    # 20 equal VMs meet the SLO up to u = 1 exactly (20 VMs of load, 2% size)
    assert _largest_safe_load(quiet) == pytest.approx(20 * 0.98, abs=0.06)
    noisy = _largest_safe_load(om.Planner(_sim(cfg)))
    assert 0.9 * 20 * 0.98 < noisy < 20 * 0.98 - 0.2


def test_interference_is_known_ahead():
    cfg = sm.SimConfig()
    sim = _sim(cfg)
    plan = om.Planner(sim)
    one = next(k for k in range(500) if len(sim.lottery.episodes(k)) == 1)
    none = next(k for k in range(500) if not sim.lottery.episodes(k))
    start, end, fac = sim.lottery.episodes(one)[0]
    times = np.array([start - 60, (start + end) / 2, end + 60])
    got = plan.interference(np.array([one, none]), times)
    assert got[0].tolist() == pytest.approx([1.0, fac, 1.0])
    assert got[1].tolist() == [1.0, 1.0, 1.0]


def test_without_foresight_an_episode_is_known_once_begun():
    cfg = sm.SimConfig()
    sim = _sim(cfg)
    plan = om.Planner(sim, foresee_interference=False)
    one = next(k for k in range(500) if len(sim.lottery.episodes(k)) == 1
               and sim.lottery.episodes(k)[0][0] > 600)
    start, end, fac = sim.lottery.episodes(one)[0]
    times = np.array([start - 60, (start + end) / 2, end + 60])
    sim.t = start - 60.0
    assert plan.interference(np.array([one]), times)[0].tolist() == [1.0, 1.0, 1.0]
    sim.t = start
    assert plan.interference(np.array([one]), times)[0].tolist() == pytest.approx(
        [1.0, fac, 1.0])


def test_the_margin_keeps_one_vm_safe_from_a_drop():
    """20 equal VMs at 85% of their capacity are safe; with a margin of
    0.3 they are not (one VM at 0.85 / 0.7 of its capacity holds 5% of the
    reads, over the 1% that break the p99), and at 60% they are again.
    """
    cfg = sm.SimConfig(latency_noise=0.0, size_noise=0.0)
    sim = _sim(cfg)
    g, f, one = np.ones(20), np.ones((20, 1)), np.ones((20, 1), bool)
    plain = om.Planner(sim, z=0.0, spike=0.0)
    guarded = om.Planner(sim, z=0.0, spike=0.0, interference_margin=0.3)
    size = np.array([0.02])
    hot = np.array([[20 * (0.85 - 0.02), 0.0]])
    cool = np.array([[20 * (0.6 - 0.02), 0.0]])
    assert plain.safe(g, f, one, hot, size)[0]
    assert not guarded.safe(g, f, one, hot, size)[0]
    assert guarded.safe(g, f, one, cool, size)[0]
    with pytest.raises(ValueError, match='interference_margin'):
        om.Planner(sim, interference_margin=1.0)


def test_the_load_oracle_pays_for_interference_it_cannot_see():
    """With ten times the default interference, the oracle that sees
    episodes only once begun violates without a margin; its margin buys the
    minutes back with VM-hours, and it never beats the oracle.
    """
    cfg = sm.SimConfig(interference_per_day=1.0)
    trace = tr.load('ramp', 20, None, 1, cfg.hardware)
    oracle = sm.run(trace, pol.Oracle(), cfg, FLAVORS, 1)['series']
    runs = {}
    for m in (0.0, 0.4):
        blind = pol.LoadOracle(interference_margin=m)
        res = sm.run(trace, blind, cfg, FLAVORS, 1)['series']
        assert res['vms'].sum() == blind.chosen['vm_minutes']
        runs[m] = (int(res['violation'].sum()), int(res['vms'].sum()))
    assert oracle['violation'].sum() == 0
    assert runs[0.0][0] > runs[0.4][0]
    assert runs[0.4][1] > runs[0.0][1] > oracle['vms'].sum()


def test_a_margin_out_of_reach_still_serves_the_load():
    """No start can keep a VM safe from losing 90% of its capacity; the
    planner then still starts what the load needs: no violation minute.
    """
    cfg = sm.SimConfig(interference_per_day=0.0)
    trace = tr.load('ramp', 20, None, 1, cfg.hardware)
    res = sm.run(trace, pol.LoadOracle(interference_margin=0.9), cfg, FLAVORS, 1)
    assert res['series']['violation'].sum() == 0


class _Recording(pol.Oracle):
    """The oracle, noting which VMs it replaces ahead of interference."""

    def start(self, sim):
        super().start(sim)
        self.replaced = []

    def control(self, sim):
        act = super().control(sim)
        if act is not None and 'interference ahead' in act.reason:
            self.replaced.extend((k, sim.t) for k in act.remove)
        return act


@pytest.mark.parametrize('name', ['ramp', 'steps'])
def test_no_violation_minute_even_with_frequent_interference(name):
    """Ten times the default interference: the oracle plans for every
    episode (replacing a VM before its episode or growing around it) and has
    no violation minute, at fewer VM-hours than target tracking, which cannot
    see them and violates; a replaced VM is gone before its episode starts.
    """
    cfg = sm.SimConfig(interference_per_day=1.0)
    trace = tr.load(name, 20, None, 1, cfg.hardware)
    oracle = _Recording()
    res = sm.run(trace, oracle, cfg, FLAVORS, 1)
    target = sm.run(trace, pol.TargetTracking(), cfg, FLAVORS, 1)
    assert res['series']['violation'].sum() == 0
    # the plan chosen on the twin cluster is what the cluster did
    assert res['series']['vms'].sum() == oracle.chosen['vm_minutes']
    assert oracle.chosen['violation_minutes'] == 0
    assert target['series']['violation'].sum() > 0
    assert res['series']['vms'].sum() < target['series']['vms'].sum()
    assert oracle.replaced
    lottery = res['sim'].lottery
    for k, t in oracle.replaced:
        starts = [s for s, e, _ in lottery.episodes(k) if e > t]
        assert min(starts) >= t + cfg.decommission_s


def test_the_cheaper_of_the_two_scale_out_rules_is_kept():
    cfg = sm.SimConfig()
    trace = tr.load('steps', 20, None, 1, cfg.hardware)
    sim = sm.SimCluster(trace, cfg, FLAVORS, {'m1.medium': 10}, 1, 'oracle')
    chosen, plan = om.best_plan(sim, {'m1.medium': 10}, 'oracle')
    costs = {}
    for room in (False, True):
        twin = sm.SimCluster(trace, cfg, FLAVORS, {'m1.medium': 10}, 1, 'oracle')
        planner = om.Planner(twin, room_to_grow=room)
        vms = 0
        for _ in range(len(trace)):
            vms += twin.step()['vms']
            add, remove, _ = planner.plan()
            if add or remove:
                twin.apply(sm.Action(add=add, flavor='m1.medium', remove=remove))
        costs[room] = vms
    assert chosen['vm_minutes'] == min(costs.values())
    assert costs[chosen['room_to_grow']] == chosen['vm_minutes']
    assert plan and all(isinstance(a, sm.Action) for a in plan.values())


def test_joins_in_a_row_are_planned_ahead():
    """With one join slot the VMs of a rise join one after the other: the
    oracle starts them early enough and its plan is what the cluster did.
    """
    cfg = sm.SimConfig(join_slots=1)
    trace = tr.load('ramp', 20, None, 1, cfg.hardware)
    oracle = pol.Oracle()
    res = sm.run(trace, oracle, cfg, FLAVORS, 1)
    assert res['series']['violation'].sum() == 0
    assert res['series']['vms'].sum() == oracle.chosen['vm_minutes']
    grow = [a for a in res['actions'] if a.kind == 'scale_out']
    assert any(a.count > 1 for a in grow)
    # started together, they would have joined in about one join time
    assert max(a.done_at - a.t for a in grow) > 2 * cfg.join_s


@pytest.mark.parametrize('name', ['paper', 'flash'])
def test_the_serial_oracle_keeps_one_action_in_flight(name):
    """Held to one action in flight, the oracle starts none while another
    runs and still has no violation minute; the oracle without that rule
    overlaps its actions on the same trace.
    """
    cfg = sm.SimConfig()
    trace = tr.load(name, 20, None, 1, cfg.hardware)

    def overlaps(actions):
        return sum(b.t < a.done_at for a, b in zip(actions, actions[1:]))

    serial = pol.SerialOracle()
    res = sm.run(trace, serial, cfg, FLAVORS, 1)
    assert res['series']['violation'].sum() == 0
    assert res['series']['vms'].sum() == serial.chosen['vm_minutes']
    assert len(res['actions']) > 2 and overlaps(res['actions']) == 0
    assert 'one action in flight' in serial.describe()
    free = sm.run(trace, pol.Oracle(), cfg, FLAVORS, 1)
    assert overlaps(free['actions']) > 0
