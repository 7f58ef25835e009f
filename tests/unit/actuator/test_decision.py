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
"""Decision logic against hand-computed cases (OnlineElastMan rules + bounds)."""
import json
import math
from types import SimpleNamespace

import pytest

from elastman.actuator import decision as dec
from elastman.actuator.policy import InvalidPolicy
from elastman.actuator.policy import PAPER_RULE
from elastman.actuator.policy import ScalingPolicy
from elastman.actuator import workload
from elastman.capacity.capacity import CapacityEstimate
from elastman.capacity.params import ModelParams
from elastman.capacity.registry import ModelRegistry

NOW = 100000.0


def est(load, cap, bound='exact'):
    return SimpleNamespace(load=load, capacity=cap, bound=bound)


def cluster(specs, flavor='m1.small', **kw):
    """specs: list of (load, cap[, bound]) -> (ClusterState, estimates)."""
    nodes, ests = [], {}
    for i, s in enumerate(specs, 1):
        nid = 'n%d' % i
        nodes.append(dec.NodeInfo(nid, flavor))
        ests[nid] = est(*s)
    return dec.ClusterState(nodes, **kw), ests


def policy(**kw):
    """The paper's rule, unless a test sets an option."""
    base = dict(PAPER_RULE, min_size=3, max_size=10, replication_factor=3,
                warmup_s=0, cooldown_s=300)
    base.update(kw)
    return ScalingPolicy(**base)


def test_scale_out_when_more_than_alpha_violate():
    # terms .2 .3 .1 -.5 -> sum .1, 3 violators > alpha=1 -> ceil(.1) = 1
    c, e = cluster([(120, 100), (130, 100), (110, 100), (50, 100)])
    d = dec.decide(policy(), c, e, NOW)
    f = d.flavors['m1.small']
    assert (d.kind, d.flavor, d.count) == (dec.SCALE_OUT, 'm1.small', 1)
    assert f.violators == 3 and f.excess_sum == pytest.approx(0.1) and f.out_raw == 1
    assert d.reason.startswith('scale out by 1 of m1.small: 3 VMs of m1.small over capacity')
    assert '(alpha=1)' in d.reason


def test_alpha_tolerates_violators_and_blocks_scale_in():
    c, e = cluster([(120, 100), (130, 100), (110, 100), (50, 100)])
    d = dec.decide(policy(alpha=3), c, e, NOW)
    assert d.kind == dec.NONE and d.blocked_by == 'alpha'
    assert d.flavors['m1.small'].out_raw == 0
    assert 'within alpha=3' in d.reason


def test_ceil_of_an_exact_integer_sum():
    # .8 + .7 + .6 + 0 - .1 = 2.0 (float: 2.0000000000000004) -> 2, not 3
    c, e = cluster([(180, 100), (170, 100), (160, 100), (100, 100), (90, 100)])
    d = dec.decide(policy(), c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_OUT, 2)


def test_imbalance_violators_but_no_deficit():
    # 2 hot VMs (.5, .5) and 3 cold ones (-.6 x3): sum -.8 -> neither out nor in
    c, e = cluster([(150, 100), (150, 100), (40, 100), (40, 100), (40, 100)])
    d = dec.decide(policy(), c, e, NOW)
    assert d.kind == dec.NONE and d.blocked_by == 'imbalance'
    assert d.flavors['m1.small'].in_raw == 0  # floor(.8 - .5) = 0
    assert 'imbalance' in d.reason


def test_max_size_clamps_and_blocks():
    specs = [(180, 100), (170, 100), (160, 100), (100, 100), (90, 100)]
    c, e = cluster(specs)
    d = dec.decide(policy(max_size=6), c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_OUT, 1)
    assert 'clamped from 2 by max_size=6' in d.reason
    assert d.flavors['m1.small'].out_bounded == 1
    d = dec.decide(policy(max_size=5), c, e, NOW)
    assert d.kind == dec.NONE and d.blocked_by == 'max_size'
    assert 'clamped by max_size=5' in d.reason


def test_scale_in_removes_least_capacity_first():
    caps = [100, 90, 80, 110, 120, 100]
    c, e = cluster([(30, cap) for cap in caps])
    # sum = -(.7 + .6667 + .625 + .7273 + .75 + .7) = -4.169 -> floor(4.169 - .5) = 3
    d = dec.decide(policy(), c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_IN, 3)
    assert d.flavors['m1.small'].in_raw == 3
    assert d.remove_nodes == ['n3', 'n2', 'n1']   # 80, 90, then 100 (n1 before n6)


def test_scale_in_never_removes_the_last_seed():
    caps = [100, 90, 80, 110, 120, 100]
    c, e = cluster([(30, cap) for cap in caps])
    c.nodes[2].seed = True          # n3 (least capacity) is the only seed
    d = dec.decide(policy(), c, e, NOW)
    assert d.remove_nodes == ['n2', 'n1', 'n6']
    c.nodes[1].seed = True          # n2 and n3 seeds: non-seeds go first
    d = dec.decide(policy(), c, e, NOW)
    assert d.remove_nodes == ['n1', 'n6', 'n4']


def test_remove_by_interference():
    c, e = cluster([(30, 100)] * 6)
    for n, i in zip(c.nodes, [0.1, 0.9, 0.0, 0.5, 0.0, 0.0]):
        n.interference = i
    d = dec.decide(policy(remove_by='interference'), c, e, NOW)
    # sum -4.2 -> floor(3.7) = 3
    assert d.remove_nodes == ['n2', 'n4', 'n1']


def test_remove_by_load_takes_the_hottest_for_their_capacity():
    # load / capacity: .30 .40 .20 .25 .375 .30; a VM without an estimate
    # is not known to be hot and goes last
    specs = [(30, 100), (40, 100), (30, 150), (20, 80), (30, 80), (30, 100)]
    c, e = cluster(specs)
    d = dec.decide(policy(remove_by='load'), c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_IN, 3)
    assert d.remove_nodes == ['n2', 'n5', 'n1']
    assert d.reason.endswith('(by load)')
    by_node = {t.node_id: t for t in d.vms}
    del by_node['n2']
    assert dec.choose_nodes_to_remove(policy(remove_by='load'), c.nodes, by_node,
                                      'm1.small', 6)[-1] == 'n2'


def test_min_size_clamps_scale_in():
    # 4 VMs at .1 load: sum -3.6 -> floor(3.1) = 3, room 4 - 3 = 1
    c, e = cluster([(10, 100)] * 4)
    d = dec.decide(policy(), c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_IN, 1)
    assert 'clamped from 3 by min_size=3' in d.reason
    c, e = cluster([(10, 100)] * 3)
    d = dec.decide(policy(), c, e, NOW)
    assert d.kind == dec.NONE and d.blocked_by == 'min_size'
    assert d.reason.startswith('no action: scale in by 2 of m1.small clamped by min_size=3')


def test_replication_factor_above_min_size_is_the_floor():
    c, e = cluster([(10, 100)] * 5)
    d = dec.decide(policy(min_size=2, replication_factor=5), c, e, NOW)
    assert d.kind == dec.NONE and d.blocked_by == 'min_size' and d.floor == 5


def test_beta_keeps_spare_capacity():
    # terms -.35 x4 = -1.4: beta .5 -> floor(.9) = 0; beta 0 -> 1
    c, e = cluster([(65, 100)] * 4)
    d = dec.decide(policy(), c, e, NOW)
    assert d.kind == dec.NONE and 'within beta=0.5' in d.reason
    d = dec.decide(policy(beta=0.0), c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_IN, 1)


def test_in_flight_cooldown_warmup_gates_keep_the_numbers():
    specs = [(120, 100), (130, 100), (110, 100), (50, 100)]
    c, e = cluster(specs, action_in_flight=True)
    d = dec.decide(policy(), c, e, NOW)
    assert d.kind == dec.NONE and d.reason == 'no action: an action is in flight'
    c, e = cluster(specs, last_action_at=NOW - 100)
    d = dec.decide(policy(cooldown_s=300), c, e, NOW)
    assert d.blocked_by == 'cooldown' and d.reason == 'no action: cooling down (200 s left)'
    assert d.flavors['m1.small'].out_raw == 1      # still recorded
    c, e = cluster(specs, last_action_at=NOW - 300)
    assert dec.decide(policy(cooldown_s=300), c, e, NOW).kind == dec.SCALE_OUT
    c, e = cluster(specs, started_at=NOW - 600)
    d = dec.decide(policy(warmup_s=2400), c, e, NOW)
    assert d.blocked_by == 'warmup' and d.reason == 'no action: warming up (1800 s left)'
    # warmup_s=0 means no warm-up, even for a cluster stamped after ``now``
    # (a record made on another clock, or a decision replayed for a past time).
    c, e = cluster(specs, started_at=NOW + 30)
    assert dec.decide(policy(warmup_s=0), c, e, NOW).kind == dec.SCALE_OUT


def test_a_vm_without_estimate_does_not_block_a_scale_out():
    # n3 has no fresh sample (a dead node): the two violators still count
    c, e = cluster([(120, 100), (130, 100), (110, math.nan, 'unknown')])
    d = dec.decide(policy(), c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_OUT, 1)
    del e['n3']                                   # no estimate at all
    assert (dec.decide(policy(), c, e, NOW).kind) == dec.SCALE_OUT


def test_a_vm_without_estimate_blocks_a_scale_in():
    c, e = cluster([(10, 100), (10, 100), (10, 100), (10, 100)])
    assert dec.decide(policy(), c, e, NOW).kind == dec.SCALE_IN
    del e['n4']
    d = dec.decide(policy(), c, e, NOW)
    assert d.blocked_by == 'model'
    assert d.reason == ('no action: 1 of 4 VMs have no capacity estimate; scale '
                        'in needs every VM known')


def test_no_estimate_at_all_means_no_decision():
    c, _ = cluster([(10, 100), (10, 100), (10, 100)])
    d = dec.decide(policy(), c, {}, NOW)
    assert d.blocked_by == 'model' and 'none of the 3 VMs' in d.reason


def test_latency_in_the_warning_band_blocks_a_scale_in():
    c, e = cluster([(10, 100), (10, 100), (10, 100), (10, 100)],
                   in_warning_band=['n2'])
    d = dec.decide(policy(), c, e, NOW)
    assert (d.kind, d.blocked_by) == (dec.NONE, 'latency')
    assert 'warning band (n2)' in d.reason


def test_lower_bound_over_capacity_is_uncertain():
    # exact .5, .5, lower (200 > 100: uncertain -> 0), exact -.5: 2 violators, sum .5 -> 1
    # (counted as exact it would be 3 violators, sum 1.5 -> 2)
    c, e = cluster([(150, 100), (150, 100), (200, 100, 'lower'), (50, 100)])
    d = dec.decide(policy(), c, e, NOW)
    f = d.flavors['m1.small']
    assert (d.kind, d.count) == (dec.SCALE_OUT, 1)
    assert (f.violators, f.uncertain, f.lower_bounds) == (2, 1, 1)
    assert any('lower bound' in n for n in d.notes)
    # with alpha=2 the two sure violators are tolerated and the uncertain one blocks scale-in
    d = dec.decide(policy(alpha=2), c, e, NOW)
    assert d.kind == dec.NONE and 'possibly over capacity' in d.reason


def test_lower_bound_slack_allows_a_conservative_scale_in():
    # true capacity >= 100, so slack -.8 x4 = -3.2 is an under-estimate: floor(2.7) = 2 -> 1 (min)
    c, e = cluster([(20, 100, 'lower')] * 4)
    d = dec.decide(policy(), c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_IN, 1)


def test_upper_bound():
    # upper bound, w > c: surely over; term .5 is a lower bound of the need
    c, e = cluster([(150, 100, 'upper'), (150, 100, 'upper'), (100, 100)])
    d = dec.decide(policy(), c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_OUT, 1)
    # upper bound, w < c: unknown side -> scale-in blocked even with lots of slack
    c, e = cluster([(10, 100)] * 5 + [(10, 100, 'upper')])
    d = dec.decide(policy(), c, e, NOW)
    assert d.kind == dec.NONE and d.blocked_by == 'bounds'


def test_zero_capacity_is_capped():
    c, e = cluster([(10, 0.0), (10, 0.0), (10, 100)])
    # terms capped at max_vm_excess=4: 4 + 4 - .9 = 7.1 -> 8
    d = dec.decide(policy(max_size=20), c, e, NOW)
    assert d.kind == dec.SCALE_OUT and d.count == 8
    assert d.flavors['m1.small'].capped == 2
    # a far-off but positive capacity is capped too: (1000-10)/10 = 99 -> 4
    c, e = cluster([(1000, 10), (1000, 10), (10, 100)])
    d = dec.decide(policy(max_size=20, max_vm_excess=2), c, e, NOW)
    assert d.count == 4                                 # ceil(2 + 2 - .9)


def _two_flavours(small_load, costs):
    nodes = [dec.NodeInfo('s%d' % i, 'small') for i in range(3)] + \
            [dec.NodeInfo('l%d' % i, 'large') for i in range(3)]
    ests = {'s%d' % i: est(small_load, 100) for i in range(3)}
    ests.update({'l%d' % i: est(100, 400) for i in range(3)})
    return (policy(max_size=20, flavor_costs=costs), dec.ClusterState(nodes), ests)


def test_cheapest_flavour_that_covers_the_deficit():
    # small: 3 x .5 = 1.5 -> deficit 150 req/s: small x2 (cost 2) vs large x1 (cost 3)
    p, c, e = _two_flavours(150, {'small': 1, 'large': 3})
    d = dec.decide(p, c, e, NOW)
    assert (d.flavor, d.count, d.deficit) == ('small', 2, pytest.approx(150))
    # small: 3 x 1.5 = 4.5 -> deficit 450: small x5 (5) vs large x2 (2 x 3 = 6)
    p, c, e = _two_flavours(250, {'small': 1, 'large': 3})
    assert (dec.decide(p, c, e, NOW).flavor, dec.decide(p, c, e, NOW).count) == ('small', 5)
    # ... but with large at 2: large x2 = 4 < 5
    p, c, e = _two_flavours(250, {'small': 1, 'large': 2})
    d = dec.decide(p, c, e, NOW)
    assert (d.flavor, d.count) == ('large', 2)
    assert 'cheapest of' in d.reason


def test_scale_in_picks_the_biggest_saving():
    nodes = [dec.NodeInfo('s%d' % i, 'small') for i in range(4)] + \
            [dec.NodeInfo('l%d' % i, 'large') for i in range(4)]
    ests = {n.node_id: est(10, 100) for n in nodes}  # -.9 x4 = -3.6 -> 3 each
    p = policy(max_size=20, flavor_costs={'small': 1, 'large': 3})
    d = dec.decide(p, dec.ClusterState(nodes), ests, NOW)
    assert (d.kind, d.flavor, d.count) == (dec.SCALE_IN, 'large', 3)


def test_below_minimum_is_repaired_first():
    c, e = cluster([(10, math.nan, 'unknown')] * 2, started_at=NOW)
    d = dec.decide(policy(warmup_s=2400, default_flavor='m1.small'), c, e, NOW)
    assert (d.kind, d.flavor, d.count) == (dec.SCALE_OUT, 'm1.small', 1)
    assert 'below the minimum 3' in d.reason


def test_dry_run_and_record():
    c, e = cluster([(120, 100), (130, 100), (110, 100), (50, math.nan, 'unknown')])
    d = dec.decide(policy(dry_run=True), c, e, NOW, inputs={'forecaster': 'arima_110'})
    assert not d.acts
    doc = json.loads(json.dumps(d.to_dict(), allow_nan=False))
    assert doc['inputs'] == {'forecaster': 'arima_110'}
    assert doc['vms'][3]['capacity'] is None and doc['flavors']['m1.small']['unknown'] == 1
    c, e = cluster([(120, 100), (130, 100), (110, 100)])
    d = dec.decide(policy(), c, e, NOW)
    assert d.acts


def test_works_with_real_capacity_estimates():
    e = {'n%d' % i: CapacityEstimate(100.0, load, 100.0 / load, [], 0.1, 'exact', 'svm')
         for i, load in enumerate([150, 150, 150], 1)}
    c = dec.ClusterState([dec.NodeInfo(n, 'm1.small') for n in e])
    d = dec.decide(policy(), c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_OUT, 2)   # ceil(1.5)


def test_registry_without_cells_is_not_usable():
    reg = ModelRegistry('c1', ModelParams())
    for n in ('a', 'b', 'c'):
        reg.register_node(n, 'm1.small')
    current = {n: {'reads_per_s': 100.0, 'writes_per_s': 50.0, 'read_bytes_mean': 1024,
                   'write_bytes_mean': 1024} for n in ('a', 'b', 'c')}
    per_vm = workload.split_workload({'reads_per_s': 600, 'writes_per_s': 150}, current)
    ests = workload.estimate_capacities(reg, per_vm)
    c = dec.ClusterState([dec.NodeInfo(n, 'm1.small') for n in ('a', 'b', 'c')])
    assert dec.decide(policy(), c, ests, NOW).blocked_by == 'model'
    assert per_vm['a']['reads_per_s'] == pytest.approx(200.0)
    assert per_vm['a']['writes_per_s'] == pytest.approx(50.0)


def test_split_workload_by_current_share():
    cur = {'a': {'reads_per_s': 100, 'writes_per_s': 50, 'read_bytes_mean': 2048},
           'b': {'reads_per_s': 300, 'writes_per_s': 50, 'read_bytes_mean': 512}}
    out = workload.split_workload({'reads_per_s': 800, 'writes_per_s': 200}, cur)
    assert out['a'] == {'reads_per_s': 200, 'writes_per_s': 100, 'read_bytes_mean': 2048}
    assert out['b']['reads_per_s'] == 600 and out['b']['writes_per_s'] == 100
    idle = {'a': {'reads_per_s': 0, 'writes_per_s': 0}, 'b': {'reads_per_s': 0, 'writes_per_s': 0}}
    out = workload.split_workload({'reads_per_s': 10, 'writes_per_s': 4}, idle)
    assert out['a'] == {'reads_per_s': 5, 'writes_per_s': 2}


def test_policy_validation():
    with pytest.raises(InvalidPolicy):
        ScalingPolicy(min_size=3, max_size=2)
    with pytest.raises(InvalidPolicy):
        ScalingPolicy(replication_factor=5, max_size=4)
    with pytest.raises(InvalidPolicy):
        ScalingPolicy(alpha=-1)
    with pytest.raises(InvalidPolicy):
        ScalingPolicy(flavor_costs={'x': 0})
    with pytest.raises(InvalidPolicy):
        ScalingPolicy.from_dict({'alpha': 1, 'gamma': 2})
    p = ScalingPolicy.from_dict({'alpha': 0, 'flavor_costs': {'a': 2}})
    assert ScalingPolicy.from_dict(p.to_dict()) == p and p.floor == 3


# -- options beyond the paper (defaults keep OnlineElastMan's rule) ---------

def test_defaults_and_the_paper_rule():
    p = ScalingPolicy()
    assert (p.headroom, p.scale_out_count, p.violation_at, p.beyond_lower,
            p.extrapolation, p.max_scale_in_fraction, p.explore, p.guard) == (
        0.325, 'violators', 'capacity', 'uncertain', 'lower', 0.1, 0.0, True)
    # the violations raise the headroom by default, with a 3-hour memory
    assert (p.headroom_per_violation, p.headroom_memory_s) == (0.01, 10800.0)
    p = ScalingPolicy(**PAPER_RULE)
    assert (p.headroom, p.scale_out_count, p.violation_at, p.extrapolation,
            p.max_scale_in_fraction, p.guard, p.headroom_per_violation) == (
        0.0, 'sum', 'target', 'trust', 1.0, False, 0.0)


def test_headroom_compares_the_load_with_a_target():
    specs = [(95, 100), (95, 100), (95, 100), (50, 100)]
    # h=0: terms -.05 x3 - .5 = -.65, no violator; floor(.65 - .5) = 0 -> nothing
    c, e = cluster(specs)
    d = dec.decide(policy(), c, e, NOW)
    assert d.kind == dec.NONE and d.flavors['m1.small'].violators == 0
    # h=.2: target 80; terms 15/80 = .1875 x3, 50/80 - 1 = -.375: sum .1875 -> 1
    d = dec.decide(policy(headroom=0.2), c, e, NOW)
    f = d.flavors['m1.small']
    assert (d.kind, d.count) == (dec.SCALE_OUT, 1)
    assert f.violators == 3 and f.excess_sum == pytest.approx(0.1875)
    assert f.mean_capacity == pytest.approx(80)
    assert (d.vms[0].capacity, d.vms[0].target) == (100, pytest.approx(80))
    assert 'headroom=0.2' in d.reason


def test_headroom_keeps_more_on_scale_in():
    c, e = cluster([(40, 100)] * 6)
    # h=0: -.6 x6 = -3.6 -> floor(3.1) = 3; h=.2: -.5 x6 = -3 -> floor(2.5) = 2
    assert dec.decide(policy(), c, e, NOW).count == 3
    d = dec.decide(policy(headroom=0.2), c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_IN, 2)


def test_scale_in_headroom_widens_the_band_a_scale_in_needs():
    c, e = cluster([(40, 100)] * 6)
    # scale-in target 50: 40/50 - 1 = -.2 x6 = -1.2 -> floor(.7) = 0
    d = dec.decide(policy(headroom=0.2, scale_in_headroom=0.5, scale_in_headroom_s=0),
                   c, e, NOW)
    f = d.flavors['m1.small']
    assert d.kind == dec.NONE and 'spare 1.20 VMs within beta' in d.reason
    assert f.in_sum == pytest.approx(-1.2) and f.excess_sum == pytest.approx(-3.0)
    # scale-in target 60: 40/60 - 1 = -1/3 x6 = -2 -> floor(1.5) = 1
    d = dec.decide(policy(headroom=0.2, scale_in_headroom=0.4, scale_in_headroom_s=0),
                   c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_IN, 1)
    assert 'sum of (w-c)/c -2.00' in d.reason


def test_scale_in_headroom_changes_no_scale_out():
    specs = [(95, 100), (95, 100), (95, 100), (50, 100)]
    d = dec.decide(policy(headroom=0.2, scale_in_headroom=0.6), *cluster(specs), NOW)
    f = d.flavors['m1.small']
    assert (d.kind, d.count) == (dec.SCALE_OUT, 1)
    assert f.excess_sum == pytest.approx(0.1875)


def test_scale_in_headroom_below_the_headroom_adds_nothing():
    c, e = cluster([(40, 100)] * 6)
    d = dec.decide(policy(headroom=0.2, scale_in_headroom=0.1), c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_IN, 2)
    assert d.flavors['m1.small'].in_sum == pytest.approx(-3.0)
    assert all(t.in_term is None for t in d.vms)


def test_scale_in_headroom_holds_for_its_time_after_a_scale_out():
    pol = policy(headroom=0.2, scale_in_headroom=0.5, scale_in_headroom_s=3600)
    # a scale-out decided 10 minutes ago: the band holds, no scale-in
    c, e = cluster([(40, 100)] * 6, last_grown_at=NOW - 600)
    d = dec.decide(pol, c, e, NOW)
    assert d.kind == dec.NONE and d.inputs['scale_in_headroom'] == 0.5
    # two hours ago: the headroom alone, the scale-in of two VMs
    c, e = cluster([(40, 100)] * 6, last_grown_at=NOW - 7200)
    d = dec.decide(pol, c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_IN, 2)
    assert d.inputs['scale_in_headroom'] == 0.0
    # no scale-out in the journal: the headroom alone too
    c, e = cluster([(40, 100)] * 6)
    assert dec.decide(pol, c, e, NOW).kind == dec.SCALE_IN


def test_scale_in_headroom_without_a_time_holds_always():
    c, e = cluster([(40, 100)] * 6, last_grown_at=NOW - 30 * 86400)
    pol = policy(headroom=0.2, scale_in_headroom=0.5, scale_in_headroom_s=0)
    d = dec.decide(pol, c, e, NOW)
    assert d.kind == dec.NONE and d.inputs['scale_in_headroom'] == 0.5


def test_scale_out_count_from_the_violators():
    # the imbalance case: .5 + .5 - .6 x3 = -.8 -> no action by the paper's sum;
    # violators' sum 1.0 -> 1
    c, e = cluster([(150, 100), (150, 100), (40, 100), (40, 100), (40, 100)])
    assert dec.decide(policy(), c, e, NOW).blocked_by == 'imbalance'
    d = dec.decide(policy(scale_out_count='violators'), c, e, NOW)
    f = d.flavors['m1.small']
    assert (d.kind, d.count) == (dec.SCALE_OUT, 1)
    assert f.violator_excess == pytest.approx(1.0) and f.excess_sum == pytest.approx(-0.8)
    assert "violators' sum 1.00" in d.reason
    assert d.deficit == pytest.approx(100.0)      # 1.0 x mean capacity 100
    # .8 + .7 + 0 - .5: net 1.0 -> 1, violators 1.5 -> 2
    c, e = cluster([(180, 100), (170, 100), (100, 100), (50, 100)])
    assert dec.decide(policy(), c, e, NOW).count == 1
    assert dec.decide(policy(scale_out_count='violators'), c, e, NOW).count == 2
    # alpha still applies: one violator (term .5) is tolerated
    c, e = cluster([(150, 100), (40, 100), (40, 100)])
    d = dec.decide(policy(scale_out_count='violators'), c, e, NOW)
    assert d.kind == dec.NONE and d.blocked_by == 'alpha'


def test_beyond_lower_over_counts_a_load_past_the_lower_bound():
    specs = [(150, 100), (150, 100), (200, 100, 'lower'), (50, 100)]
    c, e = cluster(specs)
    # default: the lower-bound VM is uncertain -> .5 + .5 - .5 = .5 -> 1
    assert dec.decide(policy(), c, e, NOW).count == 1
    # over: .5 + .5 + 1 - .5 = 1.5 -> 2, three violators
    d = dec.decide(policy(beyond_lower='over'), c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_OUT, 2)
    assert (d.flavors['m1.small'].violators, d.flavors['m1.small'].uncertain) == (3, 0)
    # explore .5: the lower bound's target is 150 (no headroom): 200/150 - 1 = 1/3;
    # headroom .2 on the exact ones: 150/80 - 1 = .875 x2, 50/80 - 1 = -.375
    d = dec.decide(policy(beyond_lower='over', explore=0.5, headroom=0.2), c, e, NOW)
    assert d.vms[2].target == pytest.approx(150)
    assert d.flavors['m1.small'].excess_sum == pytest.approx(1.75 + 1 / 3 - 0.375)
    assert d.count == 2
    # within the explored range a lower bound is fine: 140 <= 150
    c, e = cluster([(140, 100, 'lower')] * 4)
    d = dec.decide(policy(beyond_lower='over', explore=0.5), c, e, NOW)
    assert d.flavors['m1.small'].violators == 0


def est_seen(load, cap, seen, bound='exact'):
    return SimpleNamespace(load=load, capacity=cap, bound=bound, seen=seen)


def test_extrapolation_lower_caps_the_capacity_at_the_seen_load():
    nodes = [dec.NodeInfo('n%d' % i, 'm1.small') for i in range(1, 5)]
    c = dec.ClusterState(nodes)
    e = {'n1': est_seen(150, 400, 120), 'n2': est_seen(150, 400, 120),
         'n3': est_seen(50, 400, 120), 'n4': est_seen(50, 400, 120)}
    # trusted: -.625 x2 - .875 x2 = -3 -> floor(2.5) = 2, clamped to 1 by the floor 3
    d = dec.decide(policy(), c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_IN, 1)
    # capped: c = 120, lower; 150 > 120 is uncertain -> scale-in blocked
    d = dec.decide(policy(extrapolation='lower'), c, e, NOW)
    assert d.kind == dec.NONE and d.blocked_by == 'bounds'
    assert (d.vms[0].capacity, d.vms[0].bound) == (120, 'lower')
    # and with beyond_lower='over': 150/120 - 1 = .25 x2 (violators) -> 1
    d = dec.decide(policy(extrapolation='lower', beyond_lower='over',
                          scale_out_count='violators'), c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_OUT, 1)
    # a capacity within the seen region, an upper bound, or no ``seen``: as is
    e2 = {k: est_seen(v.load, 400, 500) for k, v in e.items()}
    assert dec.decide(policy(extrapolation='lower'), c, e2, NOW).kind == dec.SCALE_IN
    e3 = {k: est_seen(v.load, 100, 50, 'upper') for k, v in e.items()}
    d = dec.decide(policy(extrapolation='lower'), c, e3, NOW)
    assert d.vms[0].capacity == 100 and d.vms[0].bound == 'upper'
    e4 = {k: est(v.load, 400) for k, v in e.items()}
    assert dec.decide(policy(extrapolation='lower'), c, e4, NOW).kind == dec.SCALE_IN


def test_beyond_lower_extrapolated_asks_for_the_room_the_boundary_needs():
    nodes = [dec.NodeInfo('n%d' % i, 'm1.small') for i in range(1, 5)]
    c = dec.ClusterState(nodes)
    # seen 120, the boundary's extrapolation 160; headroom .25: the lower
    # bound's target is 90, the extrapolated one 120
    e = {'n1': est_seen(200, 160, 120), 'n2': est_seen(200, 160, 120),
         'n3': est_seen(100, 160, 120), 'n4': est_seen(100, 160, 120)}
    rule = dict(extrapolation='lower', violation_at='capacity',
                scale_out_count='violators', headroom=0.25)
    # uncertain: every VM is beyond its lower bound's target, none asks
    d = dec.decide(policy(beyond_lower='uncertain', **rule), c, e, NOW)
    assert (d.kind, d.blocked_by) == (dec.NONE, 'bounds')
    # extrapolated: 200/120 - 1 = 2/3 twice; 100/120 - 1 < 0 is slack the
    # extrapolation does not give: 4/3 -> 2, and still no violator
    d = dec.decide(policy(beyond_lower='extrapolated', **rule), c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_OUT, 2)
    f = d.flavors['m1.small']
    assert f.excess_sum == pytest.approx(4 / 3)
    assert (f.violators, f.uncertain) == (0, 4)
    assert [t.status for t in d.vms] == [dec.UNCERTAIN] * 4
    assert any('extrapolated boundary' in n for n in d.notes)
    # a boundary that puts the loads under its target asks for nothing and
    # the uncertain VMs still block the scale-in
    e2 = {k: est_seen(v.load, 400, 120) for k, v in e.items()}
    d = dec.decide(policy(beyond_lower='extrapolated', **rule), c, e2, NOW)
    assert (d.kind, d.blocked_by) == (dec.NONE, 'bounds')
    # a lower bound with no extrapolation beyond it (no ``seen``) asks for
    # nothing either
    e3 = {k: est(v.load, 120, 'lower') for k, v in e.items()}
    d = dec.decide(policy(beyond_lower='extrapolated', **rule), c, e3, NOW)
    assert (d.kind, d.blocked_by) == (dec.NONE, 'bounds')


def test_max_scale_in_fraction():
    c, e = cluster([(10, 100)] * 10)
    # -.9 x10 = -9 -> floor(8.5) = 8, clamped to 7 by the floor 3
    d = dec.decide(policy(max_size=20), c, e, NOW)
    assert d.count == 7 and 'by min_size' in d.reason
    d = dec.decide(policy(max_size=20, max_scale_in_fraction=0.2), c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_IN, 2)
    assert 'clamped from 8 by max_scale_in_fraction=0.2' in d.reason
    # at least one VM per step
    d = dec.decide(policy(max_size=20, max_scale_in_fraction=0.05), c, e, NOW)
    assert d.count == 1


@pytest.mark.parametrize('bad', [
    {'headroom': 1.0}, {'headroom': -0.1}, {'scale_out_count': 'max'},
    {'beyond_lower': 'exact'}, {'extrapolation': 'no'},
    {'max_scale_in_fraction': 0}, {'max_scale_in_fraction': 1.5}, {'explore': -1},
    {'headroom': True}])
def test_new_policy_fields_are_validated(bad):
    with pytest.raises(InvalidPolicy):
        ScalingPolicy(**bad)


def test_new_policy_fields_round_trip():
    p = ScalingPolicy.from_dict({'headroom': 0.2, 'scale_out_count': 'violators',
                                 'beyond_lower': 'over', 'explore': 0.25,
                                 'extrapolation': 'lower', 'max_scale_in_fraction': 0.1})
    assert ScalingPolicy.from_dict(p.to_dict()) == p


def test_zero_lower_bound_is_uncertain_not_a_violation():
    # One-class models that have seen nothing along the ray report a lower
    # bound of 0: that must neither scale out (as the live smoke run did,
    # asking for 12 VMs) nor let the cluster shrink.
    c, e = cluster([(300, 0.0, 'lower'), (300, 0.0, 'lower'),
                    (300, 0.0, 'lower'), (10, 100)])
    d = dec.decide(policy(min_size=1, replication_factor=1), c, e, NOW)
    assert d.kind == dec.NONE, d.reason
    assert [v.status for v in d.vms[:3]] == [dec.UNCERTAIN] * 3
    assert all(v.term == 0.0 for v in d.vms[:3])
    d = dec.decide(policy(min_size=1, replication_factor=1,
                          beyond_lower='over'), c, e, NOW)
    assert d.kind == dec.SCALE_OUT


def test_nodes_being_healed_count_towards_the_floor():
    c, e = cluster([(10, 100), (10, 100)])
    assert dec.decide(policy(), c, e, NOW).reason.startswith('scale out by 1')
    c.healing = 1
    d = dec.decide(policy(), c, e, NOW)
    assert d.kind == dec.NONE


def test_alpha_fraction_grows_alpha_with_the_flavour():
    # 40 VMs, 2 of them over capacity (imbalance), the rest with room: alpha=1
    # alone scales out by the violators' excess; alpha_fraction=0.06 tolerates
    # up to 2.4 of 40, but not 3
    specs = [(130, 100), (125, 100)] + [(80, 100)] * 38
    c, e = cluster(specs)
    opts = dict(scale_out_count='violators', max_size=100)
    d = dec.decide(policy(alpha_fraction=0.0, **opts), c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_OUT, 1)
    d = dec.decide(policy(alpha_fraction=0.06, **opts), c, e, NOW)
    assert (d.kind, d.blocked_by) == (dec.NONE, 'alpha')
    assert 'within alpha=2.4' in d.reason
    c, e = cluster([(130, 100)] * 3 + [(80, 100)] * 37)
    d = dec.decide(policy(alpha_fraction=0.06, **opts), c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_OUT, 1) and '(alpha=2.4)' in d.reason
    # a small cluster keeps alpha itself
    assert policy(alpha_fraction=0.06).alpha_for(5) == 1.0
    with pytest.raises(InvalidPolicy, match='alpha_fraction'):
        policy(alpha_fraction=1.5)


# -- violation_at: a violator is over its capacity, not over its target ------

def test_hot_vms_under_capacity_do_not_add_a_vm():
    # h=0.2, c=100: targets 80. Two hot VMs at 90 (term .125 each) and four
    # at 50 (-.375 each): the net sum -1.25 asks for nothing
    specs = [(90, 100), (90, 100), (50, 100), (50, 100), (50, 100), (50, 100)]
    c, e = cluster(specs)
    d = dec.decide(policy(headroom=0.2, scale_out_count='violators'), c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_OUT, 1)      # over target: +1
    d = dec.decide(policy(headroom=0.2, scale_out_count='violators',
                          violation_at='capacity'), c, e, NOW)
    f = d.flavors['m1.small']
    assert f.violators == 0 and f.out_raw == 0
    # and they no longer block a scale-in: floor(1.25 - .5) = 0 here
    assert d.kind == dec.NONE and d.blocked_by is None
    assert 'every VM under capacity' in d.reason


def test_a_positive_net_sum_over_the_targets_scales_out():
    # every VM at 90 of 100, none over capacity: terms .125 x 4 = .5 -> +1
    c, e = cluster([(90, 100)] * 4)
    d = dec.decide(policy(headroom=0.2, violation_at='capacity'), c, e, NOW)
    f = d.flavors['m1.small']
    assert f.violators == 0 and f.excess_sum == pytest.approx(0.5)
    assert (d.kind, d.count) == (dec.SCALE_OUT, 1)


def test_violators_over_capacity_count_their_excess_over_capacity():
    # two VMs at 130 and 120 of 100 (over capacity by .3 and .2) and two
    # cold ones: violators' sum at capacity .5 -> +1; net sum over the
    # targets (80): .625 + .5 - .5 - .5 = .125 -> 1
    c, e = cluster([(130, 100), (120, 100), (40, 100), (40, 100)])
    d = dec.decide(policy(headroom=0.2, scale_out_count='violators',
                          violation_at='capacity'), c, e, NOW)
    f = d.flavors['m1.small']
    assert f.violators == 2 and f.violator_excess == pytest.approx(0.5)
    assert (d.kind, d.count) == (dec.SCALE_OUT, 1)
    assert [t.over_capacity for t in d.vms] == pytest.approx([0.3, 0.2, 0.0, 0.0])


def test_scale_in_keeps_the_hot_vms_under_capacity():
    # ten VMs: one at 90 of 100, nine at 30. h=0.2: net sum .125 - 9 x .625
    # = -5.5 -> floor(5.5 - .5) = 5; alpha=1 lets the hottest go over, the
    # second (30 / 100) must stay under: k <= 10 (1 - .3) = 7 -> 5 stays
    specs = [(90, 100)] + [(30, 100)] * 9
    c, e = cluster(specs)
    p = policy(headroom=0.2, violation_at='capacity', max_size=20,
               max_scale_in_fraction=1.0)
    d = dec.decide(p, c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_IN, 5)
    # with two hot VMs, the second at 90 limits it to floor(10 x .1) = 1
    c, e = cluster([(90, 100), (90, 100)] + [(30, 100)] * 8)
    d = dec.decide(p, c, e, NOW)
    assert (d.kind, d.count) == (dec.SCALE_IN, 1)
    assert 'so that at most alpha=1 VM(s) go over capacity' in d.reason
    # at 95 none may go
    c, e = cluster([(95, 100), (95, 100)] + [(30, 100)] * 8)
    d = dec.decide(p, c, e, NOW)
    assert d.kind == dec.NONE and d.blocked_by == 'imbalance'


def test_a_lower_bound_keeps_its_target_with_violation_at_capacity():
    # seen 100 (a lower bound): 90 is over its target 80, so uncertain
    c, e = cluster([(90, 100, 'lower'), (50, 100), (50, 100)])
    d = dec.decide(policy(headroom=0.2, violation_at='capacity'), c, e, NOW)
    assert d.flavors['m1.small'].uncertain == 1
    assert d.kind == dec.NONE and d.blocked_by == 'bounds'
