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
"""The latency guard against hand-made monitor rounds."""
from types import SimpleNamespace

import pytest

from elastman.actuator import decision as dec
from elastman.actuator import guard
from elastman.actuator import planning
from elastman.actuator.policy import ScalingPolicy

NOW = 50_000.0
SLO = 35.0


def policy(**kw):
    base = dict(min_size=3, max_size=20, replication_factor=3, alpha=1,
                guard_warning=0.8, guard_intervals=2, guard_step=0.1,
                cooldown_s=300, headroom=0.2)
    base.update(kw)
    return ScalingPolicy(**base)


def state(n=10, **kw):
    return dec.ClusterState([dec.NodeInfo('n%d' % i, 'm1') for i in range(n)], **kw)


def rnd(values, at=NOW, cluster=None):
    """A round: the first VMs at ``values`` ms, the others at 10 ms."""
    p99 = {'n%d' % i: 10.0 for i in range(10)}
    p99.update({'n%d' % i: v for i, v in enumerate(values)})
    return guard.Round(at, p99, cluster)


def est(load, cap, bound='exact'):
    return SimpleNamespace(load=load, capacity=cap, bound=bound)


def test_green_does_nothing_and_does_not_block_scale_in():
    a = guard.evaluate(policy(), state(), [rnd([20, 20, 20])], {}, NOW)
    assert (a.colour, a.decision, a.blocks_scale_in) == ('green', None, False)


def test_estimates_are_needed_only_off_green():
    green = guard.assess(policy(), [rnd([20, 20, 20])])
    yellow = guard.assess(policy(), [rnd([29, 30])])
    red = guard.assess(policy(), [rnd([40, 50])])
    assert [guard.needs_estimates(policy(), a) for a in (green, yellow, red)] == [
        False, True, True]
    assert not guard.needs_estimates(policy(guard=False), red)


def test_one_vm_in_the_band_is_within_alpha_but_blocks_scale_in():
    a = guard.evaluate(policy(), state(), [rnd([30]), rnd([30])], {}, NOW)
    assert a.colour == 'green' and a.decision is None
    assert a.in_band == ['n0'] and a.blocks_scale_in


def test_a_vm_in_the_band_in_one_of_the_last_rounds_holds_scale_in():
    # n0 left the band this round, n1 two rounds ago (beyond guard_intervals)
    rounds = [rnd([20]), rnd([30]), rnd([10, 30])]
    a = guard.assess(policy(), rounds)
    assert a.in_band == [] and a.held == ['n0']
    assert a.to_dict()['held'] == ['n0']
    assert guard.assess(policy(guard_intervals=3), rounds).held == ['n0', 'n1']
    assert guard.assess(policy(), [rnd([20]), rnd([20])]).held == []


def test_yellow_must_last_guard_intervals():
    yellow = rnd([29, 30])
    one = guard.evaluate(policy(), state(), [yellow, rnd([])], {}, NOW)
    assert (one.colour, one.hot_rounds, one.decision) == ('yellow', 1, None)
    two = guard.evaluate(policy(), state(), [yellow, yellow], {}, NOW)
    d = two.decision
    assert (d.kind, d.count, d.trigger) == (dec.SCALE_OUT, 1, 'guard')
    assert d.reason.startswith('guard: scale out by 1 of m1: yellow for 2 interval(s): '
                               '2 VM(s) in the warning band (>= 28 ms)')
    assert 'fixed step of 0.1 of 10 VMs' in d.reason


def test_red_acts_at_once():
    a = guard.evaluate(policy(), state(), [rnd([40, 50])], {}, NOW)
    assert a.colour == 'red' and a.decision.kind == dec.SCALE_OUT
    assert 'red: 2 VM(s) above the SLO 35 ms' in a.decision.reason


def test_the_cluster_p99_alone_can_make_a_round_hot():
    a = guard.evaluate(policy(), state(), [rnd([], cluster=40.0)], {}, NOW)
    assert a.colour == 'red' and a.decision.kind == dec.SCALE_OUT


def test_step_from_the_model_where_it_has_a_boundary():
    # three VMs at 1.5x their target (1.2 of 0.8 capacity): (1.2-0.8)/0.8 each
    e = {'n%d' % i: est(120, 100) for i in range(3)}
    a = guard.evaluate(policy(), state(), [rnd([40, 40, 40])], e, NOW)
    assert 'model: 3 VM(s) over their target, sum of (w-t)/t 1.50' in a.decision.reason
    # the three are at 1.2 of their capacity: the ring must spread over
    # ceil(10 x 0.2) = 2 more VMs for them to fall under it, as many as the sum
    assert a.decision.count == 2
    assert 'spread' not in a.decision.reason


def test_one_vm_far_over_its_capacity_is_diluted_over_the_ring():
    # one interfered VM at 1.5 of its capacity: the sum of the violators'
    # terms asks for ceil((1.5 - 0.8) / 0.8) = 1 VM, which lowers its load
    # by a tenth only; 5 more VMs leave it 10/15 of its load
    e = {'n0': est(150, 100)}
    e.update({'n%d' % i: est(50, 100) for i in range(1, 10)})
    a = guard.evaluate(policy(), state(), [rnd([400], cluster=60.0)], e, NOW)
    assert a.decision.count == 5
    assert ('the hottest at 1.50 of its capacity: 5 VM(s) to spread its load '
            'under it') in a.decision.reason
    # not where the cluster's own p99 is green (its clients see no
    # violation) and red VMs alone may scale out
    e['n1'] = est(150, 100)
    green = guard.evaluate(policy(guard_red_vms_alone=True), state(),
                           [rnd([400, 400], cluster=20.0)], e, NOW)
    assert green.decision.count == 2      # ceil(2 x 0.875), the sum
    assert 'spread' not in green.decision.reason


def test_dilution_counts_on_capacity_and_doubles_the_cluster_at_most():
    def term(load, cap):
        return dec.VMTerm('n', 'm1', load, cap, 'exact', dec.OVER, 0.0)
    assert guard.dilution([term(90, 100)], 10) == (0, 0.9)
    assert guard.dilution([term(110, 100), term(130, 100)], 10) == (3, 1.3)
    assert guard.dilution([term(500, 100)], 10) == (10, 5.0)
    assert guard.dilution([], 10) == (0, 0.0)


def test_red_takes_at_least_the_fixed_step():
    e = {'n0': est(85, 100), 'n1': est(85, 100)}
    a = guard.evaluate(policy(guard_step=0.5), state(), [rnd([40, 40])], e, NOW)
    assert a.decision.count == 5


def test_red_vms_in_a_green_cluster_take_the_models_step():
    # two VMs of ten above the SLO while the cluster's own p99 is green, and
    # red VMs alone may scale out: the model's step for the two, not half
    # of the cluster
    e = {'n0': est(85, 100), 'n1': est(85, 100)}
    a = guard.evaluate(policy(guard_step=0.5, guard_red_vms_alone=True), state(),
                       [rnd([40, 40], cluster=20.0)], e, NOW)
    assert a.colour == 'red' and a.decision.count == 1
    assert 'at least the fixed step' not in a.decision.reason
    # the cluster's p99 in the warning band or over the SLO keeps the fixed
    # step as the least
    for cluster_p99 in (30.0, 36.0):
        a = guard.evaluate(policy(guard_step=0.5), state(),
                           [rnd([40, 40], cluster=cluster_p99)], e, NOW)
        assert a.decision.count == 5


def test_red_vms_in_a_green_cluster_leave_the_slot_to_the_plan():
    # two VMs of 300 above the SLO, the cluster's own p99 green: no
    # scale-out, but no scale-in either
    e = {'n0': est(85, 100), 'n1': est(85, 100)}
    a = guard.evaluate(policy(max_size=400), state(300),
                       [rnd([40, 40], cluster=20.0)], e, NOW)
    assert a.colour == 'red' and a.blocks_scale_in
    assert (a.decision.kind, a.decision.blocked_by) == (dec.NONE, 'cluster_green')
    assert 'guard_red_vms_alone is off' in a.decision.reason
    # the cluster's p99 from the band's start, no cluster p99 measured, or
    # guard_red_vms_alone on: the guard scales out
    yellow = guard.evaluate(policy(max_size=400), state(300),
                            [rnd([40, 40], cluster=30.0)], e, NOW)
    unmeasured = guard.evaluate(policy(max_size=400), state(300),
                                [rnd([40, 40])], e, NOW)
    alone = guard.evaluate(policy(max_size=400, guard_red_vms_alone=True),
                           state(300), [rnd([40, 40], cluster=20.0)], e, NOW)
    for other in (yellow, unmeasured, alone):
        assert other.decision.kind == dec.SCALE_OUT
    # VMs in the band for guard_intervals rounds still scale out
    band = guard.evaluate(policy(max_size=400), state(300),
                          [rnd([30, 30], cluster=20.0)] * 2, e, NOW)
    assert band.colour == 'yellow' and band.decision.kind == dec.SCALE_OUT
    # nor does it stop the guard from keeping a scale-in's nodes
    shrink = guard.evaluate(
        policy(max_size=400),
        state(300, action_in_flight=True, shrinking=dec.Shrinking('a1', ['n5'])),
        [rnd([40, 40], cluster=20.0)], e, NOW)
    assert shrink.decision.kind == dec.TRIM


def test_a_lower_bound_does_not_size_the_step():
    e = {'n%d' % i: est(300, 100, 'lower') for i in range(3)}
    a = guard.evaluate(policy(), state(), [rnd([40, 40, 40])], e, NOW)
    assert a.decision.count == 1 and 'no boundary' in a.decision.reason


def test_an_action_in_flight_blocks_the_guard():
    a = guard.evaluate(policy(), state(action_in_flight=True), [rnd([40, 40])], {}, NOW)
    assert (a.decision.kind, a.decision.blocked_by) == (dec.NONE, 'in_flight')


def growing(adding):
    return state(action_in_flight=True,
                 growing=dec.Growing('a1', 'm2', adding))


def test_a_red_round_tops_up_a_growing_scale_out_by_what_its_step_lacks():
    # 10 VMs, guard_step 0.5: the step is 5; the scale-out adds 2 more
    a = guard.evaluate(policy(guard_step=0.5), growing(2), [rnd([40, 40])], {}, NOW)
    d = a.decision
    assert (d.kind, d.count, d.flavor, d.top_up_of, d.trigger) == (
        dec.SCALE_OUT, 3, 'm2', 'a1', 'guard')
    assert 'top up the scale-out in flight by 3 of m2' in d.reason
    assert 'it adds 2, the step is 5' in d.reason


def test_no_top_up_when_the_scale_out_already_adds_the_step():
    a = guard.evaluate(policy(guard_step=0.5), growing(5), [rnd([40, 40])], {}, NOW)
    assert (a.decision.kind, a.decision.blocked_by) == (dec.NONE, 'in_flight')
    assert 'already adds 5 (the step is 5' in a.decision.reason


def test_no_top_up_while_the_cluster_s_own_p99_is_green():
    # two hot VMs of a large cluster: the clients see no violation
    for alone, blocked in ((True, 'in_flight'), (False, 'cluster_green')):
        a = guard.evaluate(policy(guard_step=0.5, guard_red_vms_alone=alone),
                           growing(0), [rnd([40, 40], cluster=20.0)], {}, NOW)
        assert a.colour == 'red'
        assert (a.decision.kind, a.decision.blocked_by) == (dec.NONE, blocked)
    a = guard.evaluate(policy(guard_step=0.5), growing(0),
                       [rnd([40, 40], cluster=36.0)], {}, NOW)
    assert (a.decision.kind, a.decision.count) == (dec.SCALE_OUT, 5)


def test_only_a_red_round_tops_up():
    a = guard.evaluate(policy(guard_step=0.5), growing(0),
                       [rnd([30, 30]), rnd([30, 30])], {}, NOW)
    assert a.colour == 'yellow'
    assert (a.decision.kind, a.decision.blocked_by) == (dec.NONE, 'in_flight')


def test_guard_top_up_off_leaves_the_scale_out_as_it_is():
    a = guard.evaluate(policy(guard_step=0.5, guard_top_up=False), growing(0),
                       [rnd([40, 40])], {}, NOW)
    assert (a.decision.kind, a.decision.blocked_by) == (dec.NONE, 'in_flight')


def shrinking(*pending):
    return state(action_in_flight=True,
                 shrinking=dec.Shrinking('a1', list(pending)))


def test_one_vm_in_the_band_keeps_what_a_scale_in_has_not_begun_to_remove():
    # one VM in the band is within alpha: no scale-out, yet no scale-in
    a = guard.evaluate(policy(), shrinking('n8', 'n9'), [rnd([30])], {}, NOW)
    d = a.decision
    assert (d.kind, d.trim_of, d.keep_nodes, d.count) == (dec.TRIM, 'a1', ['n8', 'n9'], 2)
    assert d.trigger == 'guard' and d.acts
    assert d.reason == ('guard: keep the 2 node(s) the scale-in in flight has not '
                        'begun to remove (n8, n9): in the band: 1 VM(s) in the '
                        'warning band (>= 28 ms)')
    red = guard.evaluate(policy(), shrinking('n9'), [rnd([40, 50])], {}, NOW)
    assert (red.decision.kind, red.decision.keep_nodes) == (dec.TRIM, ['n9'])
    assert 'red: 2 VM(s) above the SLO' in red.decision.reason


def test_a_green_round_lets_a_scale_in_go_on():
    a = guard.evaluate(policy(), shrinking('n9'), [rnd([20, 20])], {}, NOW)
    assert a.decision is None
    # a scale-in with every node begun: the guard is blocked as for any action
    a = guard.evaluate(policy(), state(action_in_flight=True), [rnd([40, 50])], {}, NOW)
    assert (a.decision.kind, a.decision.blocked_by) == (dec.NONE, 'in_flight')
    off = guard.evaluate(policy(guard=False), shrinking('n9'), [rnd([40])], {}, NOW)
    assert off.decision is None


def test_a_top_up_counts_the_servers_in_flight_against_max_size():
    a = guard.evaluate(policy(guard_step=0.5, max_size=13), growing(2),
                       [rnd([40, 40])], {}, NOW)
    assert (a.decision.kind, a.decision.count) == (dec.SCALE_OUT, 1)
    assert 'clamped from 3 by max_size=13' in a.decision.reason
    a = guard.evaluate(policy(guard_step=0.5, max_size=12), growing(2),
                       [rnd([40, 40])], {}, NOW)
    assert (a.decision.kind, a.decision.blocked_by) == (dec.NONE, 'max_size')


def test_the_cool_down_yields_to_a_rising_latency():
    cooling = state(last_action_at=NOW - 60)
    rounds = [rnd([40, 45])]
    level = guard.severity(policy(), rounds[0])
    assert level == pytest.approx(40 / SLO)
    held = guard.evaluate(policy(), cooling, rounds, {}, NOW, last_level=level)
    assert held.decision.blocked_by == 'cooldown'
    rising = guard.evaluate(policy(), cooling, [rnd([50, 60])], {}, NOW, last_level=level)
    assert rising.decision.kind == dec.SCALE_OUT
    assert 'during the cool-down, as the latency rises' in rising.decision.reason


def test_a_round_measured_after_the_last_action_ended_is_not_held_by_the_cool_down():
    # the last action ended 90 s ago; the latency is high but not rising
    ended = NOW - 90
    cooling = state(last_action_at=ended)
    level = guard.severity(policy(), rnd([40, 45]))
    # the older round was taken before the action ended: held
    rounds = [rnd([40, 45], at=NOW), rnd([40, 45], at=ended - 30)]
    held = guard.evaluate(policy(), cooling, rounds, {}, NOW, last_level=level)
    assert held.decision.blocked_by == 'cooldown'
    # a whole interval after it: the cluster as the action left it is red
    rounds = [rnd([40, 45], at=NOW), rnd([40, 45], at=ended + 30)]
    acted = guard.evaluate(policy(), cooling, rounds, {}, NOW, last_level=level)
    assert acted.decision.kind == dec.SCALE_OUT


def test_red_step_is_the_guards_step_in_a_red_round_only():
    e = {'n0': est(85, 100), 'n1': est(85, 100)}
    red = guard.assess(policy(guard_step=0.5), [rnd([40, 40])])
    assert guard.red_step(policy(guard_step=0.5), state(), e, red)[0] == 5
    yellow = guard.assess(policy(), [rnd([30, 30]), rnd([30, 30])])
    assert guard.red_step(policy(), state(), e, yellow) == (0, '')
    assert guard.red_step(policy(guard=False), state(), e, red) == (0, '')


def test_max_size_clamps_the_guard():
    a = guard.evaluate(policy(max_size=10), state(), [rnd([40, 40])], {}, NOW)
    assert a.decision.blocked_by == 'max_size'
    a = guard.evaluate(policy(max_size=11, guard_step=0.5), state(), [rnd([40, 40])], {}, NOW)
    assert a.decision.count == 1 and 'clamped from 5 by max_size=11' in a.decision.reason


def test_the_guard_can_be_turned_off():
    a = guard.evaluate(policy(guard=False), state(), [rnd([40, 40])], {}, NOW)
    assert a.colour == 'red' and a.decision is None


def test_the_measured_latency_disposes_of_an_optimistic_model():
    p = policy()
    current = {'a': {'reads_per_s': 80, 'writes_per_s': 20},
               'b': {'reads_per_s': 80, 'writes_per_s': 20},
               'c': {'reads_per_s': 80, 'writes_per_s': 20}}
    model = {n: SimpleNamespace(load=100.0, capacity=300.0, bound='lower', seen=300.0,
                                source='flavor') for n in current}
    out = planning.disposed(p, model, current, {'a': 30.0, 'b': 50.0, 'c': 10.0})
    assert (out['a'].capacity, out['a'].bound, out['a'].source) == (100.0, 'exact', 'latency')
    assert (out['b'].capacity, out['b'].bound) == (100.0, 'upper')   # above the SLO
    assert out['c'] is model['c']                       # green: the model stands
    assert model['a'].capacity == 300.0                 # the inputs are not changed


def test_the_measured_latency_disposes_of_a_pessimistic_model():
    # a model that has just learnt an overload puts the boundary at the
    # origin; a VM that meets the SLO serves at least what it serves now
    p = policy()
    current = {'a': {'reads_per_s': 80, 'writes_per_s': 20},
               'b': {'reads_per_s': 80, 'writes_per_s': 20}}
    model = {n: SimpleNamespace(load=100.0, capacity=0.0, bound='exact',
                                seen=300.0, source='flavor') for n in current}
    out = planning.disposed(p, model, current, {'a': 10.0, 'b': 30.0})
    assert (out['a'].capacity, out['a'].bound, out['a'].source) == (
        100.0, 'lower', 'latency')
    assert out['b'] is model['b']           # in the band: at most what it serves
    assert model['a'].capacity == 0.0
    # a lower bound: the VM asks for nothing, so that a degenerate model
    # cannot grow the cluster by the headroom's share period after period
    state = dec.ClusterState([dec.NodeInfo('a', 'm1')])
    one = ScalingPolicy(min_size=1, max_size=20, replication_factor=1,
                        headroom=0.2, warmup_s=0)
    d = dec.decide(one, state, {'a': out['a']}, NOW)
    assert d.kind == dec.NONE and d.vms[0].status == dec.UNCERTAIN


def test_alpha_fraction_grows_the_guard_alpha_with_the_cluster():
    # 40 VMs, 2 of them red: hot and red with alpha=1; within alpha=2.4 with
    # alpha_fraction=0.06 (so no scale-out), but it still blocks scale-in
    p99 = {'n%d' % i: 10.0 for i in range(40)}
    p99.update({'n0': 40.0, 'n1': 40.0})
    rounds = [guard.Round(NOW, p99)]
    a = guard.evaluate(policy(max_size=100, alpha_fraction=0.0), state(40), rounds, {}, NOW)
    assert a.colour == 'red' and a.decision.kind == dec.SCALE_OUT
    a = guard.evaluate(policy(max_size=100, alpha_fraction=0.06), state(40), rounds, {}, NOW)
    assert a.colour == 'green' and a.decision is None and a.blocks_scale_in
    p99['n2'] = 40.0
    a = guard.evaluate(policy(max_size=100, alpha_fraction=0.06), state(40),
                       [guard.Round(NOW, p99)], {}, NOW)
    assert a.colour == 'red' and a.decision.kind == dec.SCALE_OUT
