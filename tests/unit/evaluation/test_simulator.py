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
"""The simulated cluster: latency aggregation, lifecycle, lottery."""
import math

import numpy as np
import pytest

from elastman.actuator import decision as dec
from elastman.actuator.policy import PAPER_RULE
from elastman.evaluation import simulator as sm
from elastman.evaluation import traces as tr


def test_aggregate_p99_of_equal_nodes_is_their_p99():
    assert sm.aggregate_p99(np.full(10, 20.0), np.ones(10)) == pytest.approx(20.0)


def test_aggregate_p99_is_dominated_by_a_hot_share_above_one_percent():
    p = np.array([10.0] * 95 + [1000.0] * 5)        # 5% of the reads on hot VMs
    assert sm.aggregate_p99(p, np.ones(100)) > 300      # 1000 ln5 / ln100 = 349
    p = np.array([10.0] * 999 + [1000.0])           # 0.1%: hardly visible
    assert sm.aggregate_p99(p, np.ones(1000)) < 15


def _cluster(n=4, minutes=120, join_slots=0, removal_slots=0):
    trace = tr.load('ramp', 4, minutes / 1440.0, seed=3)
    return sm.SimCluster(trace, sm.SimConfig(join_slots=join_slots,
                                             removal_slots=removal_slots),
                         [sm.Flavor('m1.medium')], {'m1.medium': n}, seed=3,
                         noise_key='t')


def test_join_and_decommission_timing():
    c = _cluster()
    c.step()
    c.apply(sm.Action(add=1, flavor='m1.medium'))
    assert c.vms == 5 and c.count(sm.JOINING) == 1 and c.in_flight
    ready = c.ready_at[c.slot_of[4]]
    assert 600 * 0.8 <= ready - c.t <= 600 * 1.2
    while c.t < ready:
        c.step()
    assert c.count(sm.SERVING) == 5
    assert c.in_flight                               # cleanup still running
    c.apply(sm.Action(remove=[4]))
    start = c.t
    while c.t < start + 600:
        assert c.vms == 5                            # billed while it decommissions
        c.step()
    assert c.vms == 4 and 4 not in c.slot_of


def test_a_deferred_cleanup_runs_before_the_next_removal():
    c = _cluster()
    c.step()
    c.apply(sm.Action(add=1, flavor='m1.medium', defer_cleanup=True))
    ready = c.ready_at[c.slot_of[4]]
    while c.t < ready:
        c.step()
    # joined: the action is over, and no old VM pays for a cleanup yet
    assert c.count(sm.SERVING) == 5 and not c.in_flight
    old = [c.slot_of[k] for k in range(4)]
    assert not (c.stream_until[old] > c.t).any()
    assert c.cleanup_pending == {0, 1, 2, 3}
    # a removal: the VMs that stay clean up first, then the VM leaves
    c.apply(sm.Action(remove=[3]))
    start = c.t
    stay = [c.slot_of[k] for k in (0, 1, 2)]
    assert (c.stream_until[stay] == start + c.cfg.cleanup_s).all()
    assert c.stream_until[c.slot_of[3]] <= start and not c.cleanup_pending
    while c.t < start + c.cfg.cleanup_s:
        assert c.state[c.slot_of[3]] == sm.SERVING
        c.step()
    assert c.state[c.slot_of[3]] == sm.LEAVING and c.in_flight
    while c.t < start + c.cfg.cleanup_s + c.cfg.decommission_s:
        c.step()
    assert c.vms == 4 and 3 not in c.slot_of and not c.in_flight


def test_a_leaving_vm_is_sampled_until_it_is_gone():
    """A decommissioning VM serves its share: the monitor's view (the
    cluster's load, for the planning loop's trend) keeps it, the serving
    view does not.
    """
    from elastman.evaluation import policies as pol
    c = _cluster(n=5)
    el = pol.make(['elastman'])[0]
    el.start(c)
    c.step()
    el.observe(c)
    before = el.load_points[-1][1]
    c.apply(sm.Action(remove=[4]))
    c.step()
    el.observe(c)
    assert len(c.serving_slots()) == 4 and len(c.sampled_slots()) == 5
    served = c.minute - 1
    offered = float(c.trace.reads[served] + c.trace.writes[served] * 3)
    # every read and every replica's write is served by a sampled VM
    assert el.load_points[-1][1] == pytest.approx(offered, rel=1e-6)
    assert el.load_points[-1][1] == pytest.approx(before, rel=0.2)


def test_join_slots_join_the_vms_of_a_scale_out_in_a_row():
    """With one join slot each VM is created (and billed) when the one
    before it serves, as the actuator's executor bootstraps them; without a
    limit they join together.
    """
    together = _cluster()
    together.step()
    together.apply(sm.Action(add=3, flavor='m1.medium'))
    one = _cluster(join_slots=1)
    one.step()
    one.apply(sm.Action(add=3, flavor='m1.medium'))
    assert together.vms == 7 and one.vms == 5       # the next two are not created yet
    slots = [one.slot_of[k] for k in (4, 5, 6)]
    assert one.start_at[slots[1]] == one.ready_at[slots[0]]
    assert one.start_at[slots[2]] == one.ready_at[slots[1]]
    # the same joins (the lottery's jitter), one after the other
    lengths = one.ready_at[slots] - one.start_at[slots]
    assert lengths.tolist() == pytest.approx(
        [together.ready_at[together.slot_of[k]] - together.t for k in (4, 5, 6)])
    # a later scale-out queues behind them
    start, ready, _ = one.join_schedule(np.zeros(1))
    assert start[0] == one.ready_at[slots[2]]
    while one.t < one.ready_at[slots[0]]:
        one.step()
    assert one.vms == 6 and one.count(sm.SERVING) == 5


def test_lottery_is_the_same_for_every_policy():
    a, b = _cluster(), _cluster()
    a.apply(sm.Action(add=3, flavor='m1.medium'))
    b.apply(sm.Action(add=3, flavor='m1.medium'))
    assert a.g.tolist() == b.g.tolist() and a.ready_at.tolist() == b.ready_at.tolist()
    lot = sm.Lottery(3, sm.SimConfig(), 86400)
    assert lot.props(2000) == sm.Lottery(3, sm.SimConfig(), 86400).props(2000)


def test_more_vms_lower_latency():
    trace = tr.load('ramp', 4, 0.05, seed=1)
    lat = []
    for n in (3, 6):
        c = sm.SimCluster(trace, sm.SimConfig(), [sm.Flavor('m1.medium')],
                          {'m1.medium': n}, seed=1, noise_key='x')
        lat.append(np.median([c.step()['p99'] for _ in range(len(trace))]))
    assert lat[1] < lat[0]


def test_reads_follow_token_share_or_capacity_as_routing_says():
    """A VM at half speed serves the reads of its token share under
    ``token`` routing, and about half of them under ``capacity``; the writes
    do not move, and the cluster's p99 is lower when its reads go elsewhere.
    """
    trace = tr.load('ramp', 4, 0.01, seed=1)
    seen = {}
    for routing in sm.READ_ROUTING:
        c = sm.SimCluster(trace, sm.SimConfig(read_routing=routing),
                          [sm.Flavor('m1.medium')], {'m1.medium': 4}, seed=1,
                          noise_key='x')
        c.f0[0] *= 0.5
        row = c.step()
        serving = np.flatnonzero(c.state == sm.SERVING)
        reads = c.obs_reads[serving] / c.obs_reads[serving].sum()
        writes = c.obs_writes[serving] / c.obs_writes[serving].sum()
        token = c.g[serving] / c.g[serving].sum()
        seen[routing] = (reads, writes, token, row['p99'])
    reads, writes, token, _ = seen['token']
    assert reads == pytest.approx(token) and writes == pytest.approx(token)
    reads, writes, token, _ = seen['capacity']
    assert writes == pytest.approx(token)
    assert reads[0] / token[0] < 0.6 and (reads[1:] > token[1:]).all()
    assert seen['capacity'][3] < seen['token'][3]
    with pytest.raises(ValueError, match='read_routing'):
        sm.SimConfig(read_routing='nearest')


def test_shipped_traces_are_what_the_generator_makes(tmp_path):
    paths = tr.write_shipped(str(tmp_path))
    assert len(paths) == len(tr.SHIPPED)
    for name, p in zip(tr.SHIPPED, paths):
        # package data, read as an installed package would
        assert tr.shipped_file(name).read_text() == open(p).read()
    assert tr.shipped_file('ramp') is None
    t = tr.load('weekly', 100, 7, seed=1)
    assert len(t) == 7 * 1440 and t.total.max() > 2.5 * t.total.min()


def test_elastman_variants_and_their_options():
    from elastman.evaluation import policies as pol
    el, paper = pol.make(['elastman', 'elastman-paper'])
    assert el.name == 'elastman' and el.options == {} and el.prior
    assert paper.name == 'elastman-paper' and paper.options == PAPER_RULE and paper.predict
    assert not paper.prior
    # the service's default defers a scale-out's cleanup; the paper's rule does not
    c = _cluster(n=5)
    for policy, deferred in ((el, True), (paper, False)):
        policy.start(c)
        act = policy._act(c, dec.Decision(kind=dec.SCALE_OUT, reason='', at=0.0,
                                          size=5, count=1, flavor='m1.medium'))
        assert act.add == 1 and act.defer_cleanup is deferred
    assert 'elastman-paper' not in pol.ALL
    assert [p.name for p in pol.make()] == list(pol.ALL)


@pytest.mark.parametrize('top_up', [True, False])
def test_the_guard_tops_up_a_scale_out_still_joining(top_up):
    """The simulated service sees a scale-out as the actuator sees one still
    creating its servers: a red round adds to it what the guard's step
    lacks (``guard_top_up``), through the guard's own code.
    """
    from elastman.actuator import guard
    from elastman.evaluation import policies as pol
    c = _cluster(n=10)
    el = pol.Elastman(options={'guard_step': 0.5, 'guard_top_up': top_up})
    el.start(c)
    c.step()
    act = el._act(c, dec.Decision(kind=dec.SCALE_OUT, reason='', at=c.t,
                                  size=10, count=1, flavor='m1.medium'))
    c.apply(act)
    growing = el._growing(c)
    assert (growing.adding, growing.flavor) == (1, 'm1.medium')
    c.step()
    slots = c.serving_slots()
    red = 2 * c.cfg.slo_ms
    el.rounds.appendleft(guard.Round(c.t, {str(int(k)): red for k in c.ordinal[slots]},
                                     red))
    act = el.control(c)
    if not top_up:
        assert act is None
        return
    assert act.add >= 4 and 'top up the scale-out in flight' in act.reason
    c.apply(act)
    assert el._growing(c).adding == 1 + act.add
    while c.count(sm.JOINING):
        c.step()
    assert el._growing(c) is None and c.count(sm.SERVING) == 11 + act.add


def test_removal_slots_remove_the_vms_of_a_scale_in_in_a_row():
    c = _cluster(n=6, removal_slots=1)
    c.step()
    c.apply(sm.Action(remove=[5, 4, 3]))
    # the first leaves now, the others serve until their turn
    assert c.count(sm.LEAVING) == 1 and c.pending_removals() == [4, 3]
    assert c.actions[-1].done_at == c.t + 3 * c.cfg.decommission_s
    start = c.t
    while c.t < start + c.cfg.decommission_s:
        c.step()
    assert 5 not in c.slot_of and c.count(sm.LEAVING) == 1
    assert c.pending_removals() == [3]
    together = _cluster(n=6)
    together.step()
    together.apply(sm.Action(remove=[5, 4, 3]))
    assert together.count(sm.LEAVING) == 3 and together.pending_removals() == []


def test_the_guard_keeps_what_a_scale_in_has_not_begun_to_remove():
    """With removal slots the simulated service sees a scale-in as the
    actuator sees one with nodes still to remove, and a VM in the band
    keeps them through the guard's own code.
    """
    from elastman.actuator import guard
    from elastman.evaluation import policies as pol
    c = _cluster(n=10, removal_slots=1)
    el = pol.Elastman(predict=False)
    el.start(c)
    c.step()
    c.apply(sm.Action(remove=[9, 8, 7]))
    assert el._shrinking(c).pending == ['8', '7']
    c.step()
    slots = c.serving_slots()
    p99 = {str(int(k)): 10.0 for k in c.ordinal[slots]}
    p99['0'] = 0.9 * c.cfg.slo_ms          # one VM in the band
    el.rounds.appendleft(guard.Round(c.t, p99, 10.0))
    act = el.control(c)
    assert act.keep == [8, 7] and 'keep the 2 node(s)' in act.reason
    c.apply(act)
    assert c.pending_removals() == [] and el._shrinking(c) is None
    # the action ends with the VM that was leaving; the report lists the trim
    assert c.actions[-1].count == 1
    assert c.actions[-1].done_at == c.done_at[c.slot_of[9]]
    assert [(r.kind, r.count) for r in c.trims] == [('trim', 2)]
    while c.in_flight:
        c.step()
    assert c.count(sm.SERVING) == 9 and 8 in c.slot_of and 7 in c.slot_of


def test_a_trim_drops_the_queued_vms_and_hands_their_ordinals_back():
    one = _cluster(join_slots=1)
    one.step()
    one.apply(sm.Action(add=4, flavor='m1.medium'))
    assert one.queued_ordinals() == [7, 6, 5]
    first = one.slot_of[4]
    one.apply(sm.Action(trim=2))
    assert one.queued_ordinals() == [5] and 6 not in one.slot_of
    assert one.count(sm.JOINING) == 2 and one.actions[-1].count == 2
    # the report lists it beside the actions, not as one
    assert [(r.kind, r.count) for r in one.trims] == [('trim', 2)]
    assert len(one.actions) == 1
    # the action now ends with its second VM's join and the cleanup after it
    second = one.slot_of[5]
    assert one.actions[-1].done_at == one.ready_at[second] + one.cfg.cleanup_s
    assert one.start_at[second] == one.ready_at[first]
    # the next VM created is the 6th again, with the same properties
    while one.in_flight:
        one.step()
    assert one.count(sm.SERVING) == 6 and one.next_ordinal == 6
    one.apply(sm.Action(add=1, flavor='m1.medium'))
    assert 6 in one.slot_of


def test_the_simulated_service_carries_out_a_trim_as_the_executor_does():
    """The scale-out in flight shows its queued VMs as the actuator shows
    the servers an action has not created (``Growing.to_create``), and a
    trim drops them from the cluster and from the join being clocked.
    """
    from elastman.evaluation import policies as pol
    c = _cluster(n=10, join_slots=1)
    el = pol.Elastman(predict=False)
    el.start(c)
    c.step()
    act = el._act(c, dec.Decision(kind=dec.SCALE_OUT, reason='', at=c.t,
                                  size=10, count=6, flavor='m1.medium'))
    c.apply(act)
    growing = el._growing(c)
    assert (growing.adding, growing.to_create) == (6, 5)
    d = dec.Decision(kind=dec.TRIM, reason='trim', at=c.t, count=5,
                     trim_of=growing.action_id, flavor='m1.medium')
    act = el._act(c, d)
    assert act.trim == 5 and el.joining[-1][2] == [10]
    c.apply(act)
    assert el._growing(c).to_create == 0 and c.count(sm.JOINING) == 1


def test_a_trim_takes_its_vms_from_the_newest_records_of_the_action():
    one = _cluster(join_slots=1)
    one.step()
    one.apply(sm.Action(add=3, flavor='m1.medium'))
    one.apply(sm.Action(add=2, flavor='m1.medium'))      # a top-up
    one.apply(sm.Action(trim=3))
    assert [a.count for a in one.actions] == [2, 0]
    assert one.actions[0].done_at == one.actions[1].done_at


def test_the_simulated_service_raises_its_headroom_by_the_violated_minutes():
    """The simulated elastman remembers the minutes its cluster's p99 was
    over the SLO as the actuator does (:mod:`elastman.actuator.margin`),
    and its guard and planning loop use the headroom they ask for.
    """
    from elastman.evaluation import policies as pol
    c = _cluster(n=10)
    el = pol.Elastman(predict=False, options={
        'headroom': 0.2, 'headroom_per_violation': 0.01,
        'headroom_memory_s': 3600.0})
    el.start(c)
    for _ in range(3):
        c.step()
        el.observe(c)
    el.control(c)
    assert el.policy.headroom == 0.2              # the p99 met the SLO
    # an SLO of 1 ms: every minute from now on violates it
    el.base_policy = el.base_policy.replace(slo_threshold_ms=1.0)
    for _ in range(5):
        c.step()
        el.observe(c)
    el.control(c)
    # five violated minutes, the oldest four minutes old
    weight = sum(math.exp(-60.0 * k / 3600.0) for k in range(5))
    assert el.violations.weight(c.t) == pytest.approx(weight)
    assert el.policy.headroom == pytest.approx(0.2 + 0.01 * weight)
    assert el.base_policy.headroom == 0.2
    assert 'headroom=0.2 ' in el.describe()


def test_the_simulated_scale_in_band_starts_with_the_cluster():
    """Before its first scale-out the simulated cluster's start is its last
    growth, as a new cluster's creation is for the controller; then the
    newest scale-out is.
    """
    from elastman.evaluation import policies as pol
    c = _cluster(n=4)
    el = pol.make(['elastman'])[0]
    el.start(c)
    c.step()

    def last_growth():
        slots = c.serving_slots()
        ids = [str(int(k)) for k in c.ordinal[slots]]
        return el._state(c, slots, ids, ['m1.medium'] * len(ids), []).last_grown_at

    assert last_growth() == 0.0
    c.step()
    c.apply(sm.Action(add=1, flavor='m1.medium'))
    assert last_growth() == c.t > 0.0


def test_grid_means_end_at_their_bound_and_leave_a_partial_one_out():
    from elastman.evaluation import policies as pol
    loads = list(range(1, 13))
    assert pol.grid_means(loads, 11, 5) == [4.0, 9.0]
    assert pol.grid_means(loads, 4, 5) == []


def _forecasting_elastman(forecast_at: str):
    """A simulated cluster and its elastman policy whose forecaster records
    each call (history, horizon) and forecasts a peak of 1,000 per step
    ahead: 1,000, 2,000, ...
    """
    from elastman.evaluation import policies as pol
    from elastman.predictor import ensemble as ens
    trace = tr.load('ramp', 4, 120 / 1440.0, seed=3)
    c = sm.SimCluster(trace, sm.SimConfig(forecast_at=forecast_at),
                      [sm.Flavor('m1.medium')], {'m1.medium': 4}, seed=3,
                      noise_key='t')
    el = pol.Elastman(predict=True)
    el.start(c)
    calls = []

    def predict(key, history, horizon=None):
        calls.append((list(history), horizon))
        return ens.Forecast([5.0] * horizon, 'x', 'switch', {}, {}, {}, [],
                            peak=[1000.0 * (k + 1) for k in range(horizon)])
    el.ensemble.predict = predict
    return c, el, calls


def test_the_forecast_made_as_the_service_s_predictor_makes_it():
    """With ``forecast_at`` grid the simulated elastman forecasts the means
    of control periods whose newest ends a minute before the grid point,
    once a grid point, and a plan between two grid points uses it.
    """
    from elastman.evaluation import policies as pol
    c, el, calls = _forecasting_elastman('grid')
    minutes = []
    for _ in range(23):
        c.step()
        el.observe(c)
        minutes.append(el.minute_total[-1])
    assert c.minute % el.every == 3
    reads, _ = el._forecast(c, 600.0)
    # the grid point is 3 minutes back: the means end 4 minutes back
    upto = len(minutes) - 4
    assert calls[0][0] == pytest.approx(pol.grid_means(minutes, upto, el.every))
    assert calls[0][1] == pol.GRID_STEPS
    # the peak of the steps that begin before the horizon's end (its first
    # began 240 s ago: 840 s of five-minute steps), split by the newest
    # read share
    share = sum(el.minute_reads[k] for k in range(upto - 5, upto)) / sum(
        minutes[upto - 5:upto])
    assert reads['reads_per_s'] == pytest.approx(3000.0 * share)
    c.step()
    el.observe(c)
    el._forecast(c, 600.0)                      # the same grid point
    assert len(calls) == 1
    for _ in range(el.every):
        c.step()
        el.observe(c)
    el._forecast(c, 600.0)                      # the next one
    assert len(calls) == 2 and len(calls[1][0]) == len(calls[0][0]) + 1


def test_the_simulator_s_own_forecast_at_each_decision():
    """With ``forecast_at`` decision the simulated elastman forecasts the
    control periods' means up to the one just ended, again at every plan.
    """
    assert sm.SimConfig().forecast_at == 'grid'
    c, el, calls = _forecasting_elastman('decision')
    for i in range(20):
        c.step()
        el.observe(c)
        if (i + 1) % el.every == 0:
            c.end_period()
    loads, _ = el._forecast(c, 600.0)
    assert len(c.period_reads) == 4
    periods = [r + w for r, w in zip(c.period_reads, c.period_writes)]
    assert calls[0][0] == pytest.approx(periods)
    # 600 s of five-minute steps from the plan: two
    assert calls[0][1] == 2
    share = c.period_reads[-1] / periods[-1]
    assert loads['reads_per_s'] == pytest.approx(2000.0 * share)
    el._forecast(c, 600.0)                      # forecast again, same plan
    assert len(calls) == 2


def test_foresight_plans_on_the_load_the_trace_brings():
    """elastman-foresight's planning loop is told the highest five-minute
    mean of the load the cluster will serve within its horizon: reads, and
    writes times the replication factor.
    """
    from elastman.evaluation import policies as pol
    from elastman.evaluation.policies import elastman as el_policies
    c = _cluster(n=4, minutes=120)
    fs = pol.make(['elastman-foresight'])[0]
    assert isinstance(fs, pol.Foresight) and fs.name == 'elastman-foresight'
    fs.start(c)
    assert fs.ensemble is None
    assert "the load's true future instead of a forecast" in fs.describe()
    assert 'forecast (' not in fs.describe()
    for _ in range(20):
        c.step()
        fs.observe(c)
    loads, chosen = fs._forecast(c, 900.0)
    assert chosen == 'foresight'
    rf = c.cfg.hardware.replication_factor
    reads = c.trace.reads[20:35]
    writes = c.trace.writes[20:35] * rf
    means = [(reads[k:k + 5].mean(), writes[k:k + 5].mean()) for k in range(11)]
    best = max(means, key=sum)
    assert loads['reads_per_s'] == pytest.approx(best[0])
    assert loads['writes_per_s'] == pytest.approx(best[1])
    # a horizon of one control period: the next five minutes' mean
    first = el_policies.future_peak(c, 300.0, fs.every)
    assert first['reads_per_s'] == pytest.approx(means[0][0])
    assert first['writes_per_s'] == pytest.approx(means[0][1])
    # past the trace's end it knows nothing
    c.minute = len(c.trace)
    assert el_policies.future_peak(c, 900.0, fs.every) == {}


def test_exact_capacity_is_where_the_latency_law_meets_the_slo():
    """elastman-exact's planning loop is told each VM's capacity as the
    simulator's latency law has it: along the VM's workload, the load at
    which its utilisation with its capacity factor now reaches 1.
    """
    from elastman.evaluation import policies as pol
    from elastman.evaluation.policies import elastman as el_policies
    c = _cluster(n=4, minutes=120)
    ex = pol.make(['elastman-exact'])[0]
    assert isinstance(ex, pol.ExactCapacity) and ex.name == 'elastman-exact'
    ex.start(c)
    assert "every VM's true capacity" in ex.describe()
    c.step()
    # the service's policy plans on its models, this one on the law
    assert pol.make(['elastman-foresight'])[0]._estimator(c) is None
    estimate = ex._estimator(c)
    hw = c.cfg.hardware
    slots = c.serving_slots()
    hit = int(slots[0])
    c.interference[hit] = 0.7
    per_vm = {str(int(c.ordinal[s])): {'reads_per_s': 300.0, 'writes_per_s': 120.0,
                                       'read_bytes_mean': 1000.0} for s in slots}
    got = estimate(None, per_vm, None)
    assert set(got) == set(per_vm)
    for s in slots:
        e = got[str(int(c.ordinal[s]))]
        assert e.bound == 'exact' and e.model_kind == 'svm' and e.load == 420.0
        f = float(c.true_factor(np.array([s]))[0])
        u = (300.0 * e.scale / hw.read_cap + 120.0 * e.scale / hw.write_cap
             + 1000.0 / hw.size_cap) / f
        assert u == pytest.approx(1.0)
        assert e.capacity == pytest.approx(e.scale * 420.0)
    # interference takes capacity away; a VM the cluster does not hold has none
    others = [got[str(int(c.ordinal[s]))].capacity for s in slots[1:]]
    assert got[str(int(c.ordinal[hit]))].capacity < 0.8 * min(others)
    assert estimate(None, {'999': per_vm[str(int(c.ordinal[hit]))]}, None) == {}
    assert el_policies.true_capacities(c)(None, {}, None) == {}


def test_true_capacity_is_told_the_law_and_plans_on_its_forecast():
    """elastman-true-capacity reads each VM's capacity from the latency law,
    as elastman-exact does, but plans on its own forecast, as elastman does.
    """
    from elastman.evaluation import policies as pol
    c = _cluster(n=4, minutes=120)
    tc, ex = pol.make(['elastman-true-capacity', 'elastman-exact'])
    assert isinstance(tc, pol.TrueCapacity) and not isinstance(tc, pol.Foresight)
    assert isinstance(ex, pol.TrueCapacity) and isinstance(ex, pol.Foresight)
    tc.start(c)
    ex.start(c)
    assert tc.ensemble is not None and ex.ensemble is None
    described = tc.describe()
    assert "every VM's true capacity" in described and 'forecast (' in described
    assert 'true future' not in described
    assert "true capacity" in ex.describe() and 'true future' in ex.describe()
    c.step()
    per_vm = {str(int(c.ordinal[s])): {'reads_per_s': 250.0, 'writes_per_s': 90.0,
                                       'read_bytes_mean': 800.0}
              for s in c.serving_slots()}
    told = tc._estimator(c)(None, per_vm, None)
    assert set(told) == set(per_vm)
    assert {n: e.capacity for n, e in told.items()} == {
        n: e.capacity for n, e in ex._estimator(c)(None, per_vm, None).items()}
    # no forecast yet: it plans on the load it serves, not on the trace ahead
    assert tc._forecast(c, 1800.0) == ({}, 'current')
    assert ex._forecast(c, 1800.0)[1] == 'foresight'
