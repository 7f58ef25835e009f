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
"""A discrete-time model of a Cassandra cluster under a scaling policy.

One step is one minute. Each VM has a capacity surface: utilisation
``u = (reads/R + writes/W + size/S) / f`` where ``f`` is the product of its
flavour factor, a per-VM factor (hardware lottery), interference episodes
(capacity drops of 20-40% for an hour or two) and the streaming penalty while
the cluster bootstraps, cleans up or decommissions. Load is spread over the
serving VMs by their token share (imbalance: lognormal weights); writes reach
``RF`` replicas, reads one (consistency ONE), by token share or, with
``read_routing`` ``capacity``, by token share times capacity factor.
Per-VM p99 read latency follows an M/M/1-like curve that meets the SLO
exactly at ``u = 1`` (``p99 = SLO (1 - rho) / (1 - rho u)``, capped at 50x
the SLO) with lognormal noise; the cluster's p99 is the 99th percentile of
the mixture of the VMs' exponential latency tails, weighted by their read
share.

A VM joins after boot + bootstrap (with jitter) and counts only once serving
(``UN``); cleanup then runs on the older VMs, or, for a scale-out that
defers it (``Action.defer_cleanup``, as the actuator's executor does with
``cleanup = before_removal``), on those of them that stay when the next
removal starts, before the removed VMs begin to leave. ``join_slots`` bounds how many
VMs of a cluster join at once: 0 lets every VM of a scale-out join in
parallel; 1 joins them in a row, as the actuator's executor does (Cassandra
refuses a bootstrap while another node bootstraps, ``tools/bench_joins.py``):
each VM is created, and billed, when the one before it serves. A removed VM
keeps serving while it decommissions and is billed until it is gone.
``removal_slots`` bounds how many VMs of a scale-in leave at once: 0 lets
them all decommission together; 1 removes them in a row, as the executor
does, and the VMs not yet begun keep serving and can be kept
(:meth:`SimCluster.keep`).

Everything random comes from the seed: the properties of the k-th VM a
cluster creates (share weight, capacity factor, join jitter, interference
episodes) are the same under every policy, so policies face the same
hardware; latency noise is seeded per policy.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Sequence
import zlib

import numpy as np

from elastman.evaluation.traces import Hardware
from elastman.evaluation.traces import Trace

JOINING, SERVING, LEAVING, GONE = 1, 2, 3, 0
BLOCK = 1024

#: How a read reaches one of its replicas. ``token``: each VM serves the
#: reads of its token share whatever its speed, as with a client whose driver
#: does not look at a replica's speed (the Python, C++ and Ruby drivers'
#: default policies). ``capacity``: in proportion to token share times
#: capacity factor, as the DataStax Java driver 4's default policy spreads
#: them on three real nodes (``tools/bench_read_routing.py``). Writes reach
#: every replica either way.
READ_ROUTING = ('token', 'capacity')


def read_shares(weights: np.ndarray, factors: np.ndarray,
                routing: str) -> np.ndarray:
    """Each VM's share of the reads (along the first axis) from its token
    weight and its capacity factor now, by ``routing`` (:data:`READ_ROUTING`).
    """
    w = weights * factors if routing == 'capacity' else weights
    return w / np.maximum(w.sum(axis=0), 1e-12)


@dataclasses.dataclass(frozen=True)
class Flavor:
    name: str
    factor: float = 1.0          # capacity relative to the nominal VM
    cost: float = 1.0            # price per VM-hour


@dataclasses.dataclass(frozen=True)
class SimConfig:
    """Timings and noise of the simulated cluster."""

    slo_ms: float = 35.0
    rho: float = 0.9                 # latency curve: p99(0) = SLO (1 - rho)
    latency_noise: float = 0.08      # lognormal sigma of a VM's p99 per minute
    size_noise: float = 0.25         # lognormal sigma of a VM's mean request size per minute
    imbalance: float = 0.10          # lognormal sigma of token-share weights
    vm_spread: float = 0.04          # lognormal sigma of per-VM capacity factor
    boot_s: float = 120.0
    bootstrap_s: float = 480.0
    join_jitter: float = 0.2         # +- fraction of boot + bootstrap
    cleanup_s: float = 300.0
    join_slots: int = 0              # VMs joining at once; 0: no limit
    removal_slots: int = 0           # VMs leaving at once; 0: no limit
    decommission_s: float = 600.0
    streaming_penalty: float = 0.9   # capacity factor while streaming/cleaning
    interference_per_day: float = 0.1  # episodes per VM per day
    interference_drop: tuple[float, float] = (0.2, 0.4)
    interference_minutes: float = 60.0  # mean episode length
    seeds: int = 3                   # the first VMs are Cassandra seeds
    #: when elastman's forecast is made: as the service's predictor makes
    #: it, or at each decision from the control period just ended
    #: (policies.elastman.FORECAST_AT)
    forecast_at: str = 'grid'
    #: how the reads reach the replicas (:data:`READ_ROUTING`)
    read_routing: str = 'token'
    hardware: Hardware = Hardware()

    def __post_init__(self) -> None:
        if self.read_routing not in READ_ROUTING:
            raise ValueError('read_routing %r: one of %s'
                             % (self.read_routing, ', '.join(READ_ROUTING)))

    @property
    def join_s(self) -> float:
        return self.boot_s + self.bootstrap_s


class Lottery:
    """Deterministic properties of the k-th VM a cluster creates."""

    def __init__(self, seed: int, cfg: SimConfig, horizon_s: float) -> None:
        self.seed, self.cfg, self.horizon_s = int(seed), cfg, float(horizon_s)
        self._blocks: dict[int, dict[str, np.ndarray]] = {}
        self._episodes: dict[int, list[tuple[float, float, float]]] = {}

    def _block(self, b: int) -> dict[str, np.ndarray]:
        if b not in self._blocks:
            rng = np.random.default_rng([self.seed, 5, b])
            c = self.cfg
            self._blocks[b] = {
                'g': np.exp(rng.normal(0, c.imbalance, BLOCK)),
                'f': np.exp(rng.normal(0, c.vm_spread, BLOCK)),
                'jitter': rng.uniform(-c.join_jitter, c.join_jitter, BLOCK)}
        return self._blocks[b]

    def props(self, k: int) -> tuple[float, float, float]:
        blk = self._block(k // BLOCK)
        i = k % BLOCK
        return float(blk['g'][i]), float(blk['f'][i]), float(blk['jitter'][i])

    def episodes(self, k: int) -> list[tuple[float, float, float]]:
        """(start_s, end_s, factor) capacity drops of VM ``k``."""
        if k not in self._episodes:
            c = self.cfg
            rng = np.random.default_rng([self.seed, 6, k])
            n = rng.poisson(c.interference_per_day * self.horizon_s / 86400.0)
            starts = np.sort(rng.uniform(0, self.horizon_s, n))
            lengths = rng.exponential(c.interference_minutes * 60.0, n)
            drops = rng.uniform(*c.interference_drop, n)
            self._episodes[k] = [(float(s), float(s + ln), float(1 - d))
                                 for s, ln, d in zip(starts, lengths, drops)]
        return self._episodes[k]


@dataclasses.dataclass
class Action:
    """What a policy asks for at a control point."""

    add: int = 0
    flavor: str | None = None
    remove: list[int] = dataclasses.field(default_factory=list)   # node ordinals
    reason: str = ''
    serialised: bool = True
    #: a scale-out leaves the old VMs' cleanup to the next removal
    defer_cleanup: bool = False
    #: VMs the scale-out in flight no longer creates (of those still queued)
    trim: int = 0
    #: node ordinals the scale-in in flight no longer removes
    keep: list[int] = dataclasses.field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.add and not self.remove and not self.trim and not self.keep


@dataclasses.dataclass
class ActionRecord:
    t: float
    kind: str
    flavor: str | None
    count: int
    done_at: float
    reason: str


class SimCluster:
    """The simulated cluster one policy manages."""

    def __init__(self, trace: Trace, cfg: SimConfig, flavors: Sequence[Flavor],
                 initial: dict[str, int], seed: int, noise_key: str) -> None:
        self.trace, self.cfg = trace, cfg
        self.flavors = list(flavors)
        self.flavor_index = {f.name: i for i, f in enumerate(self.flavors)}
        self.flavor_factor = np.array([f.factor for f in self.flavors])
        self.lottery = Lottery(seed, cfg, trace.duration_s)
        self.rng = np.random.default_rng([int(seed), 9, zlib.crc32(noise_key.encode())])
        self.t = 0.0
        self.minute = 0
        n0 = 64
        self.ordinal = np.full(n0, -1, dtype=np.int64)
        self.state = np.zeros(n0, dtype=np.int8)
        self.flavor = np.zeros(n0, dtype=np.int64)
        self.g = np.ones(n0)
        self.f0 = np.ones(n0)
        self.ready_at = np.zeros(n0)
        self.start_at = np.zeros(n0)       # created (and billed) from
        self.done_at = np.zeros(n0)
        self.stream_until = np.zeros(n0)
        self.leave_at = np.zeros(n0)       # a removal's VM leaves from (after a cleanup)
        self.defer = np.zeros(n0, dtype=bool)   # joined by a deferring scale-out
        self.cleanup_pending: set[int] = set()  # ordinals of VMs owing a cleanup
        self.seed_flag = np.zeros(n0, dtype=bool)
        self.interference = np.ones(n0)
        self.slot_of: dict[int, int] = {}
        self.next_ordinal = 0
        self._ep_node: list[int] = []
        self._ep: list[tuple[float, float, float]] = []
        self._ep_arr: tuple[np.ndarray, ...] | None = None
        self.actions: list[ActionRecord] = []
        #: trims of a scale-out in flight (not actions: they start none)
        self.trims: list[ActionRecord] = []
        self.last_action_done: float | None = None
        self._busy_until = -1.0
        self.join_free = np.zeros(max(cfg.join_slots, 0))   # per join slot
        # observations of the current minute (per slot) and of the period
        self.obs_reads = np.zeros(n0)
        self.obs_writes = np.zeros(n0)
        self.obs_p99 = np.zeros(n0)
        self.obs_cpu = np.zeros(n0)
        self.obs_size = np.zeros(n0)
        self.acc = np.zeros((4, n0))
        self.acc_n = np.zeros(n0)
        self.period_reads: list[float] = []
        self.period_writes: list[float] = []
        self._period_tot = [0.0, 0.0, 0]
        for name, count in initial.items():
            self._create(name, count, ready=True)

    # -- membership --------------------------------------------------------

    def _grow(self) -> None:
        n = len(self.state) * 2
        for attr in ('ordinal', 'state', 'flavor', 'g', 'f0', 'ready_at', 'start_at',
                     'done_at',
                     'stream_until', 'leave_at', 'defer', 'seed_flag',
                     'interference', 'obs_reads',
                     'obs_writes', 'obs_p99', 'obs_cpu', 'obs_size', 'acc_n'):
            old = getattr(self, attr)
            new = np.zeros(n, dtype=old.dtype)
            if attr == 'ordinal':
                new[:] = -1
            if attr == 'interference':
                new[:] = 1.0
            new[:len(old)] = old
            setattr(self, attr, new)
        acc = np.zeros((4, n))
        acc[:, :self.acc.shape[1]] = self.acc
        self.acc = acc

    def _free_slot(self) -> int:
        free = np.flatnonzero(self.state == GONE)
        if free.size == 0:
            self._grow()
            free = np.flatnonzero(self.state == GONE)
        return int(free[0])

    def join_schedule(self, jitter: np.ndarray, t: float | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """When VMs asked for at ``t`` (default: now), in this order and
        with these join jitters, are created and serve, after those already
        joining; and the join slots' free times after them.
        """
        t = self.t if t is None else float(t)
        length = self.cfg.join_s * (1 + np.asarray(jitter, float))
        if not len(self.join_free):
            return np.full(len(length), t), t + length, self.join_free
        if len(self.join_free) == 1:
            start = max(t, float(self.join_free[0])) + np.concatenate(
                [[0.0], np.cumsum(length)[:-1]])
            ready = start + length
            return start, ready, ready[-1:] if len(ready) else self.join_free
        free = self.join_free.copy()
        start, ready = np.empty(len(length)), np.empty(len(length))
        for i, ln in enumerate(length):
            j = int(np.argmin(free))
            start[i] = max(t, free[j])
            ready[i] = free[j] = start[i] + ln
        return start, ready, free

    def _create(self, flavor: str, count: int, ready: bool = False,
                defer_cleanup: bool = False) -> float:
        done = self.t
        if not ready:
            first = self.next_ordinal
            jitter = [self.lottery.props(k)[2] for k in range(first, first + count)]
            starts, readies, self.join_free = self.join_schedule(np.array(jitter))
        for i in range(count):
            k = self.next_ordinal
            self.next_ordinal += 1
            s = self._free_slot()
            g, f, _ = self.lottery.props(k)
            self.ordinal[s], self.flavor[s] = k, self.flavor_index[flavor]
            self.g[s], self.f0[s] = g, f
            self.seed_flag[s] = k < self.cfg.seeds
            self.interference[s] = 1.0
            self.stream_until[s] = self.leave_at[s] = 0.0
            self.defer[s] = defer_cleanup
            self.acc[:, s] = 0.0
            self.acc_n[s] = 0.0
            self.obs_reads[s] = self.obs_writes[s] = self.obs_p99[s] = self.obs_cpu[s] = 0.0
            if ready:
                self.state[s], self.ready_at[s] = SERVING, self.t
                self.start_at[s] = self.t
            else:
                self.state[s] = JOINING
                self.start_at[s], self.ready_at[s] = starts[i], readies[i]
                done = max(done, self.ready_at[s]
                           + (0.0 if defer_cleanup else self.cfg.cleanup_s))
            self.slot_of[k] = s
            for ep in self.lottery.episodes(k):
                if ep[1] > self.t:
                    self._ep_node.append(k)
                    self._ep.append(ep)
            self._ep_arr = None
        return done

    def trim(self, count: int) -> list[int]:
        """Drop up to ``count`` of the VMs a scale-out has queued and not
        created yet, the last queued first; the action then ends when its
        last remaining VM has joined (and cleaned up). The k-th VM created
        keeps its properties: the dropped ordinals are handed out again.
        Returns the ordinals dropped.
        """
        drop = self._queued()[:max(0, count)]
        if not len(drop):
            return []
        dropped = sorted(int(k) for k in self.ordinal[drop])
        for s in drop:
            self.slot_of.pop(int(self.ordinal[s]), None)
        self.state[drop], self.ordinal[drop] = GONE, -1
        if dropped == list(range(self.next_ordinal - len(dropped), self.next_ordinal)):
            self.next_ordinal -= len(dropped)
        gone = set(dropped)
        kept = [(k, ep) for k, ep in zip(self._ep_node, self._ep) if k not in gone]
        self._ep_node, self._ep = [k for k, _ in kept], [ep for _, ep in kept]
        self._ep_arr = None
        joining = np.flatnonzero(self.state == JOINING)
        ready = np.sort(self.ready_at[joining])[::-1]
        slots = len(self.join_free)
        self.join_free = np.array([ready[j] if j < len(ready) else self.t
                                   for j in range(slots)])
        defer = bool(self.defer[joining].all()) if len(joining) else True
        done = max(self.t, float(ready[0]) if len(ready) else self.t) + (
            0.0 if defer else self.cfg.cleanup_s)
        left = len(drop)
        for a in reversed(self.actions[-20:]):
            # the newest records of the action (its top-ups) queued last
            if a.kind == 'scale_out' and a.done_at > self.t:
                taken = min(left, a.count)
                a.count, left = a.count - taken, left - taken
                a.done_at = min(a.done_at, done)
        self._busy_until = done
        return dropped

    def pending_removals(self) -> list[int]:
        """The ordinals of the VMs a scale-in in flight has not begun to
        remove (they serve until their turn), in the order it would.
        """
        slots = np.flatnonzero((self.state == SERVING) & (self.leave_at > self.t))
        return [int(k) for k in self.ordinal[slots[np.argsort(self.leave_at[slots],
                                                              kind='stable')]]]

    def keep(self, ordinals: Sequence[int]) -> list[int]:
        """Keep those of ``ordinals`` the scale-in in flight has not begun
        to remove; the action then ends when its last leaving VM is gone.
        Returns the ordinals kept.
        """
        wanted = set(ordinals)
        kept = [k for k in self.pending_removals() if k in wanted]
        if not kept:
            return []
        slots = [self.slot_of[k] for k in kept]
        self.leave_at[slots], self.done_at[slots] = 0.0, 0.0
        going = np.flatnonzero((self.state == LEAVING) | (self.leave_at > 0))
        done = max([self.t] + [float(self.done_at[s]) for s in going])
        for a in reversed(self.actions[-20:]):
            if a.kind == 'scale_in' and a.done_at > self.t:
                a.count, a.done_at = a.count - len(kept), min(a.done_at, done)
                break
        self._busy_until = done
        return kept

    def _queued(self) -> np.ndarray:
        """Slots of the VMs queued to join and not created yet, the last
        queued first.
        """
        queued = np.flatnonzero((self.state == JOINING) & (self.start_at > self.t))
        return queued[np.argsort(-self.start_at[queued], kind='stable')]

    def queued_ordinals(self) -> list[int]:
        """The ordinals of the VMs a trim would drop, in the order it
        drops them.
        """
        return [int(k) for k in self.ordinal[self._queued()]]

    def apply(self, action: Action, kind_note: str = '') -> None:
        """Start an action now (effective from the next minute)."""
        # less for the action in flight to do: queued VMs dropped, VMs kept
        taken = (self.trim(action.trim) if action.trim else []) + \
            (self.keep(action.keep) if action.keep else [])
        if taken:
            self.trims.append(ActionRecord(self.t, 'trim', self.actions[-1].flavor,
                                           len(taken), self._busy_until, action.reason))
        if action.add > 0:
            flavor = action.flavor or self.flavors[0].name
            done = self._create(flavor, action.add, defer_cleanup=action.defer_cleanup)
            self._record('scale_out', flavor, action.add, done, action.reason,
                         action.serialised)
        removable = [k for k in action.remove
                     if k in self.slot_of and self.state[self.slot_of[k]] == SERVING
                     and not self.leave_at[self.slot_of[k]]]
        if removable:
            # the VMs that stay and owe a cleanup run it first
            stay = [self.slot_of[k] for k in self.cleanup_pending
                    if k in self.slot_of and k not in removable
                    and self.state[self.slot_of[k]] == SERVING]
            self.cleanup_pending.clear()
            start = self.t
            if stay:
                start = self.t + self.cfg.cleanup_s
                self.stream_until[stay] = np.maximum(self.stream_until[stay], start)
            # with removal slots, in waves of that many, one after another
            wave = self.cfg.removal_slots if self.cfg.removal_slots > 0 else len(removable)
            done = start
            for i, k in enumerate(removable):
                s = self.slot_of[k]
                leave = start + (i // wave) * self.cfg.decommission_s
                done = self.done_at[s] = leave + self.cfg.decommission_s
                if leave > self.t:
                    self.leave_at[s] = leave
                else:
                    self.state[s] = LEAVING
            flav = self.flavors[int(self.flavor[self.slot_of[removable[0]]])].name
            self._record('scale_in', flav, len(removable), done, action.reason,
                         action.serialised)

    def _record(self, kind: str, flavor: str | None, count: int, done: float,
                reason: str, serialised: bool) -> None:
        self.actions.append(ActionRecord(self.t, kind, flavor, count, done, reason))
        if serialised:
            self._busy_until = max(self._busy_until, done)

    # -- views for policies ----------------------------------------------

    @property
    def in_flight(self) -> bool:
        return self.t < self._busy_until

    def serving_slots(self) -> np.ndarray:
        return np.flatnonzero(self.state == SERVING)

    def sampled_slots(self) -> np.ndarray:
        """The VMs a monitor reads: serving, and leaving (a decommissioning
        node serves its share until it is gone).
        """
        return np.flatnonzero((self.state == SERVING) | (self.state == LEAVING))

    def count(self, *states: int) -> int:
        return int(np.isin(self.state, states).sum())

    @property
    def vms(self) -> int:
        """VMs billed now (created and joining, serving, leaving)."""
        queued = (self.state == JOINING) & (self.start_at > self.t)
        return int((self.state != GONE).sum() - queued.sum())

    def period_means(self) -> dict[str, np.ndarray]:
        """Per serving slot: mean reads/s, writes/s, p99, CPU over the period."""
        slots = self.serving_slots()
        n = np.maximum(self.acc_n[slots], 1)
        return {'slots': slots, 'reads': self.acc[0, slots] / n,
                'writes': self.acc[1, slots] / n, 'p99': self.acc[2, slots] / n,
                'cpu': self.acc[3, slots] / n}

    def end_period(self) -> None:
        """Close the control period: its cluster means join the history."""
        r, w, n = self._period_tot
        if n:
            self.period_reads.append(r / n)
            self.period_writes.append(w / n)
        self._period_tot = [0.0, 0.0, 0]

    def reset_period(self) -> None:
        """Start the next period's per-VM means (after the policy read them)."""
        self.acc[:] = 0.0
        self.acc_n[:] = 0.0

    def interference_index(self, slots: np.ndarray) -> np.ndarray:
        """What the host agents report: the drop ``(L_c - L_i) / L_i`` of a
        service time grown ``1 / f`` times by an episode that leaves the
        factor ``f`` of the capacity, ``1 / f - 1``, at most 1 as the agent
        reports it (:mod:`elastman.hostagent.interference`).
        """
        return np.minimum(1.0 / self.interference[slots] - 1.0, 1.0)

    def true_factor(self, slots: np.ndarray) -> np.ndarray:
        """Capacity factor of ``slots`` now (oracle only)."""
        f = self.f0[slots] * self.flavor_factor[self.flavor[slots]] * self.interference[slots]
        streaming = (self.stream_until[slots] > self.t) | (self.state[slots] == LEAVING)
        return np.where(streaming, f * self.cfg.streaming_penalty, f)

    # -- time ---------------------------------------------------------------

    def _lifecycle(self) -> None:
        t = self.t
        leaving = np.flatnonzero((self.leave_at > 0) & (self.leave_at <= t))
        if leaving.size:
            self.state[leaving], self.leave_at[leaving] = LEAVING, 0.0
        joined = np.flatnonzero((self.state == JOINING) & (self.ready_at <= t))
        if joined.size:
            self.state[joined] = SERVING
            old = np.flatnonzero(self.state == SERVING)
            old = old[~np.isin(old, joined)]
            if self.defer[joined].all():
                self.cleanup_pending.update(int(k) for k in self.ordinal[old])
            else:
                self.stream_until[old] = np.maximum(self.stream_until[old],
                                                    t + self.cfg.cleanup_s)
                self.cleanup_pending.difference_update(int(k) for k in self.ordinal[old])
        gone = np.flatnonzero((self.state == LEAVING) & (self.done_at <= t))
        if gone.size:
            self.state[gone] = GONE
            for s in gone:
                self.slot_of.pop(int(self.ordinal[s]), None)
            self.ordinal[gone] = -1
        for a in self.actions[-20:]:
            if a.done_at <= t and (self.last_action_done is None
                                   or a.done_at > self.last_action_done):
                self.last_action_done = a.done_at

    def _interference(self) -> None:
        self.interference[:] = 1.0
        if not self._ep:
            return
        if self._ep_arr is None:
            e = np.array(self._ep)
            self._ep_arr = (np.array(self._ep_node), e[:, 0], e[:, 1], e[:, 2])
        nodes, start, end, fac = self._ep_arr
        active = (start <= self.t) & (end > self.t)
        for k, f in zip(nodes[active], fac[active]):
            s = self.slot_of.get(int(k))
            if s is not None:
                self.interference[s] *= f

    def step(self) -> dict[str, float]:
        """Advance one minute: lifecycle, load, latency, observations."""
        self.t = self.minute * self.trace.step_s
        self._lifecycle()
        self._interference()
        i = self.minute
        hw, cfg = self.cfg.hardware, self.cfg
        serv = np.flatnonzero((self.state == SERVING) | (self.state == LEAVING))
        reads, writes, size = (float(self.trace.reads[i]), float(self.trace.writes[i]),
                               float(self.trace.size[i]))
        share = self.g[serv] / self.g[serv].sum()
        rf = min(hw.replication_factor, len(serv))
        f = self.true_factor(serv)
        read_share = read_shares(self.g[serv], f, cfg.read_routing)
        r_i, w_i = reads * read_share, writes * rf * share
        size_i = size * np.exp(self.rng.normal(0, cfg.size_noise, len(serv)))
        u = (r_i / hw.read_cap + w_i / hw.write_cap + size_i / hw.size_cap) / f
        denom = np.maximum(1 - cfg.rho * u, (1 - cfg.rho) / 50.0)
        p99 = cfg.slo_ms * (1 - cfg.rho) / denom
        p99 = p99 * np.exp(self.rng.normal(0, cfg.latency_noise, len(serv)))
        cpu = np.minimum(u, 1.0) * 100.0
        self.obs_reads[:] = 0
        self.obs_writes[:] = 0
        self.obs_reads[serv], self.obs_writes[serv] = r_i, w_i
        self.obs_size[serv] = size_i
        self.obs_p99[serv], self.obs_cpu[serv] = p99, cpu
        self.acc[0, serv] += r_i
        self.acc[1, serv] += w_i
        self.acc[2, serv] += p99
        self.acc[3, serv] += cpu
        self.acc_n[serv] += 1
        self._period_tot[0] += float(r_i.sum())
        self._period_tot[1] += float(w_i.sum())
        self._period_tot[2] += 1
        agg = aggregate_p99(p99, read_share)
        over = serv[u > 1.0]
        out = {'t': self.t, 'vms': float(self.vms), 'serving': float(len(serv)),
               'load': reads + writes, 'p99': agg,
               'violation': float(agg > cfg.slo_ms),
               'max_u': float(u.max()) if len(u) else 0.0,
               # why a minute violates: the policy's action still in
               # flight, VMs joining, and the overloaded VMs that were in an
               # interference episode or streaming
               'in_flight': float(self.in_flight),
               'joining': float(self.count(JOINING)),
               'over': float(len(over)),
               'over_interfered': float((self.interference[over] < 1.0).sum()),
               'over_streaming': float(((self.stream_until[over] > self.t)
                                        | (self.state[over] == LEAVING)).sum())}
        self.minute += 1
        return out


def aggregate_p99(p99: np.ndarray, weight: np.ndarray, iters: int = 24) -> float:
    """99th percentile of a mixture of exponential tails ``P(L > x) =
    0.01^(x / p99_i)`` weighted by ``weight`` (bisection in log space).
    """
    if p99.size == 0:
        return math.inf
    lo, hi = math.log(float(p99.min())), math.log(float(p99.max()))
    if hi - lo < 1e-9:
        return float(p99.max())
    w = weight / weight.sum()
    k = math.log(0.01) / p99
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if float((w * np.exp(k * math.exp(mid))).sum()) > 0.01:
            lo = mid
        else:
            hi = mid
    return math.exp(0.5 * (lo + hi))


def run(trace: Trace, policy: Any, cfg: SimConfig, flavors: Sequence[Flavor],
        seed: int, control_period_s: float = 300.0) -> dict[str, Any]:
    """Run one policy over the trace; per-minute series and the action log."""
    # libraries that draw from numpy's global generator (a DecisionTreeRegressor
    # without random_state breaks ties at random) must repeat too
    np.random.seed([int(seed), zlib.crc32(policy.name.encode())])
    initial = policy.initial_size(trace, cfg, flavors)
    sim = SimCluster(trace, cfg, flavors, initial, seed, policy.name)
    policy.start(sim)
    every = max(1, int(round(control_period_s / trace.step_s)))
    policy_every = max(1, int(round(getattr(policy, 'period_s', control_period_s)
                                    / trace.step_s)))
    cols: dict[str, list[float]] = {}
    for i in range(len(trace)):
        row = sim.step()
        for k, v in row.items():
            cols.setdefault(k, []).append(v)
        policy.observe(sim)
        period_end = (i + 1) % every == 0
        if period_end:
            sim.end_period()
        if (i + 1) % policy_every == 0:
            act = policy.control(sim)
            if act is not None and not act.empty:
                sim.apply(act)
        if period_end:
            sim.reset_period()
    series = {k: np.asarray(v) for k, v in cols.items()}
    return {'series': series, 'actions': sim.actions, 'trims': sim.trims, 'sim': sim}
