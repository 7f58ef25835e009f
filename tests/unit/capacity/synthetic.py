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
"""A synthetic Cassandra VM with a known capacity surface, for the tests.

Utilisation of the VM for read rate r, write rate w (requests/s) and mean
request size s (bytes) is

    u(r, w, s) = r / R + w / W + s / S            (R=8000, W=12000, S=16384)

so the SLO boundary u = 1 is a plane (the model of OnlineElastMan). The p99
read latency is an M/M/1-like curve that crosses the 35 ms SLO exactly at u=1,

    p99 = 35 ms * (1 - rho) / (1 - rho * u)       (rho = 0.9; 3.5 ms when idle)

saturating at 2 s, times lognormal noise with median 1 (sigma 0.25): the median
of the noisy latency meets the SLO exactly below the plane. ``factor`` scales
R, W, S (0.7 = a 30% drop from an interfering neighbour).
"""
from __future__ import annotations

import numpy as np

SLO_MS = 35.0
R, W, S = 8000.0, 12000.0, 16384.0
RHO = 0.9
SIGMA = 0.25

#: the 10 fixed directions of the accuracy test: (read share, data size bytes)
DIRECTIONS = [(0.0, 1024), (0.15, 3072), (0.3, 2048), (0.45, 5120), (0.5, 1024),
              (0.6, 4096), (0.75, 2048), (0.85, 6144), (0.95, 3072), (1.0, 1536)]


class SyntheticVM:
    def __init__(self, factor: float = 1.0, seed: int = 0) -> None:
        self.factor = factor
        self.rng = np.random.default_rng(seed)

    def utilisation(self, r, w, s):
        f = self.factor
        return r / (R * f) + w / (W * f) + s / (S * f)

    def p99(self, r: float, w: float, s: float, noise: bool = True) -> float:
        u = self.utilisation(r, w, s)
        base = 2000.0 if RHO * u >= 0.9999 else min(2000.0, SLO_MS * (1 - RHO) / (1 - RHO * u))
        return base * float(self.rng.lognormal(0.0, SIGMA)) if noise else base

    def meets(self, r, w, s):
        return self.utilisation(r, w, s) <= 1.0

    def capacity(self, read_share: float, size: float) -> float:
        """True capacity (requests/s) for a read share and request size."""
        f = self.factor
        per_req = read_share / (R * f) + (1 - read_share) / (W * f)
        return (1.0 - size / (S * f)) / per_req


def sample(vm: SyntheticVM, r: float, w: float, s: float, ts: float,
           node: str = 'vm-1', cluster: str = 'c1') -> dict:
    p = vm.p99(r, w, s)
    return {'cluster_id': cluster, 'node_id': node, 'ts': ts,
            'reads_per_s': r, 'writes_per_s': w, 'read_bytes_mean': s,
            'write_bytes_mean': s, 'read_p50_ms': p / 3, 'read_p95_ms': p / 1.5,
            'read_p99_ms': p, 'write_p50_ms': 1.0, 'write_p95_ms': 2.0,
            'write_p99_ms': 3.0, 'up': True}


class RandomWalk:
    """Workload random walk over total load, read share and request size.

    One step per sample; total load wanders in [0, 1.7 x the capacity of the
    current mix] so both sides of the boundary are visited.
    """

    def __init__(self, vm: SyntheticVM, seed: int = 1,
                 steps: tuple[float, float, float] = (0.15, 0.08, 400.0)) -> None:
        self.vm = vm
        self.steps = np.asarray(steps)
        self.rng = np.random.default_rng(seed)
        self.u, self.share, self.size = 0.5, 0.5, 2048.0

    @staticmethod
    def _reflect(x: float, lo: float, hi: float) -> float:
        while x < lo or x > hi:
            x = 2 * lo - x if x < lo else 2 * hi - x
        return x

    def step(self) -> tuple[float, float, float]:
        g = self.rng.normal(size=3) * self.steps
        self.u = self._reflect(self.u + g[0], 0.05, 1.7)
        self.share = self._reflect(self.share + g[1], 0.0, 1.0)
        self.size = self._reflect(self.size + g[2], 256.0, 7168.0)
        # load relative to the nominal (undisturbed) surface
        cap = SyntheticVM(1.0).capacity(self.share, self.size)
        load = self.u * cap
        return load * self.share, load * (1 - self.share), self.size
