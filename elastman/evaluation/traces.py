"""Workload traces for the simulator.

A trace is a per-step series of client read and write operations per second
and the mean request size. Shipped shapes live as normalised CSV files under
``tools/traces/`` (``minute,load,read_fraction,size_bytes``; load 1.0 = the
trace's peak); :func:`load` scales one to a cluster of ``nodes`` VMs and adds
seeded noise. The files are generated deterministically by :func:`write_shipped`
(``python -m elastman.evaluation.traces --write tools/traces``).
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import os
from typing import Callable

import numpy as np

STEP_S = 60
#: Peak demand as a fraction of the nominal capacity of ``nodes`` VMs.
PEAK_UTILISATION = 0.8


@dataclasses.dataclass
class Shape:
    """A normalised trace: per-minute load (peak 1.0), read fraction, size."""

    name: str
    load: np.ndarray
    read_fraction: np.ndarray
    size: np.ndarray

    def __len__(self) -> int:
        return len(self.load)

    def to_csv(self, path: str) -> None:
        with open(path, 'w') as f:
            f.write('minute,load,read_fraction,size_bytes\n')
            for i, (lo, rf, sz) in enumerate(zip(self.load, self.read_fraction, self.size)):
                f.write('%d,%.4f,%.3f,%d\n' % (i, lo, rf, sz))

    @classmethod
    def from_csv(cls, path: str) -> 'Shape':
        data = np.loadtxt(path, delimiter=',', skiprows=1, ndmin=2)
        name = os.path.splitext(os.path.basename(path))[0]
        return cls(name, data[:, 1], data[:, 2], data[:, 3])


@dataclasses.dataclass
class Trace:
    """Client workload per step, scaled to a cluster."""

    name: str
    reads: np.ndarray        # client reads/s
    writes: np.ndarray       # client writes/s
    size: np.ndarray         # mean request size, bytes
    step_s: int = STEP_S

    def __len__(self) -> int:
        return len(self.reads)

    @property
    def duration_s(self) -> int:
        return len(self) * self.step_s

    @property
    def total(self) -> np.ndarray:
        return self.reads + self.writes


# -- shapes ------------------------------------------------------------------

def _piecewise(points: list[tuple[float, float]], minutes: int) -> np.ndarray:
    xs, ys = zip(*points)
    return np.interp(np.arange(minutes), xs, ys)


def paper_shape(seed: int = 0) -> Shape:
    """Six hours like seed 000, Fig. 3.14: a flat warm-up (0-40 min), a rise
    (40-90), a sharp fall (90-100), then two more rounds of rise and fall of
    other scales (150-220, 220-360); read share and request size change by
    phase as in the YCSB configuration of Table 3.1."""
    m = 360
    load = _piecewise([(0, .30), (40, .30), (90, 1.0), (100, .32), (150, .32), (185, .75),
                       (220, .30), (270, .55), (300, .90), (330, .50), (360, .30)], m)
    rf = _piecewise([(0, .9), (100, .9), (110, .7), (220, .7), (230, .95), (360, .95)], m)
    size = _piecewise([(0, 1024), (100, 1024), (110, 2048), (220, 2048), (230, 4096),
                       (360, 4096)], m)
    return Shape('paper', load, rf, np.round(size))


def weekly_shape(seed: int = 0, days: int = 7) -> Shape:
    """Diurnal (peak mid-afternoon, trough 35% at 04:00) and weekly (weekend
    70%) pattern with three flash crowds (+50-80% within 10 min, decaying over
    1-2 h), a read share that follows the day and request sizes of 1-3 KB."""
    rng = np.random.default_rng(seed)
    m = days * 1440
    t = np.arange(m) / 1440.0                                  # days
    hour = (t % 1.0) * 24
    daily = 0.35 + 0.65 * (0.5 - 0.5 * np.cos(2 * np.pi * (hour - 4) / 24)) ** 1.5
    weekday = np.floor(t) % 7
    week = np.where(weekday >= 5, 0.7, 1.0)
    load = daily * week
    for _ in range(3):
        start = int(rng.uniform(0.1, 0.95) * m)
        height = rng.uniform(0.5, 0.8)
        decay = rng.uniform(60, 120)
        k = np.arange(m - start)
        bump = height * np.where(k < 10, k / 10.0, np.exp(-(k - 10) / decay))
        load[start:] *= 1 + bump
    load = load / load.max()
    rf = 0.8 + 0.1 * np.sin(2 * np.pi * (hour - 10) / 24)
    size = 1024 + 1024 * (0.5 + 0.5 * np.sin(2 * np.pi * t / 7 + 1.0)) \
        + 512 * (hour > 20)
    return Shape('weekly', load, rf, np.round(size))


def ramp_shape(minutes: int = 360, low: float = 0.3, start: int = 60,
               end: int = 240) -> Shape:
    """Flat at ``low``, a linear ramp to 1.0 between ``start`` and ``end``, then flat."""
    load = _piecewise([(0, low), (start, low), (end, 1.0), (minutes, 1.0)], minutes)
    return Shape('ramp', load, np.full(minutes, 0.9), np.full(minutes, 1024.0))


GENERATED: dict[str, Callable[..., Shape]] = {
    'paper': paper_shape, 'weekly': weekly_shape, 'ramp': ramp_shape}
SHIPPED = ('paper', 'weekly')


def shipped_dir() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(os.path.dirname(os.path.dirname(here)), 'tools', 'traces')


def write_shipped(out_dir: str | None = None) -> list[str]:
    """(Re)generate the shipped trace files (deterministic)."""
    out_dir = out_dir or shipped_dir()
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for name in SHIPPED:
        path = os.path.join(out_dir, name + '.csv')
        GENERATED[name](0).to_csv(path)
        paths.append(path)
    return paths


def shape(name_or_path: str) -> Shape:
    """A shipped file, a CSV path, or a generated shape by name."""
    if os.path.exists(name_or_path):
        return Shape.from_csv(name_or_path)
    path = os.path.join(shipped_dir(), name_or_path + '.csv')
    if os.path.exists(path):
        return Shape.from_csv(path)
    if name_or_path in GENERATED:
        return GENERATED[name_or_path]()
    raise ValueError('unknown trace %r (a file, or one of %s)'
                     % (name_or_path, ', '.join(GENERATED)))


def node_ops_capacity(read_fraction: np.ndarray | float, size: np.ndarray | float,
                      hw: 'Hardware') -> np.ndarray:
    """Client ops/s one nominal VM serves at utilisation 1 for this mix."""
    per_op = (read_fraction / hw.read_cap
              + (1 - read_fraction) * hw.replication_factor / hw.write_cap)
    return np.maximum(1.0 - np.asarray(size) / hw.size_cap, 0.05) / per_op


@dataclasses.dataclass(frozen=True)
class Hardware:
    """Nominal VM (flavour factor 1.0): utilisation
    ``u = (reads/read_cap + writes/write_cap + size/size_cap) / factor``."""

    read_cap: float = 2000.0
    write_cap: float = 4000.0
    size_cap: float = 65536.0
    replication_factor: int = 3


def load(name_or_path: str, nodes: int, days: float | None = None, seed: int = 1,
         hw: Hardware = Hardware(), noise: float = 0.02) -> Trace:
    """Scale a shape so that its peak needs about ``nodes`` nominal VMs at
    ``PEAK_UTILISATION``; tile or cut it to ``days``; add seeded noise."""
    sh = shape(name_or_path)
    minutes = int(round(days * 1440)) if days else len(sh)
    reps = math.ceil(minutes / len(sh))
    lo = np.tile(sh.load, reps)[:minutes]
    rf = np.tile(sh.read_fraction, reps)[:minutes]
    sz = np.tile(sh.size, reps)[:minutes]
    rng = np.random.default_rng([int(seed), 11])
    lo = lo * np.exp(rng.normal(0.0, noise, minutes))
    peak_ops = nodes * PEAK_UTILISATION * float(
        node_ops_capacity(rf[np.argmax(lo)], sz[np.argmax(lo)], hw))
    total = lo / lo.max() * peak_ops
    return Trace(sh.name, total * rf, total * (1 - rf), sz)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description='Regenerate the shipped traces.')
    ap.add_argument('--write', default=None, help='directory (default tools/traces)')
    args = ap.parse_args(argv)
    for p in write_shipped(args.write):
        print(p)


if __name__ == '__main__':
    main()
