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
"""The simulated hosts' random streams: every policy on a seed sees the
same bursts and the same noise in the same tick.
"""
from __future__ import annotations

import pytest

from elastman.evaluation import hostsim as sim


def test_a_draw_depends_on_its_index_alone():
    a, b = sim.Draws(9, 'bursts'), sim.Draws(9, 'bursts')
    first = [a.normal(i) for i in range(6)]
    # b skips draws 0-3 and asks for 5 twice: still the stream's 5th draw
    assert b.normal(4) == first[4]
    assert b.normal(5) == b.normal(5) == first[5]
    assert sim.Draws(9, 'probe').normal(5) != first[5]
    assert sim.Draws(10, 'bursts').normal(5) != first[5]
    with pytest.raises(ValueError):
        b.normal(3)


def _cpu_run(cap_at, uipt_every):
    """LC demand and probe noise per tick of a CPU host whose BE cap
    follows ``cap_at(tick)`` and whose UIPT is read every ``uipt_every``
    ticks (0: never), as a policy would.
    """
    host = sim.CpuSimHost(sim.CpuSimConfig(seed=9))
    demand, noise = [], []
    for i in range(250):
        host.be_cap = cap_at(i)
        host.step()
        demand.append(host.demand)
        noise.append(host.observe() / host.lc_latency)
        if uipt_every and i % uipt_every == 0:
            host.uipt(host.be_cap)
    return demand, noise


def test_cpu_host_policies_see_the_same_demand_and_noise():
    fixed = _cpu_run(lambda i: 4.0, 0)
    adaptive = _cpu_run(lambda i: 4.0 + (i // 10) % 5, 7)
    assert adaptive[0] == fixed[0]
    assert adaptive[1] == pytest.approx(fixed[1], rel=1e-12)
    # the bursts change once a second (50 ticks of 20 ms), not every tick
    assert len(set(fixed[0])) == 5


def test_cpu_host_uipt_noise_is_the_tick_s_own():
    one, two = (sim.CpuSimHost(sim.CpuSimConfig(seed=9)) for _ in range(2))
    for _ in range(3):
        one.step()
        two.step()
    one.uipt(4.0)
    for _ in range(2):
        one.step()
        two.step()
    assert one.uipt(4.0) == two.uipt(4.0)


def test_bandwidth_host_policies_see_the_same_probe_noise():
    def noise(mba, observe_every):
        host = sim.SimulatedHost(sim.SimConfig(seed=9))
        host.add_lc(sim.SimLC('lc', node=0, load=0.9))
        host.add_be(sim.SimBE('be', node=1))
        host.set_mba('be', mba)
        out = []
        for i in range(100):
            host.step()
            if i % observe_every == 0:
                out.append(host.observe('lc') / host.lc_true_latency['lc'])
        return out

    throttled, unmanaged = noise(10, 1), noise(100, 1)
    assert throttled == pytest.approx(unmanaged, rel=1e-12)
    # a probe that polls every other tick sees those ticks' noise
    assert noise(100, 2) == pytest.approx(unmanaged[::2], rel=1e-12)
