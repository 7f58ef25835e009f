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
"""The planning loop's shared inputs: the load planned for, the per-VM
estimates and the horizon learnt from past joins.
"""
import dataclasses
import math

import numpy as np
import pytest

from elastman.actuator import decision as dec
from elastman.actuator import planning
from elastman.actuator.policy import ScalingPolicy
from elastman.capacity import capacity as cap_mod
from elastman.capacity.params import ModelParams
from elastman.capacity.registry import ModelRegistry


def _registry():
    """One VM's cells on both sides of r/2000 + w/4000 = 1 (size fixed)."""
    reg = ModelRegistry('c1', ModelParams(slo_metric='read_p99_ms', min_cells=2))
    reg.register_node('vm', 'm1')
    t = 0.0
    for r in range(100, 3000, 100):
        for w in (200.0, 600.0, 1200.0):
            t += 10
            u = r / 2000 + w / 4000
            reg.add_sample({'cluster_id': 'c1', 'node_id': 'vm', 'ts': t,
                            'reads_per_s': float(r), 'writes_per_s': w,
                            'read_bytes_mean': 1000.0, 'write_bytes_mean': 1000.0,
                            'read_p99_ms': 20.0 if u < 1 else 60.0})
    reg.refit(t)
    return reg


def test_batched_estimates_equal_one_by_one():
    reg = _registry()
    per_vm = {'vm': {'reads_per_s': 900.0, 'writes_per_s': 300.0,
                     'read_bytes_mean': 1000.0, 'write_bytes_mean': 1000.0},
              'other': {'reads_per_s': 1500.0, 'writes_per_s': 100.0,
                        'read_bytes_mean': 1000.0, 'write_bytes_mean': 1000.0},
              'stranger': {'reads_per_s': 1.0, 'writes_per_s': 1.0}}
    out = planning.estimates_for(reg, per_vm, {'other': 'm1'})
    assert set(out) == {'vm', 'other'}          # no flavour known: left out
    for node in out:
        model = reg.model_for('vm')[0] if node == 'vm' else reg.flavor_model('m1')
        point, factor = reg.point_and_slowdown(per_vm[node])
        one = cap_mod.capacity(model, point).slowed(factor)
        assert out[node].capacity == pytest.approx(one.capacity)
        assert (out[node].bound, out[node].seen) == (one.bound, pytest.approx(one.seen))
    assert out['other'].source == 'flavor'


def test_the_forecast_never_plans_below_the_served_load():
    observed = {'reads_per_s': 100.0, 'writes_per_s': 50.0}
    assert planning.planned_load({'reads_per_s': 80.0, 'writes_per_s': 70.0},
                                 observed) == {'reads_per_s': 100.0, 'writes_per_s': 70.0}
    assert planning.planned_load(None, observed) == observed


def test_the_horizon_covers_the_joins_that_were_clocked():
    clock = planning.JoinClock()
    assert clock.join_time('m1', 900.0) == 900.0
    clock.record('m1', 500.0, 800.0)
    clock.record('m1', 700.0, 1000.0)
    clock.record('m2', 2000.0)
    assert clock.join_time('m1', 900.0) == 700.0      # the slowest recent join
    assert clock.busy_time('m1', 0.0) == 1000.0
    assert clock.join_time(None, 900.0) == 2000.0
    p = ScalingPolicy(control_period_s=300)
    assert planning.horizon_s(p, 700.0, 1000.0) == 2000.0


@pytest.mark.parametrize('horizon_s, step_s, elapsed_s, steps', [
    (1200.0, 300.0, 0.0, 4),      # from now: the horizon in whole steps
    (1200.0, 300.0, 60.0, 5),     # begun a minute ago: one more
    (1000.0, 300.0, 0.0, 4),      # a part of a step counts
    (1200.0, 300.0, -30.0, 4),    # a start still ahead counts as now
    (10.0, 300.0, 0.0, 1),        # never less than one
])
def test_the_forecast_steps_reach_the_horizon_s_end(
        horizon_s, step_s, elapsed_s, steps):
    assert planning.forecast_steps(horizon_s, step_s, elapsed_s) == steps


def test_a_model_with_a_boundary_scales_out_in_the_warm_up_but_not_in():
    reg = _registry()
    p = ScalingPolicy(min_size=1, max_size=5, replication_factor=1, warmup_s=3600,
                      headroom=0.0)
    state = dec.ClusterState([dec.NodeInfo('vm', 'm1')], started_at=1000.0)
    hot = {'vm': {'reads_per_s': 2400.0, 'writes_per_s': 0.0,
                  'read_bytes_mean': 1000.0, 'write_bytes_mean': 1000.0}}
    d = planning.plan(p, state, hot, None, reg, 1100.0)
    assert d.kind == dec.SCALE_OUT
    assert math.isfinite(d.vms[0].capacity)
    # two VMs with a tenth of their capacity's load: the scale-in waits
    # for the warm-up's end
    two = dec.ClusterState([dec.NodeInfo('vm', 'm1'), dec.NodeInfo('vm2', 'm1')],
                           started_at=1000.0)
    cold = {n: {'reads_per_s': 200.0, 'writes_per_s': 0.0,
                'read_bytes_mean': 1000.0, 'write_bytes_mean': 1000.0}
            for n in ('vm', 'vm2')}
    flavors = {'vm': 'm1', 'vm2': 'm1'}
    d = planning.plan(p, two, cold, None, reg, 1100.0, flavors)
    assert (d.kind, d.blocked_by) == (dec.NONE, 'warmup')
    assert 'no scale-in while warming up (3500 s left)' in d.reason
    d = planning.plan(p, two, cold, None, reg, 4600.0, flavors)
    assert d.kind == dec.SCALE_IN


def _one_vm(reads_per_s):
    """A policy without headroom and one VM serving ``reads_per_s``."""
    p = ScalingPolicy(min_size=1, max_size=10, replication_factor=1, warmup_s=0,
                      headroom=0.0)
    current = {'vm': {'reads_per_s': reads_per_s, 'writes_per_s': 0.0,
                      'read_bytes_mean': 1000.0, 'write_bytes_mean': 1000.0}}
    return p, dec.ClusterState([dec.NodeInfo('vm', 'm1')]), current


def test_a_scale_out_in_a_red_round_adds_at_least_the_guards_step():
    reg = _registry()
    # 2,400 reads/s on one VM whose boundary is near 2,000
    p, state, hot = _one_vm(2400.0)
    alone = planning.plan(p, state, hot, None, reg, 100.0)
    assert alone.kind == dec.SCALE_OUT
    least = alone.count + 2
    d = planning.plan(p, state, hot, None, reg, 100.0, red_step=(least, 'fixed step'))
    assert (d.kind, d.count) == (dec.SCALE_OUT, least)
    assert ("%d, the guard's step, as the newest round is red (fixed step)" % least
            in d.reason)
    # max_size still bounds it
    small = ScalingPolicy(min_size=1, max_size=alone.count + 2, replication_factor=1,
                          warmup_s=0, headroom=0.0)
    d = planning.plan(small, state, hot, None, reg, 100.0, red_step=(least + 5, 'x'))
    assert d.count == alone.count + 1
    # a smaller step changes nothing, nor does it make a scale-out of none
    d = planning.plan(p, state, hot, None, reg, 100.0, red_step=(1, 'x'))
    assert d.count == alone.count and 'guard' not in d.reason
    calm = {'vm': dict(hot['vm'], reads_per_s=500.0)}
    d = planning.plan(p, state, calm, None, reg, 100.0, red_step=(least, 'x'))
    assert d.kind != dec.SCALE_OUT


def _line(now, start, per_minute, minutes=10):
    """The cluster's load once a minute up to ``now``, rising by
    ``per_minute`` from ``start``.
    """
    return [(now - 60.0 * (minutes - 1 - k), start + per_minute * k)
            for k in range(minutes)]


def test_the_trend_projects_a_rising_load_over_the_join():
    now = 6000.0
    rising = _line(now, 1000.0, 100.0)          # 1,900 at now, +100 a minute
    # over a 900 s join the line reaches 1,900 + 15 x 100
    assert planning.trend_growth(rising, now, 600.0, 900.0) == pytest.approx(
        3400.0 / 1900.0)
    # only the window counts: the same rise after a flat hour
    flat_then_rising = [(t - 3600.0, 1000.0) for t, _ in rising] + rising
    assert planning.trend_growth(flat_then_rising, now, 600.0, 900.0) == pytest.approx(
        3400.0 / 1900.0)
    # the rounds in any order
    assert planning.trend_growth(rising[::-1], now, 600.0, 900.0) == pytest.approx(
        3400.0 / 1900.0)
    # a step fits a steep line: the growth is bounded
    assert planning.trend_growth(rising, now, 600.0, 900.0, most=1.5) == 1.5


def _jump(now, before, after, points_after, minutes=10):
    """Once a minute up to ``now``: ``before`` then, for the newest
    ``points_after`` minutes, ``after``, each with a wobble of +-1%.
    """
    wobble = [1.0, 1.01, 0.99, 1.005, 0.995, 1.0, 0.99, 1.01, 1.0, 0.995]
    return [(now - 60.0 * (minutes - 1 - k),
             (after if k >= minutes - points_after else before) * wobble[k])
            for k in range(minutes)]


def test_a_step_that_stays_flat_is_no_trend():
    now = 6000.0
    t = np.arange(10) * 60.0
    # the load doubled five minutes ago and stayed there
    step = _jump(now, 1000.0, 2000.0, 5)
    assert planning.jump_index(t, np.array([v for _, v in step])) == 5
    assert planning.trend_growth(step, now, 600.0, 900.0, most=1.5) == pytest.approx(
        1.0, abs=0.05)
    # with fewer than three points after it, a step cannot be told from
    # the start of a rise: the whole window's line, bounded
    fresh = _jump(now, 1000.0, 2000.0, 2)
    assert planning.jump_index(t, np.array([v for _, v in fresh])) == 8
    assert planning.trend_growth(fresh, now, 600.0, 900.0, most=1.5) == 1.5


def test_a_load_that_goes_on_rising_after_its_jump_keeps_rising():
    now = 6000.0
    # doubled five minutes ago and rising by 100 a minute since
    crowd = [(now - 60.0 * (9 - k), 1000.0 if k < 5 else 2000.0 + 100.0 * (k - 5))
             for k in range(10)]
    t = np.array([p[0] for p in crowd])
    assert planning.jump_index(t, np.array([p[1] for p in crowd])) == 5
    # projected from the points after the jump: 2,400 + 15 x 100
    assert planning.trend_growth(crowd, now, 600.0, 900.0) == pytest.approx(
        3900.0 / 2400.0)


@pytest.mark.parametrize('loads', [
    [1000.0 + 100.0 * k for k in range(10)],                  # a line
    [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1000.0, 1010.0, 990.0],   # flat
    [2000.0] * 5 + [1000.0] * 5,                              # a drop
    [1000.0, 2000.0, 1000.0],                                 # too few
])
def test_no_jump_up_without_two_flat_levels_rising(loads):
    t = np.arange(len(loads)) * 60.0
    assert planning.jump_index(t, np.array(loads)) is None


@pytest.mark.parametrize('points,window', [
    (_line(6000.0, 1900.0, -100.0), 600.0),      # falling
    (_line(6000.0, 1000.0, 0.0), 600.0),         # flat
    (_line(6000.0, 1000.0, 100.0, minutes=2), 600.0),   # too few rounds
    (_line(6000.0, 1000.0, 100.0), 0.0),         # off
    ([(6000.0, 1000.0)] * 5, 600.0),             # one instant
])
def test_no_rising_trend_leaves_the_load_as_it_is(points, window):
    assert planning.trend_growth(points, 6000.0, window, 900.0) == 1.0


def test_the_plan_is_for_at_least_the_served_load_grown_by_the_trend():
    observed = {'reads_per_s': 100.0, 'writes_per_s': 50.0}
    forecast = {'reads_per_s': 130.0, 'writes_per_s': 70.0}
    assert planning.planned_load(forecast, observed, 1.5) == {
        'reads_per_s': 150.0, 'writes_per_s': 75.0}
    assert planning.planned_load(None, observed, 1.2) == {
        'reads_per_s': pytest.approx(120.0), 'writes_per_s': pytest.approx(60.0)}
    # a growth below 1 never plans below the served load
    assert planning.planned_load(None, observed, 0.5) == observed


def test_a_rising_trend_scales_out_before_the_load_arrives():
    reg = _registry()
    # 1,200 reads/s on one VM whose boundary is near 2,000: no scale-out...
    p, state, current = _one_vm(1200.0)
    assert planning.plan(p, state, current, None, reg, 100.0).kind != dec.SCALE_OUT
    # ... until the load rises by four fifths over a join
    d = planning.plan(p, state, current, None, reg, 100.0, growth=1.8)
    assert d.kind == dec.SCALE_OUT
    assert d.inputs['trend_growth'] == 1.8
    assert d.inputs['predicted_cluster']['reads_per_s'] == pytest.approx(2160.0)


def test_the_held_load_is_the_highest_of_its_window():
    points = [(100.0, 900.0), (400.0, 2500.0), (700.0, 1200.0), (760.0, float('nan'))]
    assert planning.held_load(points, 760.0, 300.0) == 1200.0
    assert planning.held_load(points, 760.0, 700.0) == 2500.0
    assert planning.held_load(points, 760.0, 0.0) == 0.0
    assert planning.held_load([], 760.0, 600.0) == 0.0


FLAVORS = {'a': 'm1', 'b': 'm1', 'c': 'm1'}


def _three_vms(reads_per_vm, **policy):
    """Three VMs of the flavour of :func:`_registry`, each serving
    ``reads_per_vm``.
    """
    p = ScalingPolicy(min_size=1, max_size=10, replication_factor=1, warmup_s=0,
                      headroom=0.0, max_scale_in_fraction=1.0, **policy)
    names = ('a', 'b', 'c')
    current = {n: {'reads_per_s': reads_per_vm, 'writes_per_s': 0.0,
                   'read_bytes_mean': 1000.0, 'write_bytes_mean': 1000.0}
               for n in names}
    return p, dec.ClusterState([dec.NodeInfo(n, 'm1') for n in names]), current


def test_a_scale_in_leaves_the_vms_the_held_load_needs():
    # three VMs of about 2,000 reads/s each serve 600 in all: one is enough
    p, state, current = _three_vms(200.0, scale_in_hold_s=3600)
    reg = _registry()
    free = planning.plan(p, state, current, None, reg, 100.0, FLAVORS)
    assert (free.kind, free.count) == (dec.SCALE_IN, 2)
    # 2,400 an hour ago needs two of them: one goes
    d = planning.plan(p, state, current, None, reg, 100.0, FLAVORS, held=2400.0)
    assert (d.kind, d.count) == (dec.SCALE_IN, 1)
    assert 'rather than 2: the load of the last 3600 s peaked at 2400.0' in d.reason
    assert d.inputs['held_load'] == 2400.0
    # 4,500 needs all three: nothing goes, and the record says why
    d = planning.plan(p, state, current, None, reg, 100.0, FLAVORS, held=4500.0)
    assert (d.kind, d.count, d.remove_nodes) == (dec.NONE, 0, [])
    assert d.blocked_by == 'hold'
    assert d.reason.startswith('no action: a scale-in of 2 held back')
    # a held load never makes a scale-out
    d = planning.plan(p, state, current, None, reg, 100.0, FLAVORS, held=9000.0)
    assert d.kind == dec.NONE


def test_a_hold_changes_no_other_decision():
    p, state, current = _three_vms(1000.0, scale_in_hold_s=3600)
    reg = _registry()
    alone = planning.plan(p, state, current, None, reg, 100.0, FLAVORS)
    held = planning.plan(p, state, current, None, reg, 100.0, FLAVORS, held=9000.0)
    assert alone.kind != dec.SCALE_IN
    assert (held.kind, held.count, held.reason) == (alone.kind, alone.count, alone.reason)


def _growing(state, adding, to_create, in_band=()):
    """``state`` with a scale-out in flight that still adds ``adding`` VMs,
    ``to_create`` of them not created yet.
    """
    return dataclasses.replace(
        state, action_in_flight=True, in_warning_band=list(in_band),
        growing=dec.Growing('a1', 'm1', adding, to_create))


def test_a_scale_out_in_flight_is_trimmed_to_what_the_plan_needs():
    reg = _registry()
    # three VMs of about 2,000 reads/s each serve 600 in all: none more needed
    p, state, current = _three_vms(200.0)
    # six VMs: a scale-in's pace (max_scale_in_fraction 1.0) is six a period
    names = ('a', 'b', 'c', 'd', 'e', 'f')
    big = dec.ClusterState([dec.NodeInfo(n, 'm1') for n in names])
    six = {n: current['a'] for n in names}
    everyone = {n: 'm1' for n in names}
    d = planning.plan(p, _growing(big, 6, 5), six, None, reg, 100.0, everyone)
    assert (d.kind, d.count, d.trim_of, d.flavor) == (dec.TRIM, 5, 'a1', 'm1')
    assert d.reason.startswith('trim the scale-out in flight by 5 of m1: it '
                               'still adds 6, the plan needs 0 more; scale in by')
    # one server is always left to the action
    d = planning.plan(p, _growing(big, 6, 6), six, None, reg, 100.0, everyone)
    assert (d.kind, d.count) == (dec.TRIM, 5)
    # at the pace of a scale-in: max_scale_in_fraction of the serving VMs
    d = planning.plan(p, _growing(state, 6, 5), current, None, reg, 100.0, FLAVORS)
    assert (d.kind, d.count) == (dec.TRIM, 3)
    slow = dataclasses.replace(p, max_scale_in_fraction=0.1)
    d = planning.plan(slow, _growing(state, 6, 5), current, None, reg, 100.0, FLAVORS)
    assert (d.kind, d.count) == (dec.TRIM, 1)
    # the servers it created join anyway: nothing to take
    d = planning.plan(p, _growing(state, 6, 0), current, None, reg, 100.0, FLAVORS)
    assert d.kind == dec.NONE and d.blocked_by == 'in_flight'
    d = planning.plan(p, _growing(state, 6, 1), current, None, reg, 100.0, FLAVORS)
    assert (d.kind, d.count) == (dec.TRIM, 1)
    # off, the plan waits for the action as before
    off = dataclasses.replace(p, replan_in_flight=False)
    d = planning.plan(off, _growing(state, 6, 5), current, None, reg, 100.0, FLAVORS)
    assert d.kind == dec.NONE and d.reason == 'no action: an action is in flight'


def test_a_scale_out_in_flight_keeps_what_the_plan_still_needs():
    reg = _registry()
    # 2,400 reads/s on each of three VMs whose boundary is near 2,000
    p, state, current = _three_vms(2400.0)
    free = planning.plan(p, state, current, None, reg, 100.0, FLAVORS)
    assert free.kind == dec.SCALE_OUT
    more = free.count + 3
    d = planning.plan(p, _growing(state, more, more - 1), current, None, reg,
                      100.0, FLAVORS)
    assert (d.kind, d.count) == (dec.TRIM, 3)
    assert 'the plan needs %d more' % free.count in d.reason
    d = planning.plan(p, _growing(state, free.count, free.count), current,
                      None, reg, 100.0, FLAVORS)
    assert d.kind == dec.NONE and 'all needed' in d.reason
    # an action that adds fewer than the plan needs is topped up, the
    # servers it created included
    _, _, hotter = _three_vms(4000.0)
    need = planning.plan(p, state, hotter, None, reg, 100.0, FLAVORS).count
    assert need >= 3
    d = planning.plan(p, _growing(state, 2, 1), hotter, None, reg, 100.0, FLAVORS)
    assert (d.kind, d.count, d.top_up_of) == (dec.SCALE_OUT, need - 2, 'a1')
    assert d.reason.startswith('top up the scale-out in flight by %d of m1: it '
                               'still adds 2, the plan needs %d more'
                               % (need - 2, need))
    # within max_size: three serving, two to come, room for one more
    d = planning.plan(dataclasses.replace(p, max_size=6), _growing(state, 2, 1),
                      hotter, None, reg, 100.0, FLAVORS)
    assert (d.kind, d.count) == (dec.SCALE_OUT, 1)
    d = planning.plan(dataclasses.replace(p, max_size=5), _growing(state, 2, 1),
                      hotter, None, reg, 100.0, FLAVORS)
    assert d.kind == dec.NONE
    # a scale-out whose servers all exist (they join together) is left to
    # its joins: the plan waits, as it does for any action in flight
    d = planning.plan(p, _growing(state, 2, 0), hotter, None, reg, 100.0, FLAVORS)
    assert d.kind == dec.NONE and d.reason == 'no action: an action is in flight'


def test_nothing_is_trimmed_while_a_vm_is_in_the_band_or_the_plan_cannot_say():
    reg = _registry()
    p, state, current = _three_vms(200.0)
    d = planning.plan(p, _growing(state, 6, 5, in_band=['a']), current, None,
                      reg, 100.0, FLAVORS)
    assert d.kind == dec.NONE and 'warning band' in d.reason
    # no model: the plan cannot say what the cluster carries
    d = planning.plan(p, _growing(state, 6, 5), current, None, None, 100.0, FLAVORS)
    assert d.kind == dec.NONE and 'not trimmed: model not usable' in d.reason
