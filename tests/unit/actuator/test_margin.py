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
"""The headroom the cluster's own violated minutes raise."""
import math

import pytest

from elastman.actuator import margin
from elastman.actuator.policy import ScalingPolicy


def test_a_round_above_the_slo_counts_the_time_since_the_one_before():
    rounds = [(0.0, 40.0), (30.0, 10.0), (60.0, 36.0), (300.0, 50.0),
              (360.0, None)]
    # 60 s for the first; 30 s after the round before; a gap counts one
    # interval; a round without the metric never violates
    assert margin.violated_minutes(rounds, 35.0, 60.0) == [
        (0.0, 1.0), (60.0, 0.5), (300.0, 1.0)]


def test_rounds_already_read_are_skipped():
    rounds = [(0.0, 40.0), (60.0, 40.0), (90.0, 40.0)]
    assert margin.violated_minutes(rounds, 35.0, 60.0, after=60.0) == [(90.0, 0.5)]


def test_the_memory_decays_with_its_time_constant():
    memory = margin.ViolationMemory(3600.0)
    assert memory.weight(0.0) == 0.0
    memory.add(0.0, 2.0)
    memory.add(3600.0, 1.0)
    assert memory.weight(3600.0) == pytest.approx(2.0 / math.e + 1.0)
    assert memory.weight(7200.0) == pytest.approx((2.0 / math.e + 1.0) / math.e)


def test_a_fixed_headroom_ignores_the_violations():
    policy = ScalingPolicy(headroom=0.2, headroom_per_violation=0.0)
    assert margin.headroom(policy, 100.0) == 0.2
    assert margin.adapted(policy, 100.0) is policy
    assert margin.memory_s(policy) == 0.0


def test_each_violated_minute_raises_the_headroom_up_to_its_cap():
    policy = ScalingPolicy(headroom=0.2, headroom_per_violation=0.01,
                           headroom_max=0.4)
    assert margin.headroom(policy, 0.0) == 0.2
    assert margin.headroom(policy, 5.0) == pytest.approx(0.25)
    assert margin.headroom(policy, 100.0) == 0.4
    used = margin.adapted(policy, 5.0)
    assert used.headroom == pytest.approx(0.25)
    assert used.replace(headroom=0.2) == policy
    # a violation still weighs 1% of a new one that far back
    assert margin.memory_s(policy) == pytest.approx(
        math.log(100.0) * policy.headroom_memory_s)


def test_a_cap_below_the_headroom_keeps_the_headroom():
    policy = ScalingPolicy(headroom=0.3, headroom_per_violation=0.01,
                           headroom_max=0.2)
    assert margin.headroom(policy, 10.0) == 0.3
