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
"""A simulated multi-socket host to develop and evaluate the BALM controller.

Model (per tick of ``tick`` seconds):

* every memory node serves ``node_gbs`` GB/s; each remote link ``link_gbs``;
* an LC VM on node n reads ``load * lc_demand_gbs`` from node n; its p99
  latency grows with the utilisation u of node n as
  ``base * (1 + k u^2 / (1 - u))`` and beyond saturation with the overload;
  each observed sample carries lognormal noise;
* a BE VM wants ``demand_gbs * phase(t) * MBA/100 * cpu`` (``cpu``: its CPU
  quota as a fraction of what it was placed with) spread over the nodes by
  its page placement; it advances only as fast as its slowest node (BWAP's
  execution-time model): at an overloaded node every reader gets the same
  fraction, a remote link caps the remote traffic;
* page migration moves ``migration_gbs`` of pages per second, adds that
  traffic on the source and destination nodes and slows the BE VM by
  ``migration_penalty`` while it runs.

Every source of randomness has its own stream derived from the seed
(:class:`Draws`), and the n-th draw of a stream belongs to the n-th tick (or
second) whatever happened before: every policy run on the same seed sees
the same bursts and the same noise in the same polls (common random
numbers), so the comparisons between policies are paired.
"""
from __future__ import annotations

import dataclasses
import math
import random

from elastman.hostagent import bwap
from elastman.hostagent.platform import Platform

GB = float(2 ** 30)


def stream_seed(seed: int | str, purpose: str) -> str:
    """The seed of the random stream that serves ``purpose`` in a run on
    ``seed`` (``random.Random`` hashes a string seed with SHA-512).
    """
    return '%s/%s' % (seed, purpose)


class Draws:
    """Standard normal draws of one purpose's stream, by index.

    ``normal(i)`` is the i-th draw of the stream (0-based) however many
    indices the caller skipped or asked twice, so what a draw stands for
    (the burst of second i, the noise of poll i) depends on i alone, not on
    how often a policy looked. Indices only go forward.
    """

    def __init__(self, seed: int | str, purpose: str) -> None:
        self._rng = random.Random(stream_seed(seed, purpose))
        self._index = -1
        self._value = 0.0

    def normal(self, index: int) -> float:
        if index < self._index:
            raise ValueError('draw %d of a stream already at %d'
                             % (index, self._index))
        while self._index < index:
            self._value = self._rng.gauss(0.0, 1.0)
            self._index += 1
        return self._value


@dataclasses.dataclass
class SimLC:
    name: str
    node: int
    slo_ms: float = 35.0
    demand_gbs: float = 30.0
    base_ms: float = 8.0
    load: float = 0.1


@dataclasses.dataclass
class SimBE:
    name: str
    node: int
    memory_gb: float = 16.0
    demand_gbs: float = 70.0
    pages: dict[int, float] = dataclasses.field(default_factory=dict)  # GB
    mba: int = 100
    phases: tuple[tuple[float, float], ...] = ((8.0, 1.0), (4.0, 0.6))
    allowed: list[int] | None = None
    cpu: float = 1.0

    def intensity(self, t: float) -> float:
        period = sum(d for d, _ in self.phases)
        x = t % period
        for duration, level in self.phases:
            if x < duration:
                return level
            x -= duration
        return self.phases[-1][1]


@dataclasses.dataclass
class SimConfig:
    nodes: int = 2
    node_gbs: float = 50.0
    link_gbs: float = 25.0
    tick: float = 0.02
    migration_gbs: float = 4.0
    migration_penalty: float = 0.15
    latency_k: float = 0.7
    noise: float = 0.03
    seed: int = 42
    mba: bool = True             # the host has MBA (resctrl MB)


class SimulatedHost(Platform):
    """Implements :class:`Platform` on the bandwidth model above."""

    def __init__(self, config: SimConfig | None = None) -> None:
        self.cfg = config or SimConfig()
        self._probe_noise: dict[str, Draws] = {}   # per LC VM, by tick
        self.ticks = 0
        self.t = 0.0
        self.lcs: dict[str, SimLC] = {}
        self.bes: dict[str, SimBE] = {}
        self._migrations: dict[str, list[float]] = {}  # vm -> [src, dst, GB]
        self._node_traffic: dict[str, dict[int, float]] = {}
        self.be_rate: dict[str, float] = {}
        self.lc_true_latency: dict[str, float] = {}
        self.utilisation: dict[int, float] = {}

    # scenario set-up -------------------------------------------------------
    def add_lc(self, lc: SimLC) -> None:
        self.lcs[lc.name] = lc

    def add_be(self, be: SimBE, weights: dict[int, float] | None = None) -> None:
        if not be.pages:
            weights = weights or self.target_weights_for(be)
            be.pages = {n: be.memory_gb * w for n, w in weights.items()}
        self.bes[be.name] = be
        self.be_rate[be.name] = 0.0

    def target_weights_for(self, be: SimBE) -> dict[int, float]:
        return bwap.canonical_weights(self.bandwidth_matrix(), [be.node],
                                      be.allowed or self.nodes())

    # Platform --------------------------------------------------------------
    def now(self) -> float:
        return self.t

    def nodes(self) -> list[int]:
        return list(range(self.cfg.nodes))

    def home_node(self, vm: str) -> int:
        return self.bes[vm].node if vm in self.bes else self.lcs[vm].node

    def allowed_nodes(self, vm: str) -> list[int]:
        return self.bes[vm].allowed or self.nodes()

    def bandwidth_matrix(self) -> dict[int, dict[int, float]]:
        return {s: {d: (self.cfg.node_gbs if s == d else self.cfg.link_gbs)
                    for d in self.nodes()} for s in self.nodes()}

    def has_mba(self) -> bool:
        return self.cfg.mba

    def get_cpu_share(self, vm: str) -> float | None:
        return self.bes[vm].cpu

    def set_cpu_share(self, vm: str, share: float) -> None:
        self.bes[vm].cpu = max(0.01, min(1.0, float(share)))

    def can_repin(self, vm: str) -> bool:
        return vm in self.bes

    def repin(self, vm: str, node: int) -> None:
        self.bes[vm].node = int(node)

    def get_mba(self, vm: str) -> int:
        return self.bes[vm].mba

    def set_mba(self, vm: str, level: int) -> None:
        self.bes[vm].mba = max(10, min(100, int(level)))

    def node_bandwidth(self, vm: str) -> dict[int, float]:
        return {n: v * GB for n, v in self._node_traffic.get(vm, {}).items()}

    def page_distribution(self, vm: str) -> dict[int, float]:
        return {n: gb * GB for n, gb in self.bes[vm].pages.items()}

    def migrate(self, vm: str, src: int, dst: int, nbytes: float) -> float:
        be = self.bes[vm]
        if dst not in self.allowed_nodes(vm) or src == dst:
            return 0.0
        gb = min(nbytes / GB, be.pages.get(src, 0.0))
        if gb <= 1e-9:
            return 0.0
        self._migrations[vm] = [src, dst, gb]
        return gb * GB

    def migration_busy(self, vm: str) -> bool:
        return vm in self._migrations

    # dynamics --------------------------------------------------------------
    def step(self) -> None:
        """Advance one tick."""
        cfg = self.cfg
        dt = cfg.tick
        nodes = self.nodes()
        extra = {n: 0.0 for n in nodes}  # migration traffic GB/s
        for vm, (src, dst, left) in list(self._migrations.items()):
            gb = min(left, cfg.migration_gbs * dt)
            be = self.bes[vm]
            be.pages[src] = be.pages.get(src, 0.0) - gb
            be.pages[dst] = be.pages.get(dst, 0.0) + gb
            extra[src] += gb / dt
            extra[dst] += gb / dt
            if left - gb <= 1e-9:
                del self._migrations[vm]
            else:
                self._migrations[vm][2] = left - gb
        lc_demand = {n: 0.0 for n in nodes}
        for lc in self.lcs.values():
            lc_demand[lc.node] += lc.load * lc.demand_gbs
        # BE attempted traffic and the node loads it meets
        attempts = {}
        for name, be in self.bes.items():
            rate = be.demand_gbs * be.intensity(self.t) * be.mba / 100.0 \
                * be.cpu
            if name in self._migrations:
                rate *= 1.0 - cfg.migration_penalty
            total = sum(be.pages.values()) or 1.0
            attempts[name] = (rate, {n: be.pages.get(n, 0.0) / total
                                     for n in nodes})
        demand = {n: lc_demand[n] + extra[n]
                  + sum(r * w[n] for r, w in attempts.values()) for n in nodes}
        for name, (rate, w) in attempts.items():
            be = self.bes[name]
            scale = 1.0
            for n in nodes:
                if w[n] <= 0 or rate <= 0:
                    continue
                if demand[n] > cfg.node_gbs:
                    scale = min(scale, cfg.node_gbs / demand[n])
                if n != be.node:
                    scale = min(scale, cfg.link_gbs / (rate * w[n]))
            got = rate * scale
            self.be_rate[name] = got
            self._node_traffic[name] = {n: got * w[n] for n in nodes}
        served = {n: lc_demand[n] + extra[n]
                  + sum(tr[n] for tr in self._node_traffic.values())
                  for n in nodes}
        for n in nodes:
            self.utilisation[n] = served[n] / cfg.node_gbs
        for name, lc in self.lcs.items():
            u = min(self.utilisation[lc.node], 0.98)
            lat = lc.base_ms * (1.0 + cfg.latency_k * u * u / (1.0 - u))
            over = demand[lc.node] / cfg.node_gbs
            if over > 1.0:
                lat *= over ** 4
            self.lc_true_latency[name] = lat
        self.t += dt
        self.ticks += 1

    def observe(self, lc: str) -> float:
        """One noisy p99 sample of an LC VM, as a probe would report it.

        The noise is the tick's draw of the VM's own stream: the same in
        the same poll of every run on the seed.
        """
        if lc not in self._probe_noise:
            self._probe_noise[lc] = Draws(self.cfg.seed, 'probe/%s' % lc)
        z = self._probe_noise[lc].normal(self.ticks)
        return self.lc_true_latency[lc] * math.exp(self.cfg.noise * z)


@dataclasses.dataclass
class CpuSimConfig:
    """A host whose cores a latency-critical and a best-effort VM share.

    The LC VM needs ``demand`` cores (its phase's level times a lognormal
    factor drawn each second: bursts); given ``a`` cores its p99 follows
    ``base * (1 + k rho^2 / (1 - rho))`` with ``rho = demand / a`` (4th power
    growth beyond saturation), observed with lognormal noise each tick. The
    BE VM is CPU-bound and scales linearly: it uses its whole cap, and the
    LC VM gets the rest of the host. UIPT is proportional to the cores each
    VM turns into work, with ``uipt_noise``.

    The bursts (one draw a second), the probe noise (one a tick) and the
    UIPT noise (the draw of the tick it is measured in) come from three
    streams of the seed, so every policy sees the same LC demand and noise.
    """

    cores: float = 16.0
    tick: float = 0.02
    slo_ms: float = 35.0
    base_ms: float = 8.0
    latency_k: float = 0.7
    phases: tuple[tuple[float, float], ...] = ((60.0, 8.0), (60.0, 3.0))
    burst_sigma: float = 0.12
    noise: float = 0.03
    uipt_noise: float = 0.03
    seed: int = 42


class CpuSimHost:
    """Advance with :meth:`step`; the policy sets ``be_cap`` (cores)."""

    def __init__(self, config: CpuSimConfig | None = None) -> None:
        self.cfg = config or CpuSimConfig()
        self._bursts = Draws(self.cfg.seed, 'bursts')
        self._probe_noise = Draws(self.cfg.seed, 'probe')
        self._uipt_noise = Draws(self.cfg.seed, 'uipt')
        self.ticks = 0
        self.t = 0.0
        self.be_cap = 0.0
        self.demand = 0.0
        self.lc_cores = 0.0
        self.lc_latency = 0.0

    def phase_level(self, t: float) -> float:
        period = sum(d for d, _ in self.cfg.phases)
        x = t % period
        for duration, level in self.cfg.phases:
            if x < duration:
                return level
            x -= duration
        return self.cfg.phases[-1][1]

    def step(self) -> None:
        cfg = self.cfg
        burst = math.exp(cfg.burst_sigma * self._bursts.normal(int(self.t)))
        self.demand = self.phase_level(self.t) * burst
        self.lc_cores = max(0.05, cfg.cores - self.be_cap)
        rho = self.demand / self.lc_cores
        r = min(rho, 0.98)
        lat = cfg.base_ms * (1.0 + cfg.latency_k * r * r / (1.0 - r))
        if rho > 0.98:
            lat *= (rho / 0.98) ** 4
        self.lc_latency = lat
        self.t += cfg.tick
        self.ticks += 1

    def observe(self) -> float:
        """The LC VM's p99 as this tick's poll sees it."""
        z = self._probe_noise.normal(self.ticks)
        return self.lc_latency * math.exp(self.cfg.noise * z)

    def lc_used(self) -> float:
        return min(self.demand, self.lc_cores)

    def uipt(self, cores_used: float) -> float:
        """Instructions per second of a VM that worked ``cores_used`` cores
        (in units of one core's instructions per second), measured in this
        tick.
        """
        z = self._uipt_noise.normal(self.ticks)
        return cores_used * math.exp(self.cfg.uipt_noise * z)
