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
"""The interference index of a latency-critical VM (Hubbub-Scale, Ch. 5).

The index approximates the performance drop the VM suffers from its
co-runners, ``(L_c - L_i) / L_i`` (latency with co-runners against latency
alone), from host counters only, so that the capacity model can take it as a
dimension without reading the latency it is trained to predict.

Counters, per VM (its QEMU process), as the host has them:

======================= ====================================== ==============
feature                 what                                   needs
======================= ====================================== ==============
``lc_run_delay``        share of the VM's runnable time its    /proc (always)
                        threads waited for a CPU
                        (``schedstat``)
``corunner_cpu``        CPUs the other VMs homed on the VM's   /proc (always)
                        node used, per CPU of that node
``corunner_bw``         the other VMs' memory traffic on the   resctrl MBM
                        VM's node (``mbm_total_bytes``)
``corunner_llc_refs``,  the other VMs' LLC references and      a PMU
``corunner_llc_misses`` misses (``perf_event_open``)
``lc_llc_refs``         the VM's own LLC references            a PMU
======================= ====================================== ==============

Rates that have no natural scale (bytes/s, events/s) are divided by the
largest value seen on this host, so every feature lies in [0, 1].

The index is a linear model of these features, as in Hubbub-Scale: fitted
(scikit-learn, non-negative weights) on pairs of features and the drop the
VM showed, once ``min_pairs`` pairs exist. The drop is the VM's window p99
against its own 10th-percentile p99 at a similar request rate (a factor-2
bin), the nearest to "alone" the host sees. Until then, and on a host
without a latency signal, the index is the CPU-wait prior: a VM whose
threads waited a share ``w`` of their runnable time runs ``1 / (1 - w)``
times slower, a drop of ``w / (1 - w)``. Without MBM and a PMU, bandwidth and
cache interference reach the index only through the fitted model's CPU-side
features; the report says which source (``prior`` or ``regression``) and
which features the index came from.
"""
from __future__ import annotations

import collections
import dataclasses
import math
import os
import time
from typing import Mapping

from oslo_log import log as logging

from elastman.hostagent import perfcounters

LOG = logging.getLogger(__name__)

FEATURES = ('lc_run_delay', 'corunner_cpu', 'corunner_bw',
            'corunner_llc_refs', 'corunner_llc_misses', 'lc_llc_refs')
PERF_EVENTS = ('cache_references', 'cache_misses')
_TICK = os.sysconf('SC_CLK_TCK')


@dataclasses.dataclass
class Counters:
    """Cumulative counters of one VM at time ``t``."""

    t: float
    cpu_s: float = 0.0          # user + system CPU time
    run_s: float = 0.0          # time on a CPU (schedstat)
    wait_s: float = 0.0         # runnable, waiting for a CPU (schedstat)
    mbm: dict[int, int] = dataclasses.field(default_factory=dict)
    perf: dict[str, int] = dataclasses.field(default_factory=dict)


def read_threads(pid: int, name: str) -> dict[int, str]:
    """``/proc/<pid>/task/<tid>/<name>`` of each thread of ``pid``, by tid;
    a thread that ends meanwhile is left out.
    """
    found = {}
    for tid in os.listdir('/proc/%d/task' % pid):
        try:
            with open('/proc/%d/task/%s/%s' % (pid, tid, name)) as f:
                found[int(tid)] = f.read()
        except OSError:
            continue
    return found


def read_proc(pid: int) -> tuple[float, float, float]:
    """(CPU seconds, run seconds, run-queue wait seconds) of ``pid``."""
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / _TICK
    run = wait = 0.0
    for schedstat in read_threads(pid, 'schedstat').values():
        parts = schedstat.split()
        run += int(parts[0]) / 1e9
        wait += int(parts[1]) / 1e9
    return cpu, run, wait


class CounterReader:
    """Reads every VM's counters; keeps perf counters open per process."""

    def __init__(self, resctrl=None, use_perf: bool = True) -> None:
        self.resctrl = resctrl
        self.use_perf = use_perf and perfcounters.pmu_available()
        self._perf: dict[int, perfcounters.ProcessCounters | None] = {}

    @property
    def sources(self) -> dict[str, bool]:
        mbm = self.resctrl is not None and self.resctrl.info.mbm_total
        return {'proc': True, 'mbm': bool(mbm), 'pmu': self.use_perf}

    def read(self, vms: Mapping[str, int]) -> dict[str, Counters]:
        """``{vm: Counters}`` for ``{vm: qemu pid}``; a vanished process
        is left out.
        """
        now = time.monotonic()
        out = {}
        for vm, pid in vms.items():
            try:
                cpu, run, wait = read_proc(pid)
            except (OSError, ValueError, IndexError):
                continue
            c = Counters(now, cpu, run, wait)
            if self.sources['mbm']:
                c.mbm = self.resctrl.read_mbm(vm)
            if self.use_perf:
                if pid not in self._perf:
                    self._perf[pid] = perfcounters.open_counters(
                        pid, PERF_EVENTS)
                counters = self._perf[pid]
                if counters is not None:
                    c.perf = counters.read()
            out[vm] = c
        for pid in set(self._perf) - set(vms.values()):
            counters = self._perf.pop(pid)
            if counters is not None:
                counters.close()
        return out

    def close(self) -> None:
        for counters in self._perf.values():
            if counters is not None:
                counters.close()
        self._perf.clear()


@dataclasses.dataclass
class Rates:
    cpu: float                      # CPUs used
    wait_share: float               # of its runnable time
    mbm: dict[int, float]           # bytes/s per node
    perf: dict[str, float]          # events/s


def rates(before: Counters, after: Counters) -> Rates | None:
    dt = after.t - before.t
    if dt <= 0:
        return None
    run = max(0.0, after.run_s - before.run_s)
    wait = max(0.0, after.wait_s - before.wait_s)
    return Rates(
        cpu=max(0.0, after.cpu_s - before.cpu_s) / dt,
        wait_share=wait / (run + wait) if run + wait > 0 else 0.0,
        mbm={n: max(0, after.mbm.get(n, 0) - before.mbm.get(n, 0)) / dt
             for n in after.mbm},
        perf={e: max(0, after.perf.get(e, 0) - before.perf.get(e, 0)) / dt
              for e in after.perf})


class Normaliser:
    """Divides a rate by the largest value seen for its name."""

    def __init__(self) -> None:
        self.peak: dict[str, float] = {}

    def __call__(self, name: str, value: float) -> float:
        peak = max(self.peak.get(name, 0.0), value)
        self.peak[name] = peak
        return value / peak if peak > 0 else 0.0


def features(lc: str, node: int, homes: Mapping[str, int],
             node_cpus: int, r: Mapping[str, Rates],
             norm: Normaliser) -> dict[str, float]:
    """The features of LC VM ``lc`` on ``node`` from every VM's rates;
    features this host cannot measure are left out.
    """
    mine = r.get(lc)
    if mine is None:
        return {}
    others = [v for v in r if v != lc]
    local = [v for v in others if homes.get(v) == node]
    out = {'lc_run_delay': min(1.0, mine.wait_share),
           'corunner_cpu': min(1.0, sum(r[v].cpu for v in local)
                               / max(1, node_cpus))}
    if mine.mbm or any(r[v].mbm for v in others):
        out['corunner_bw'] = norm('corunner_bw', sum(
            r[v].mbm.get(node, 0.0) for v in others))
    if mine.perf:
        out['lc_llc_refs'] = norm('lc_llc_refs',
                                  mine.perf.get('cache_references', 0.0))
        out['corunner_llc_refs'] = norm('corunner_llc_refs', sum(
            r[v].perf.get('cache_references', 0.0) for v in local))
        out['corunner_llc_misses'] = norm('corunner_llc_misses', sum(
            r[v].perf.get('cache_misses', 0.0) for v in local))
    return out


def prior(feats: Mapping[str, float]) -> float:
    """The CPU-wait prior: a drop of ``w / (1 - w)``, at most 1."""
    w = min(0.99, max(0.0, feats.get('lc_run_delay', 0.0)))
    return min(1.0, w / (1.0 - w))


class IndexModel:
    """Hubbub-Scale's linear model of the drop, learnt on this host."""

    def __init__(self, min_pairs: int = 30, max_pairs: int = 2000,
                 baseline_quantile: float = 0.1) -> None:
        self.min_pairs = min_pairs
        self.baseline_quantile = baseline_quantile
        self.pairs: collections.deque = collections.deque(maxlen=max_pairs)
        self._latencies: dict[tuple[str, int], collections.deque] = {}
        self._fit: tuple[tuple[str, ...], list[float]] | None = None
        self._fitted_at = -1

    def _baseline(self, vm: str, rate: float, latency: float) -> float:
        key = (vm, int(math.floor(math.log2(max(rate, 1e-3)))))
        seen = self._latencies.setdefault(key, collections.deque(maxlen=500))
        seen.append(latency)
        ordered = sorted(seen)
        return ordered[int(self.baseline_quantile * (len(ordered) - 1))]

    def observe(self, vm: str, feats: Mapping[str, float],
                latency_ms: float | None, rate: float | None) -> None:
        """A pair of features and the drop the VM showed meanwhile."""
        if latency_ms is None or not rate or not feats:
            return
        base = self._baseline(vm, rate, latency_ms)
        if base <= 0:
            return
        self.pairs.append((dict(feats), max(0.0, latency_ms / base - 1.0)))

    def _refit(self) -> None:
        if len(self.pairs) < self.min_pairs or \
                self._fitted_at == len(self.pairs) and self._fit:
            return
        names = tuple(n for n in FEATURES
                      if all(n in f for f, _ in self.pairs))
        if not names:
            return
        from sklearn.linear_model import LinearRegression
        x = [[f[n] for n in names] for f, _ in self.pairs]
        y = [d for _, d in self.pairs]
        if max(y) - min(y) < 1e-9:
            return
        model = LinearRegression(positive=True, fit_intercept=False)
        model.fit(x, y)
        self._fit = (names, [float(c) for c in model.coef_])
        self._fitted_at = len(self.pairs)

    @property
    def weights(self) -> dict[str, float]:
        return dict(zip(*self._fit)) if self._fit else {}

    def index(self, feats: Mapping[str, float]) -> tuple[float, str]:
        """(index in [0, 1], 'regression' or 'prior')."""
        self._refit()
        if self._fit is not None:
            names, coef = self._fit
            if all(n in feats for n in names):
                value = sum(c * feats[n] for n, c in zip(names, coef))
                return min(1.0, max(0.0, value)), 'regression'
        return prior(feats), 'prior'
