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
import uuid

from elastman.common import schedule


def _steps(phase, first, period=300.0, tick=30.0, until=3000.0):
    """When a worker calling every ``tick`` s does the step."""
    done, last, now = [], None, first
    while now < until:
        if schedule.is_due(now, last, period, phase):
            done.append(now)
            last = now
        now += tick
    return done


def test_without_a_phase_a_step_comes_one_period_after_the_last():
    assert schedule.is_due(5.0, None, 300.0)
    assert not schedule.is_due(299.0, 0.0, 300.0)
    assert schedule.is_due(300.0, 0.0, 300.0)


def test_steps_settle_on_the_phase_grid_one_period_apart():
    # first step at 0; the grid is 100 + k 300: the second step waits for
    # half a period, then each falls in the first tick of its slot
    assert _steps(100.0, 0.0) == [0.0, 150.0, 420.0, 720.0, 1020.0, 1320.0,
                                  1620.0, 1920.0, 2220.0, 2520.0, 2820.0]
    # a first step just before a grid instant
    assert _steps(100.0, 90.0)[:4] == [90.0, 240.0, 420.0, 720.0]


def test_a_worker_that_calls_once_a_period_misses_no_period():
    for phase in (0.0, 1.0, 29.0, 31.0, 59.0):
        assert _steps(phase, 0.0, period=60.0, tick=60.0, until=600.0) == \
            [60.0 * k for k in range(10)], phase


def test_the_phases_of_many_clusters_spread_over_the_rounds():
    period, rounds = 300.0, 10
    per_round = [0] * rounds
    for i in range(1000):
        phase = schedule.phase_of(str(uuid.UUID(int=7919 * i + 1)), period)
        assert 0 <= phase < period
        per_round[int(phase // (period / rounds))] += 1
    # about 100 in each 30-s round; none empty, none with twice its share
    assert min(per_round) > 50 and max(per_round) < 200, per_round
    assert schedule.phase_of('c', period) == schedule.phase_of('c', period)


def test_grid_end_is_the_newest_grid_point_a_lead_before_the_phase():
    # the grid 100 - 60 + k * 300: ..., -260, 40, 340, 640, ...
    assert schedule.grid_end(40.0, 100.0, 300.0, lead=60.0) == 40.0
    assert schedule.grid_end(339.0, 100.0, 300.0, lead=60.0) == 40.0
    assert schedule.grid_end(340.0, 100.0, 300.0, lead=60.0) == 340.0
    assert schedule.grid_end(30.0, 100.0, 300.0, lead=60.0) == -260.0
    # without a lead, the phase's own grid
    assert schedule.grid_end(1000.0, 100.0, 300.0) == 1000.0
    assert schedule.grid_end(999.0, 100.0, 300.0) == 700.0
