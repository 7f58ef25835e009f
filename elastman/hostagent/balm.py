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
"""BALM: QoS-aware memory-bandwidth allocation for multi-socket hosts (see the
references page: BALM).

The controller keeps latency-critical (LC) VMs within their SLO while giving
best-effort (BE) VMs as much memory bandwidth as it can, combining MBA
throttling (fast, but slows every memory access of the BE VM) with page
migration (slow, but only takes load off the node that needs it).

Colours, per LC VM, from its latency over the window against its SLO: red
above the SLO, yellow within ``yellow_threshold`` below it, green at least
``green_threshold`` below it, grey in between. On yellow or red:

1. phase 1: set the BE VMs, strongest contributors on the victim node first
   (MBM), to the minimum MBA level until the host is grey or green;
2. phase 2, per BE VM in the same order: a 2-D hill climb that raises MBA
   while green and migrates pages away from the victim node otherwise,
   undoing a step that turns another node red (yellow or red with the
   ladder);
3. a round that still ends red counts as a retry; the red round after
   ``max_retries`` retries calls the ``escalate`` callback, whose
   notification may carry a live-migration recommendation (the actuator
   carries it out only with ``[actuator] live_migrate_on_escalation``).

When green for ``reclaim_holdoff`` seconds, throttled VMs get their MBA back
and displaced pages go back towards their BWAP weights, one checked step at
a time. Modes ``mba`` and ``pgm`` are the paper's baselines (MBA only, page
migration only).

The algorithm is written as a generator that yields once per poll, so the
same code runs in the agent (real time) and on the simulator (simulated
time); a step is judged only by samples taken after it.
"""
from __future__ import annotations

import collections
import dataclasses
import math
from typing import Callable, Generator, Iterable, Mapping

from oslo_log import log as logging

from elastman.cassandra import histogram
from elastman.hostagent import bwap
from elastman.hostagent import ladder
from elastman.hostagent.platform import Platform

LOG = logging.getLogger(__name__)

GREEN, GREY, YELLOW, RED = 'green', 'grey', 'yellow', 'red'
RANK = {GREEN: 0, GREY: 1, YELLOW: 2, RED: 3}
SAFE = frozenset({GREEN, GREY})
DANGER = frozenset({YELLOW, RED})
MODES = ('balm', 'mba', 'pgm', 'ladder', 'off')


def colour_of(latency: float, slo: float, yellow: float = 0.05,
              green: float = 0.20) -> str:
    """BALM's four colours for one latency value against its SLO."""
    if latency > slo:
        return RED
    if latency >= slo * (1.0 - yellow):
        return YELLOW
    if latency <= slo * (1.0 - green):
        return GREEN
    return GREY


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, math.ceil(pct / 100.0 * len(ordered)) - 1))
    return ordered[k]


@dataclasses.dataclass
class Evaluation:
    colour: str
    victims: frozenset[int]
    per_node: dict[int, str]
    ready: bool = True
    latency: dict[str, float] = dataclasses.field(default_factory=dict)


class SloMonitor:
    """Sliding window of latency samples per LC VM -> colours per node.

    Two kinds of samples: a latency value per poll (``add_sample``; the
    window's ``pct`` percentile of those values is compared with the SLO),
    or the histogram of the requests that completed since the previous poll
    (``add_histogram``, Cassandra's bucket indices; the ``request_pct``
    percentile of every request in the window is compared with the SLO, as
    BALM's monitor keeps all the requests of the last ``window`` seconds).
    A VM with histograms but no request in the window is idle and green.
    """

    def __init__(self, window: float = 3.0, pct: float = 95.0,
                 min_samples: int = 3, yellow: float = 0.05,
                 green: float = 0.20, request_pct: float = 99.0) -> None:
        self.window = window
        self.pct = pct
        self.request_pct = request_pct
        self.min_samples = min_samples
        self.yellow = yellow
        self.green = green
        self._lcs: dict[str, tuple[int, float]] = {}
        self._samples: dict[str, collections.deque] = {}
        self._hist: dict[str, collections.deque] = {}
        self._since = -math.inf

    def register(self, vm: str, node: int, slo_ms: float) -> None:
        self._lcs[vm] = (node, slo_ms)
        self._samples.setdefault(vm, collections.deque())
        self._hist.setdefault(vm, collections.deque())

    def unregister(self, vm: str) -> None:
        self._lcs.pop(vm, None)
        self._samples.pop(vm, None)
        self._hist.pop(vm, None)

    @property
    def vms(self) -> dict[str, tuple[int, float]]:
        return dict(self._lcs)

    def _keep(self, q: collections.deque | None, t: float, item) -> None:
        """Append ``(t, item)`` to a registered VM's window ``q``, dropping
        what is older than the window.
        """
        if q is None:
            return
        q.append((t, item))
        while q and q[0][0] < t - self.window:
            q.popleft()

    def add_sample(self, vm: str, t: float, latency_ms: float) -> None:
        self._keep(self._samples.get(vm), t, latency_ms)

    def add_histogram(self, vm: str, t: float,
                      counts: Mapping[int, int]) -> None:
        """The requests of one poll: ``{bucket index: count}`` (microsecond
        buckets of Cassandra's latency histograms).
        """
        self._keep(self._hist.get(vm), t, counts)

    def request_rate(self, vm: str, t: float) -> float | None:
        """Reads per second in the window (histogram samples only)."""
        polls = [c for (ts, c) in self._hist.get(vm, ()) if ts > t - self.window]
        if not polls:
            return None
        return sum(sum(c.values()) for c in polls) / self.window

    def mark_change(self, t: float) -> None:
        """Forget samples taken before a reconfiguration at time ``t``."""
        self._since = t

    def _latency(self, vm: str, lo: float) -> tuple[bool, float | None]:
        """(enough samples, latency in ms or None when idle) since ``lo``."""
        polls = [c for (ts, c) in self._hist.get(vm, ()) if ts > lo]
        if polls:
            if len(polls) < self.min_samples:
                return False, None
            merged: collections.Counter = collections.Counter()
            for counts in polls:
                merged.update(counts)
            micros = histogram.quantile(merged, self.request_pct / 100.0)
            return True, None if micros is None else micros / 1000.0
        vals = [v for (ts, v) in self._samples.get(vm, ()) if ts > lo]
        if len(vals) < self.min_samples:
            return False, None
        return True, percentile(vals, self.pct)

    def evaluate(self, t: float) -> Evaluation:
        lo = max(t - self.window, self._since)
        per_node: dict[int, str] = {}
        lat: dict[str, float] = {}
        ready = True
        for vm, (node, slo) in self._lcs.items():
            enough, value = self._latency(vm, lo)
            if not enough:
                ready = False
                continue
            if value is None:           # idle: nothing to protect
                per_node.setdefault(node, GREEN)
                continue
            lat[vm] = value
            c = colour_of(lat[vm], slo, self.yellow, self.green)
            if RANK[c] > RANK[per_node.get(node, GREEN)]:
                per_node[node] = c
            else:
                per_node.setdefault(node, c)
        colour = max(per_node.values(), key=RANK.get) if per_node else GREEN
        victims = frozenset(n for n, c in per_node.items() if c in DANGER)
        return Evaluation(colour, victims, per_node, ready, lat)


@dataclasses.dataclass
class BalmConfig:
    mode: str = 'balm'
    settle_time: float = 0.1
    mba_min: int = 10
    mba_step: int = 10
    max_retries: int = 3
    batch_bytes: float = 256 * 2 ** 20
    reclaim_holdoff: float = 10.0
    max_batches: int = 10000
    # colours in which phase 2 raises MBA: green only (the paper's text) is
    # more careful than grey-or-green (its pseudo-code)
    raise_on: frozenset = frozenset({GREEN})
    # the CPU quota rung: lowest share of the placement quota, and its step
    cpu_min: float = 0.1
    cpu_step: float = 0.1
    # green seconds before pages move back (None: reclaim_holdoff); the
    # ladder waits longer for its most expensive undo
    page_reclaim_holdoff: float | None = None
    escalation_interval: float = 30.0
    # enabled rungs (None: those of ``mode``, see ladder.MODE_RUNGS)
    rungs: tuple | None = None

    @property
    def enabled(self) -> tuple[str, ...]:
        if self.rungs is not None:
            return ladder.ordered(self.rungs)
        return ladder.MODE_RUNGS[self.mode]

    @classmethod
    def from_conf(cls, group) -> 'BalmConfig':
        return cls(mode=group.mode, settle_time=group.settle_time,
                   mba_min=group.mba_min, mba_step=group.mba_step,
                   max_retries=group.max_retries,
                   batch_bytes=group.migration_batch_mb * 2 ** 20,
                   reclaim_holdoff=group.reclaim_holdoff,
                   cpu_min=group.cpu_quota_min,
                   cpu_step=group.cpu_quota_step,
                   page_reclaim_holdoff=(group.page_reclaim_holdoff
                                         if group.mode == 'ladder' else None),
                   escalation_interval=group.escalation_interval,
                   rungs=tuple(group.ladder) if group.mode == 'ladder'
                   else None)


class CannotFixSLOViolation(Exception):
    """Raised into the escalate callback's argument after MAXRETRIES."""


@dataclasses.dataclass
class Stats:
    mba_steps: int = 0
    batches: int = 0
    bytes_moved: float = 0.0
    rollbacks: int = 0
    escalations: int = 0
    rounds: int = 0
    cpu_steps: int = 0
    repins: int = 0
    cost_ms: float = 0.0


class BalmController:
    """Drive with :meth:`tick` once per poll; the BE set may change anytime.

    Mode ``balm`` is the paper's controller (MBA, then page migration);
    ``ladder`` walks every rung of :mod:`elastman.hostagent.ladder` in cost
    order: the cheapest throttle the host has (MBA, else CPU quota) in phase
    1, and in phase 2 a vCPU re-pin before any page is moved. ``events``
    keeps the latest colour changes and actions with their times.
    """

    def __init__(self, platform: Platform, monitor: SloMonitor,
                 config: BalmConfig | None = None,
                 escalate: Callable[[dict], None] | None = None) -> None:
        self.platform = platform
        self.monitor = monitor
        self.cfg = config or BalmConfig()
        if self.cfg.mode not in MODES:
            raise ValueError('unknown BALM mode %r' % self.cfg.mode)
        self.rungs = self.cfg.enabled
        self._escalate = escalate
        self.best_effort: list[str] = []
        self.stats = Stats()
        self.last: Evaluation | None = None
        self.state = 'idle'
        self.events: collections.deque = collections.deque(maxlen=500)
        self._gen: Generator | None = None
        self._hold_yellow = False
        self._green_since: float | None = None
        self._last_escalation = -math.inf
        self._pin_tried: set[str] = set()

    # driving ---------------------------------------------------------------
    def set_best_effort(self, vms: Iterable[str]) -> None:
        self.best_effort = list(vms)

    def tick(self) -> None:
        if self.cfg.mode == 'off':
            return
        if self._gen is None:
            self._gen = self._main()
        next(self._gen)

    def _now(self) -> float:
        return self.platform.now()

    def _event(self, kind: str, **info) -> None:
        self.events.append(dict(t=self._now(), kind=kind, **info))

    def _poll(self) -> Generator[None, None, Evaluation]:
        """Wait one poll and evaluate."""
        yield
        ev = self.monitor.evaluate(self._now())
        if ev.ready and (self.last is None or not self.last.ready
                         or ev.colour != self.last.colour):
            self._event('colour', colour=ev.colour,
                        victims=sorted(ev.victims), latency=dict(ev.latency))
        self.last = ev
        return ev

    def _settle(self) -> Generator[None, None, Evaluation]:
        """After a change: wait settle_time and enough fresh samples."""
        start = self._now()
        self.monitor.mark_change(start)
        while True:
            ev = yield from self._poll()
            if ev.ready and self._now() - start >= self.cfg.settle_time - 1e-9:
                return ev

    # main loop (Algorithm 1) ---------------------------------------------
    def _main(self) -> Generator[None, None, None]:
        retries = 0
        while True:
            ev = yield from self._poll()
            if not ev.ready:
                continue
            if ev.colour == YELLOW and self._hold_yellow:
                continue
            self._hold_yellow = False
            if ev.colour in DANGER:
                self._green_since = None
                self.stats.rounds += 1
                self.state = 'healing'
                ev = yield from self._heal(ev)
                self.state = 'idle'
                if ev.colour == RED:
                    retries += 1
                    if retries > self.cfg.max_retries:
                        self._do_escalate(ev, retries)
                        retries = 0
                else:
                    retries = 0
                    self._hold_yellow = ev.colour == YELLOW
                continue
            if ev.colour != GREEN:
                self._green_since = None
                continue
            if self._green_since is None:
                self._green_since = self._now()
            if self._now() - self._green_since >= self.cfg.reclaim_holdoff:
                self.state = 'reclaiming'
                ok = yield from self._reclaim_step()
                self.state = 'idle'
                if not ok:
                    self._green_since = None

    def _do_escalate(self, ev: Evaluation, retries: int) -> None:
        if self._now() - self._last_escalation < self.cfg.escalation_interval:
            return
        self._last_escalation = self._now()
        self.stats.escalations += 1
        info = {'reason': 'cannot fix SLO violation',
                'victim_nodes': sorted(ev.victims), 'latency_ms': ev.latency,
                'retries': retries,
                'best_effort': {vm: {'mba': self.platform.get_mba(vm),
                                     'cpu_share':
                                         self.platform.get_cpu_share(vm),
                                     'home': self.platform.home_node(vm)}
                                for vm in self.best_effort}}
        if 'live_migration' in self.rungs:
            # the last rung: move the strongest contributor off the host (or
            # the victim itself when nothing else runs here)
            ordered = self.order_by_bandwidth(ev.victims)
            target = ordered[0] if ordered else (
                sorted(ev.latency, key=ev.latency.get)[-1]
                if ev.latency else None)
            if target is not None:
                info['recommendation'] = {
                    'action': 'live_migration', 'server_id': target,
                    'cost_ms': ladder.step_cost('live_migration')}
                self.stats.cost_ms += ladder.step_cost('live_migration')
                self._event('action', rung='live_migration', vm=target)
        LOG.warning('BALM escalates after %d red rounds: %s', retries, info)
        if self._escalate is not None:
            try:
                self._escalate(info)
            except Exception:  # noqa: BLE001
                LOG.exception('escalation callback failed')

    # the throttles ------------------------------------------------------------
    def _throttles(self, vm: str) -> list[str]:
        """Throttle rungs this host has for ``vm``, cheapest first."""
        out = []
        if 'mba' in self.rungs and self.platform.has_mba():
            out.append('mba')
        if 'cpu_quota' in self.rungs and \
                self.platform.get_cpu_share(vm) is not None:
            out.append('cpu_quota')
        return out

    def _level(self, rung: str, vm: str) -> float:
        if rung == 'mba':
            return float(self.platform.get_mba(vm))
        return 100.0 * self.platform.get_cpu_share(vm)

    def _bounds(self, rung: str) -> tuple[float, float]:
        """(lowest level, step) in percent."""
        if rung == 'mba':
            return float(self.cfg.mba_min), float(self.cfg.mba_step)
        return 100.0 * self.cfg.cpu_min, 100.0 * self.cfg.cpu_step

    def _set(self, rung: str, vm: str, level: float) -> None:
        self.stats.cost_ms += ladder.step_cost(rung)
        if rung == 'mba':
            self.stats.mba_steps += 1
            self.platform.set_mba(vm, int(round(level)))
        else:
            self.stats.cpu_steps += 1
            self.platform.set_cpu_share(vm, level / 100.0)
        self._event('action', rung=rung, vm=vm, level=level)

    def _set_mba(self, vm: str, level: int) -> None:
        self._set('mba', vm, level)

    # healing ---------------------------------------------------------------
    def order_by_bandwidth(self, victims: Iterable[int]) -> list[str]:
        """BE VMs by their traffic on the victim node(s), largest first."""
        victims = set(victims)

        def traffic(vm: str) -> float:
            bw = self.platform.node_bandwidth(vm)
            return sum(bw.get(n, 0.0) for n in victims)
        return sorted(self.best_effort, key=traffic, reverse=True)

    def _heal(self, ev: Evaluation) -> Generator[None, None, Evaluation]:
        ordered = self.order_by_bandwidth(ev.victims)
        if not ordered:
            return ev
        victims = ev.victims
        if not any(self._throttles(vm) for vm in ordered):
            # page migration alone (pgm, or a ladder without throttles)
            for vm in ordered:
                src, dst = self._direction(vm, victims)
                if src is None:
                    continue
                ev, _ = yield from self._migrate_until(vm, src, dst, SAFE, ev)
                if ev.colour in SAFE:
                    break
            return ev
        # phase 1: fix it now, each throttle to its most restrictive level,
        # cheapest throttle first
        for rung in ('mba', 'cpu_quota'):
            for vm in ordered:
                if rung not in self._throttles(vm):
                    continue
                low, _ = self._bounds(rung)
                if self._level(rung, vm) > low:
                    self._set(rung, vm, low)
                    ev = yield from self._settle()
                if ev.colour in SAFE:
                    break
            if ev.colour in SAFE:
                break
        # phase 2: 2-D hill climbing, one BE VM at a time
        self._pin_tried = set()
        for vm in ordered:
            ev = yield from self._climb(vm, victims, ev)
        return ev

    def _next_raise(self, vm: str) -> str | None:
        """The throttle to release next: the last one applied first."""
        for rung in reversed(self._throttles(vm)):
            if self._level(rung, vm) < 100.0 - 1e-9:
                return rung
        return None

    def _direction(self, vm: str, victims) -> tuple[int | None, int | None]:
        """(src, dst) for moving ``vm``'s pages away from the victim node."""
        if 'page_migration' not in self.rungs:
            return None, None
        if len(victims) != 1:
            return None, None  # several sockets in danger: MBA only
        victim = next(iter(victims))
        allowed = [n for n in self.platform.allowed_nodes(vm) if n != victim]
        if not allowed:
            return None, None
        home = self.platform.home_node(vm)
        if victim != home and home in allowed:
            return victim, home  # inbound: pull pages back to the BE's node
        bw = self.platform.bandwidth_matrix()
        # outbound: to the node with the best bandwidth towards the BE
        return victim, max(allowed, key=lambda n: bw[n][home])

    def _pin_target(self, vm: str, victims, ev: Evaluation) -> int | None:
        """Where re-pinning ``vm``'s vCPUs takes load off the victim and
        hurts nobody (Merlin's checks), or None.
        """
        if 'vcpu_pin' not in self.rungs or vm in self._pin_tried or \
                len(victims) != 1 or not self.platform.can_repin(vm):
            return None
        victim = next(iter(victims))
        if self.platform.home_node(vm) != victim:
            return None
        dist = self.platform.page_distribution(vm)
        best = None
        for node in self.platform.cpu_nodes():
            if node == victim or ev.per_node.get(node, GREEN) != GREEN:
                continue
            if dist.get(node, 0.0) < dist.get(victim, 0.0):
                continue        # its memory would stay behind: sensitive
            if best is None or dist.get(node, 0.0) > dist.get(best, 0.0):
                best = node
        return best

    def _repin(self, vm: str, node: int, victims, ev: Evaluation
               ) -> Generator[None, None, tuple[Evaluation, bool]]:
        """Move ``vm``'s vCPUs to ``node``; undone when it hurts another
        node. Returns (evaluation, kept).
        """
        self._pin_tried.add(vm)
        old = self.platform.home_node(vm)
        before = ev
        self.platform.repin(vm, node)
        self.stats.repins += 1
        self.stats.cost_ms += ladder.step_cost('vcpu_pin')
        self._event('action', rung='vcpu_pin', vm=vm, node=node)
        ev = yield from self._settle()
        if self._hurt(before, ev, victims) or RANK[ev.colour] > \
                RANK[before.colour]:
            self.stats.rollbacks += 1
            self.platform.repin(vm, old)
            self._event('undo', rung='vcpu_pin', vm=vm, node=old)
            ev = yield from self._settle()
            return ev, False
        return ev, True

    def _climb(self, vm: str, victims, ev: Evaluation
               ) -> Generator[None, None, Evaluation]:
        """Phase 2 for one BE VM.

        The throttles go up one step at a time while the host stays green.
        When a step leaves green, it is undone (the throttle stays active
        while the VM is relocated, as in the paper) and the VM is relocated
        away from the victim node, cheapest rung first: its vCPUs once (the
        ladder), then 1, 2, 4, ... page batches per failed step; then the
        step is tried again. Without a relocation rung (MBA only) the
        throttle stays at its last non-red level.
        """
        burst = 1
        while True:
            rung = self._next_raise(vm)
            if rung is None:
                return ev
            src, dst = self._direction(vm, victims)
            target = self._pin_target(vm, victims, ev)
            if ev.colour not in self.cfg.raise_on:
                # not green at the current level: make room by relocating
                if target is not None:
                    ev, kept = yield from self._repin(vm, target, victims, ev)
                    continue
                if src is None:
                    return ev
                ev, moved = yield from self._migrate_until(
                    vm, src, dst, self.cfg.raise_on, ev)
                if ev.colour not in self.cfg.raise_on:
                    return ev
                continue
            before = ev
            old = self._level(rung, vm)
            _, step = self._bounds(rung)
            self._set(rung, vm, min(100.0, old + step))
            ev = yield from self._settle()
            if ev.colour in self.cfg.raise_on and \
                    not self._hurt(before, ev, victims):
                burst = 1
                continue
            if src is None and target is None:
                if ev.colour == RED or self._hurt(before, ev, victims):
                    self.stats.rollbacks += 1
                    self._set(rung, vm, old)
                    ev = yield from self._settle()
                return ev
            self.stats.rollbacks += 1
            self._set(rung, vm, old)
            ev = yield from self._settle()
            if target is not None:
                ev, kept = yield from self._repin(vm, target, victims, ev)
                continue
            ev, moved = yield from self._migrate_until(
                vm, src, dst, (), ev, max_batches=burst)
            if moved <= 0:
                return ev
            burst *= 2

    def _hurt(self, before: Evaluation, after: Evaluation, victims) -> bool:
        """Repercussion check: a node other than the victims turned red (the
        paper's BALM), or yellow or red (the ladder).
        """
        bad = DANGER if self.cfg.mode == 'ladder' else frozenset({RED})
        return any(c in bad and before.per_node.get(n) not in bad
                   and n not in victims for n, c in after.per_node.items())

    def _new_red(self, before: Evaluation, after: Evaluation, victims) -> bool:
        return any(c == RED and before.per_node.get(n) != RED
                   and n not in victims for n, c in after.per_node.items())

    def _migrate_until(self, vm: str, src: int, dst: int, goal,
                       ev: Evaluation, max_batches: int | None = None
                       ) -> Generator[None, None, tuple[Evaluation, float]]:
        """Move batches src->dst until the colour is in ``goal``, no pages
        are left or ``max_batches`` moved; returns (evaluation, bytes moved).
        A batch that hurts another node is moved back.
        """
        limit = self.cfg.max_batches if max_batches is None else max_batches
        batches = 0
        total = 0.0
        while batches < limit and (max_batches is not None
                                   or ev.colour not in goal):
            before = ev
            moved = self.platform.migrate(vm, src, dst, self.cfg.batch_bytes)
            if moved <= 0:
                self._event('refused', rung='page_migration', vm=vm,
                            src=src, dst=dst,
                            error=getattr(self.platform, 'last_error', None))
                break
            batches += 1
            total += moved
            self._count_batch(vm, src, dst, moved)
            while self.platform.migration_busy(vm):
                yield
            ev = yield from self._settle()
            if self._hurt(before, ev, {src}):
                self.stats.rollbacks += 1
                self.platform.migrate(vm, dst, src, moved)
                while self.platform.migration_busy(vm):
                    yield
                ev = yield from self._settle()
                total -= moved
                break
        return ev, total

    def _count_batch(self, vm: str, src: int, dst: int, moved: float) -> None:
        self.stats.batches += 1
        self.stats.bytes_moved += moved
        self.stats.cost_ms += ladder.step_cost('page_migration', moved)
        self._event('action', rung='page_migration', vm=vm, src=src,
                    dst=dst, bytes=moved)

    # reclaiming when green -------------------------------------------------
    def _reclaim_step(self) -> Generator[None, None, bool]:
        """One checked step back towards no throttle and BWAP weights.

        Throttles are released first (cheap to undo); pages move back only
        after ``page_reclaim_holdoff`` s of green. Returns False when the
        step had to be undone (or nothing to do).
        """
        for vm in sorted(self.best_effort,
                         key=lambda v: min([self._level(r, v) for r in
                                            self._throttles(v)] or [100.0])):
            rung = self._next_raise(vm)
            if rung is not None:
                old = self._level(rung, vm)
                _, step = self._bounds(rung)
                self._set(rung, vm, min(100.0, old + step))
                ev = yield from self._settle()
                if ev.colour in DANGER:
                    self._set(rung, vm, old)
                    yield from self._settle()
                    return False
                return True
        holdoff = self.cfg.page_reclaim_holdoff
        if holdoff is None:
            holdoff = self.cfg.reclaim_holdoff
        if 'page_migration' not in self.rungs or self._green_since is None \
                or self._now() - self._green_since < holdoff:
            return True
        for vm in self.best_effort:
            moves = self._moves_back(vm)
            if not moves:
                continue
            src, dst, amount = moves[0]
            moved = self.platform.migrate(vm, src, dst, amount)
            if moved <= 0:
                continue
            self._count_batch(vm, src, dst, moved)
            while self.platform.migration_busy(vm):
                yield
            ev = yield from self._settle()
            if ev.colour in DANGER:
                self.platform.migrate(vm, dst, src, moved)
                while self.platform.migration_busy(vm):
                    yield
                yield from self._settle()
                return False
            return True
        return False

    def _moves_back(self, vm: str) -> list[tuple[int, int, float]]:
        dist = self.platform.page_distribution(vm)
        total = sum(dist.values())
        if total <= 0:
            return []
        target = {n: w * total
                  for n, w in self.platform.target_weights(vm).items()}
        moves = bwap.plan_moves(dist, target, self.cfg.batch_bytes)
        # ignore residues smaller than a tenth of a batch
        return [m for m in moves if m[2] >= self.cfg.batch_bytes / 10]
