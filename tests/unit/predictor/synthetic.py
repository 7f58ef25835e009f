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
"""Synthetic workload traces (requests/s) with known shapes, seeded."""

from typing import Dict

import numpy as np


def _noisy(y: np.ndarray, noise: float, seed: int) -> np.ndarray:
    """``y`` with seeded multiplicative Gaussian noise of s.d. ``noise``."""
    rng = np.random.default_rng(seed)
    return y * (1 + rng.normal(0, noise, y.size))


def stationary_ar(n: int = 240, seed: int = 1, level: float = 1000.0,
                  phi: float = 0.8, sd: float = 40.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.zeros(n)
    for t in range(1, n):
        x[t] = phi * x[t - 1] + rng.normal(0, sd)
    return level + x


def random_walk(
    n: int = 240, seed: int = 2, start: float = 1000.0, sd: float = 30.0
) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.maximum(start + np.cumsum(rng.normal(0, sd, n)), 100.0)


def linear_ramp(n: int = 240, seed: int = 3, start: float = 500.0,
                end: float = 2500.0, noise: float = 0.005) -> np.ndarray:
    return _noisy(np.linspace(start, end, n), noise, seed)


def diurnal(n: int = 240, seed: int = 4, period: int = 48,
            level: float = 1000.0, amplitude: float = 500.0,
            noise: float = 0.02) -> np.ndarray:
    t = np.arange(n)
    return _noisy(level + amplitude * np.sin(2 * np.pi * t / period), noise,
                  seed)


def flash_crowd(n: int = 240, seed: int = 5, base: float = 1000.0,
                peak: float = 4000.0, at: int = 120, rise: int = 6,
                decay: float = 25.0, noise: float = 0.01) -> np.ndarray:
    t = np.arange(n, dtype=float)
    extra = np.zeros(n)
    up = (t >= at) & (t < at + rise)
    extra[up] = (peak - base) * (t[up] - at + 1) / rise
    down = t >= at + rise
    extra[down] = (peak - base) * np.exp(-(t[down] - at - rise + 1) / decay)
    return _noisy(base + extra, noise, seed)


def paper_shape(seed: int = 6, noise: float = 0.01) -> np.ndarray:
    """Increase, decrease, then increase at another scale; one point a minute.

    Like the YCSB experiment of the paper: the load moves in whole clients of
    1200 req/s each, added or removed every few minutes.
    """
    clients = (
        [2] * 10
        + list(np.repeat(np.arange(3, 9), 8))  # up to 8 clients
        + list(np.repeat(np.arange(7, 2, -1), 8))  # down to 3
        + list(np.repeat(np.arange(4, 17, 2), 8))
    )  # up, in steps of 2
    return _noisy(1200.0 * np.asarray(clients, dtype=float), noise, seed)


def all_traces() -> Dict[str, np.ndarray]:
    return {
        'stationary_ar': stationary_ar(),
        'random_walk': random_walk(),
        'linear_ramp': linear_ramp(),
        'diurnal': diurnal(),
        'flash_crowd': flash_crowd(),
    }
