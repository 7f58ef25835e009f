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
"""The oracle's plan: the fewest VMs that keep the cluster p99 under the SLO.

The oracle knows the simulator's whole future: the trace, every VM's token
weight and capacity factor, the join time of every VM it will create and every
interference episode (:class:`~elastman.evaluation.simulator.Lottery`). Each
minute it looks ``hold`` minutes ahead and builds, per VM and minute, the
capacity factor the simulator will apply (flavour x per-VM factor x
interference x the streaming penalty during the cleanup after a join and while
leaving) on the set of VMs that will serve that minute. A minute is safe when
the simulator's own latency law keeps the cluster p99 under the SLO:

    cluster p99 <= SLO  <=>  T = sum_i w_i 0.01^(SLO / p99_i) <= 0.01

(the mixture of the VMs' exponential tails weighted by read share, as
:func:`~elastman.evaluation.simulator.aggregate_p99` computes it). Each VM's
p99 and request size carry independent lognormal noise every minute, so ``T``
is random: a minute is safe when its mean plus ``z`` standard deviations is
under 1% (moments by a 3 x 3 Gauss-Hermite rule over the two noises).

With that test the oracle:

* starts VMs for a minute that would not be safe without them, as late as
  it can without having to start more of them (VMs are created in order and
  it knows each one's join time), and re-checks the minutes its own joins put
  into cleanup;
* replaces a VM ahead of an interference episode that would make the cluster
  unsafe on its own: the VM leaves so that it is gone when the episode starts;
* removes the VMs whose absence keeps every minute of the next ``hold``
  minutes safe (a removal bills for the decommission, a re-add for a join: a
  VM needed again within that time is cheaper kept), with room for a join's
  cleanup: a cluster at the very edge could not take its next VM without a
  burst of others.

``foresee_interference=False`` makes a weaker planner, the bound an online
controller could reach at best: it still knows the load's whole future, every
VM's capacity factor and join time, but an interference episode only once it
has begun (then with its true end, which flatters it). It cannot replace a VM
ahead of an episode; what protects it is ``interference_margin`` ``m``: a
minute is safe only if it stays so when any one VM loses ``m`` of its
capacity at once (an episode drops 20-40%, ``SimConfig.interference_drop``).
Swept over ``m``, its frontier says what an online controller pays for
interference it cannot see coming, with every other uncertainty removed.

``serial=True`` holds the plan to what elastman's executor does: one action
in flight at a time (Cassandra refuses to bootstrap or decommission a node
beside another one that joins or leaves). Nothing starts while an action
runs, so a scale-out also covers the minutes until the VMs of the next one
could serve (its joins and cleanup, then a join), and a removal keeps the
minutes until a scale-out after its decommission could serve (``hold``, as
without it). It is a reference for controllers held to the same rule, not
the bound the other policies are measured against.

When to scale out has two answers, and which costs less depends on the trace:
when a minute would break, or already when a join's cleanup would break it
(``room_to_grow``: fewer bursts on long rises, more VMs held on noisy plateaus).
:func:`best_plan` runs the whole trace with each on a twin of the cluster (the
simulator is deterministic given the seed) and keeps the cheaper plan without
violation minutes. The plan is greedy, minute by minute: 0 violation minutes
is what it is built for (and is tested); its VM-hours are the least these
plans find, not a proven optimum.

Nothing here changes the simulator: the oracle only reads it.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from elastman.evaluation.simulator import Action
from elastman.evaluation.simulator import JOINING
from elastman.evaluation.simulator import LEAVING
from elastman.evaluation.simulator import read_shares
from elastman.evaluation.simulator import SERVING
from elastman.evaluation.simulator import SimCluster

_LN01 = math.log(0.01)
# three-point Gauss-Hermite rule for E[h(e)], e ~ N(0, 1)
_GH_NODES = np.array([-math.sqrt(3.0), 0.0, math.sqrt(3.0)])
_GH_WEIGHTS = np.array([1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0])
#: the farthest the oracle looks ahead for VMs to start (minutes)
MAX_AHEAD = 360


class Planner:
    """The oracle's per-minute plan over the simulated cluster ``sim``.

    ``z``: standard deviations of the noisy tail kept under 1%; ``spike``:
    the single-VM noise jump (in standard deviations) the cluster survives;
    ``room_to_grow``: scale out as soon as a join's cleanup would break a
    minute, not only when the minute itself breaks (VMs are removed only
    while a join's cleanup stays safe either way). New VMs are of the first
    flavour. ``serial``: one action in flight at a time (see the module).
    """

    def __init__(self, sim: SimCluster, z: float = 3.0, spike: float = 4.0,
                 min_size: int = 3, room_to_grow: bool = False,
                 foresee_interference: bool = True,
                 interference_margin: float = 0.0, serial: bool = False) -> None:
        cfg, hw, trace = sim.cfg, sim.cfg.hardware, sim.trace
        self.sim, self.cfg, self.z, self.min_size = sim, cfg, z, min_size
        self.room_to_grow = room_to_grow
        self.foresee = foresee_interference
        if not 0.0 <= interference_margin < 1.0:
            raise ValueError('interference_margin must be in [0, 1)')
        self.margin = float(interference_margin)
        # per minute: the reads' and the writes' load, in units of a nominal VM
        self.x = np.column_stack((
            trace.reads / hw.read_cap,
            trace.writes * hw.replication_factor / hw.write_cap))
        self.s = trace.size / hw.size_cap
        self.step_s = trace.step_s
        self.lead = int(math.ceil(cfg.join_s * (1 + cfg.join_jitter) / self.step_s)) + 1
        self.hold = int(math.ceil(cfg.decommission_s / self.step_s)) + self.lead
        # joins in a row: a rise that needs d VMs must start d joins early
        self.slots = max(cfg.join_slots, 0)
        self.serial = bool(serial)
        # serial: minutes from a scale-out's start until the VMs of the next
        # one could serve (its slowest join and the cleanup, then a join)
        self.blocked = 2 * self.lead + int(math.ceil(cfg.cleanup_s / self.step_s))
        # quadrature: size factor (rows) x latency divisor (columns), weights
        self._size_q = np.exp(cfg.size_noise * _GH_NODES)
        self._lat_q = np.exp(-cfg.latency_noise * _GH_NODES)
        self._w_q = np.outer(_GH_WEIGHTS, _GH_WEIGHTS)
        self._size_spike = math.exp(spike * cfg.size_noise)
        self._lat_spike = math.exp(-spike * cfg.latency_noise)
        self._props_cache = np.zeros((0, 3))
        self._ep_seen = 0
        self._ep_ord = np.zeros(0, dtype=np.int64)
        self._ep = np.zeros((0, 3))

    # -- what the simulator will do -------------------------------------------

    def _episodes_upto(self, ordinal: int) -> None:
        if ordinal < self._ep_seen:
            return
        ords, eps = [self._ep_ord], [self._ep]
        for k in range(self._ep_seen, ordinal + 1):
            e = self.sim.lottery.episodes(k)
            if e:
                ords.append(np.full(len(e), k, dtype=np.int64))
                eps.append(np.array(e))
        self._ep_ord, self._ep = np.concatenate(ords), np.concatenate(eps)
        self._ep_seen = ordinal + 1

    def _props(self, k0: int, n: int) -> np.ndarray:
        """(token weight, capacity factor, join jitter) of ordinals k0..k0+n-1."""
        if k0 + n > len(self._props_cache):
            more = np.array([self.sim.lottery.props(k) for k in range(
                len(self._props_cache), max(k0 + n, 2 * len(self._props_cache)))])
            self._props_cache = np.concatenate([self._props_cache, more])
        return self._props_cache[k0:k0 + n]

    def interference(self, ordinals: np.ndarray, times: np.ndarray) -> np.ndarray:
        """Capacity factor left by interference, per ordinal and time, as
        far as the planner knows it (without foresight, only the episodes
        begun by now).
        """
        out = np.zeros((len(ordinals), len(times)))
        if not len(ordinals):
            return out + 1.0
        self._episodes_upto(int(ordinals.max()))
        start, end = self._ep[:, 0], self._ep[:, 1]
        known = start <= times[-1]
        if not self.foresee:
            known &= start <= self.sim.t
        near = np.flatnonzero(known & (end > times[0])
                              & np.isin(self._ep_ord, ordinals))
        if near.size:
            # the row of each episode's VM (ordinals are distinct), and the
            # episodes added in their order, as one loop over them would
            order = np.argsort(ordinals, kind='stable')
            rows = order[np.searchsorted(ordinals, self._ep_ord[near], sorter=order)]
            active = (start[near, None] <= times) & (end[near, None] > times)
            # math.log, as the simulator's: numpy's may differ in the last bit
            logs = np.array([math.log(v) for v in self._ep[near, 2].tolist()])
            np.add.at(out, rows, np.where(active, logs[:, None], 0.0))
        return np.exp(out)

    def tail(self, g: np.ndarray, f: np.ndarray, present: np.ndarray, x: np.ndarray,
             s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Mean and variance of the share of reads slower than the SLO per
        minute, and each VM's mean part of it.

        ``g``: token weights (VMs); ``f``: capacity factors and ``present``
        (serving) per VM and minute; ``x``, ``s``: per minute, the reads'
        and the writes' load in units of a nominal VM (minutes x 2) and the
        mean request size over the size capacity.
        """
        rho = self.cfg.rho
        load, share = self._loads(g, f, present, x)
        m1 = np.zeros_like(share)
        m2 = np.zeros_like(share)
        for i, sq in enumerate(self._size_q):
            u = (load + s * sq) / f
            d = np.maximum(1.0 - rho * u, (1.0 - rho) / 50.0) * (_LN01 / (1.0 - rho))
            for j, lq in enumerate(self._lat_q):
                # P(L > SLO) of one VM: 0.01^(SLO / p99), p99 with its noise
                q = np.exp(d * lq)
                m1 += self._w_q[i, j] * q
                m2 += self._w_q[i, j] * q * q
        part = share * m1
        var = (share * share * np.maximum(m2 - m1 * m1, 0.0)).sum(axis=0)
        return part.sum(axis=0), var, part

    def safe(self, g, f, present, x, s, margin: bool = True) -> np.ndarray:
        """Per minute: is the cluster p99 under the SLO with confidence ``z``,
        and does it stay so when any one VM's noises are ``spike`` standard
        deviations up? (A VM that holds more than about 1% of the reads
        breaks the cluster's p99 on its own: the mean and variance miss
        such rare jumps.)
        """
        mean, var, part = self.tail(g, f, present, x, s)
        ok = mean + self.z * np.sqrt(var) <= 0.01
        rho = self.cfg.rho
        load, share = self._loads(g, f, present, x)
        u = (load + s * self._size_spike) / f
        d = np.maximum(1.0 - rho * u, (1.0 - rho) / 50.0) * (_LN01 / (1.0 - rho))
        jump = share * np.exp(d * self._lat_spike) - part
        ok &= mean + jump.max(axis=0, initial=0.0) <= 0.01
        if self.margin and margin:
            ok &= mean + self._drop_jump(load, share, s, f, part).max(
                axis=0, initial=0.0) <= 0.01
        return ok

    def _loads(self, g, f, present, x) -> tuple[np.ndarray, np.ndarray]:
        """Per VM and minute: its load in units of a nominal VM, and its
        share of the reads (``SimConfig.read_routing``, as
        :meth:`SimCluster.step` spreads them).
        """
        w = g[:, None] * present
        token = w / np.maximum(w.sum(axis=0), 1e-12)
        reads = read_shares(w, f, self.cfg.read_routing)
        return x[:, 0] * reads + x[:, 1] * token, reads

    def _drop_jump(self, load, share, s, f, part) -> np.ndarray:
        """Per VM and minute: how much the share of slow reads grows if that
        VM alone loses ``interference_margin`` of its capacity (its mean tail
        over the same noise quadrature as :meth:`tail`, its load and read
        share as they were).
        """
        rho = self.cfg.rho
        f_hit = f * (1.0 - self.margin)
        m1 = np.zeros_like(share)
        for i, sq in enumerate(self._size_q):
            u = (load + s * sq) / f_hit
            d = np.maximum(1.0 - rho * u, (1.0 - rho) / 50.0) * (_LN01 / (1.0 - rho))
            for j, lq in enumerate(self._lat_q):
                m1 += self._w_q[i, j] * np.exp(d * lq)
        return share * m1 - part

    # -- the plan -------------------------------------------------------------

    def plan(self) -> tuple[int, list[int], str]:
        """VMs to add now and ordinals to remove now, with a reason."""
        sim = self.sim
        first = sim.minute
        last = min(len(self.x), first + self._window(first))
        if first >= last or (self.serial and sim.in_flight):
            return 0, [], ''
        minutes = np.arange(first, last)
        times = minutes * float(self.step_s)
        x, s = self.x[minutes], self.s[minutes]
        slots = np.flatnonzero(np.isin(sim.state, (SERVING, LEAVING, JOINING)))
        state = sim.state[slots]
        joining, leaving = state == JOINING, state == LEAVING
        ready = np.where(joining, sim.ready_at[slots], -np.inf)
        done = np.where(leaving, sim.done_at[slots], np.inf)
        present = (ready[:, None] <= times) & (done[:, None] > times)
        base = sim.f0[slots] * sim.flavor_factor[sim.flavor[slots]]
        f_free = base[:, None] * self.interference(sim.ordinal[slots], times)
        stream = (sim.stream_until[slots][:, None] > times) | leaving[:, None]
        g = sim.g[slots]
        cur = _Rows(g, f_free, present, stream, ready[joining])
        evict = self._evictions(slots, cur, times, x, s)
        remove = [int(sim.ordinal[slots[v]]) for v in evict]
        reason = ('interference ahead on %d VM(s)' % len(remove)) if remove else ''
        add = self._add(cur, minutes, times, x, s)
        if add:
            reason = ', '.join(filter(None, [reason, '%d VM(s) due now for the SLO' % add]))
        if add or remove or joining.any():
            return add, remove, reason
        h = min(self.hold, len(minutes))
        return 0, self._remove(slots, cur.upto(h), times[:h], x[:h], s[:h]), ''

    def _window(self, first: int) -> int:
        """Minutes to look ahead: ``hold``, or with joins in a row as far as
        a rise whose VMs must start joining by now (the VMs a minute needs
        estimated at 80% of a nominal VM's room, the 1.2 a margin on it;
        the plan checks every minute of the window exactly). At most
        ``MAX_AHEAD`` minutes.
        """
        least = max(self.hold, self.blocked) if self.serial else self.hold
        if not self.slots:
            return least
        end = min(len(self.x), first + MAX_AHEAD)
        if end <= first + least:
            return least
        x, s = self.x[first:end].sum(axis=1), self.s[first:end]
        need = 1.2 * x / np.maximum(0.8 - s, 0.05)
        have = self.sim.count(SERVING, JOINING)
        rows = np.ceil(np.maximum(need - have, 0.0) / self.slots)
        due = np.arange(end - first) - rows * self.lead
        late = np.flatnonzero(due <= self.hold)
        return max(least, int(late.max()) + 1 if late.size else 0)

    def _cleanup(self, joins: np.ndarray, times: np.ndarray) -> np.ndarray:
        """Per minute: does a join put the serving VMs into cleanup?"""
        if not joins.size:
            return np.zeros(len(times), bool)
        seen = np.ceil(joins / self.step_s) * self.step_s
        return ((seen[:, None] <= times)
                & (seen[:, None] > times - self.cfg.cleanup_s)).any(axis=0)

    def _factors(self, rows: '_Rows', times: np.ndarray) -> np.ndarray:
        streaming = rows.stream | self._cleanup(rows.joins, times)[None, :]
        return rows.f_free * np.where(streaming, self.cfg.streaming_penalty, 1.0)

    def _evictions(self, slots, cur: '_Rows', times, x, s) -> list[int]:
        """Replace a VM before an interference episode that makes the cluster
        unsafe on its own: it leaves so as to be gone when the episode
        starts (when that is already too late, it stays and the scale-out
        covers it). Plans the departures in ``cur``; returns the rows to
        remove now.
        """
        sim, cfg = self.sim, self.cfg
        f = self._factors(cur, times)
        _, _, part = self.tail(cur.g, f, cur.present, x, s)
        hurt = (part > 0.005) & (self.interference(sim.ordinal[slots], times) < 1.0)
        cand = np.flatnonzero(hurt.any(axis=1) & (sim.state[slots] == SERVING)
                              & ~sim.seed_flag[slots])
        now = []
        for v in cand:
            first_hurt = times[np.argmax(hurt[v])]
            mine = self._ep[self._ep_ord == int(sim.ordinal[slots[v]])]
            mine = mine[(mine[:, 0] <= first_hurt) & (mine[:, 1] > first_hurt)]
            if not mine.size:
                continue
            start = float(mine[:, 0].max())
            if start < sim.t + cfg.decommission_s:
                # too late: leaving, it would serve slower still until it is gone
                continue
            leave_at = math.floor((start - cfg.decommission_s) / self.step_s) * self.step_s
            if leave_at <= sim.t:
                now.append(int(v))
                leave_at = sim.t
            cur.present[v] &= times < leave_at + cfg.decommission_s
            cur.stream[v] |= times >= leave_at
        return now

    def _add(self, cur: '_Rows', minutes, times, x, s) -> int:
        """How many new VMs to start now.

        VMs are created in ordinal order and each has its own join time. For a
        minute that is not safe, the shortest run of next VMs of which enough
        join in time is started now, unless starting a minute later needs no
        longer a run (then it waits: the same VMs, billed a minute less). Every
        start is re-checked with the cleanup its join causes (a join slows the
        VMs already there), and the minutes that cleanup makes unsafe are
        planned the same way.
        """
        sim = self.sim
        up = len(minutes) if self.slots else min(self.lead, len(minutes))
        k0 = sim.next_ordinal
        cap = max(32, 4 * len(cur.g))
        props = self._props(k0, cap)
        _, new_ready, _ = sim.join_schedule(props[:, 2])
        join_min = np.ceil(new_ready / self.step_s).astype(np.int64)
        _, later_ready, _ = sim.join_schedule(props[:, 2], sim.t + self.step_s)
        join_later = np.ceil(later_ready / self.step_s).astype(np.int64)
        new = _Rows(props[:, 0], props[:, 1, None] * sim.flavor_factor[0]
                    * self.interference(np.arange(k0, k0 + cap), times),
                    join_min[:, None] <= minutes, np.zeros((cap, len(times)), bool),
                    new_ready)
        k = 0
        for _ in range(8):
            rows = cur.plus(new, k)
            short = np.flatnonzero(self._unsafe(rows, times, x, s)[:up])
            more = 0
            for j in short:
                now = self._prefix(rows, new, k, join_min[k:] <= minutes[j], j, x, s)
                if now is None:
                    continue                    # too late whatever starts now
                later = self._prefix(rows, new, k, join_later[k:] <= minutes[j], j, x, s)
                if later is None or later > now:
                    more = max(more, now)
            if not more:
                break
            k += more
        if self.serial and k:
            k = self._cover_blocked(cur, new, k, new_ready, join_min, minutes, times, x, s)
        return k

    def _cover_blocked(self, cur: '_Rows', new: '_Rows', k: int, new_ready: np.ndarray,
                       join_min: np.ndarray, minutes, times, x, s) -> int:
        """With one action in flight, a scale-out of ``k`` VMs blocks the
        next one until its last VM has joined and cleaned up; the VMs of
        the next then serve a join later. Start enough now that every minute
        until then is safe (as late a start would not be possible).
        """
        cfg = self.cfg
        for _ in range(8):
            done = float(new_ready[:k].max()) + cfg.cleanup_s
            until = int(math.ceil((done + cfg.join_s * (1 + cfg.join_jitter))
                                  / self.step_s)) - int(minutes[0]) + 1
            rows = cur.plus(new, k)
            more = 0
            for j in np.flatnonzero(self._unsafe(rows, times, x, s)[:until]):
                now = self._prefix(rows, new, k, join_min[k:] <= minutes[j], j, x, s)
                if now is not None:
                    more = max(more, now)
            if not more:
                break
            k += more
        return k

    def _unsafe(self, rows: '_Rows', times, x, s) -> np.ndarray:
        """Per minute: is the cluster of ``rows`` short? With
        ``room_to_grow``, already when a join's cleanup would break the
        minute: the VMs started then join without slowing the others too
        much.
        """
        if self.room_to_grow:
            f = rows.f_free * self.cfg.streaming_penalty
        else:
            f = self._factors(rows, times)
        return ~self.safe(rows.g, f, rows.present, x, s)

    def _prefix(self, rows: '_Rows', new: '_Rows', k: int, in_time: np.ndarray, j: int,
                x, s) -> int | None:
        """How many new VMs after the first ``k`` must start (they are created
        in order) so that enough of those that join in time (``in_time``)
        make minute ``j`` safe; None if they cannot. They have just joined,
        so every VM is in cleanup. A minute that no start now keeps safe
        with the interference margin is planned without it: what protects
        it from a drop can come too late, not what serves its load.
        """
        avail = k + np.flatnonzero(in_time)
        if not avail.size:
            return None
        pen = self.cfg.streaming_penalty
        f_old = rows.f_free[:, j] * pen
        margin = True

        def ok(m: int) -> bool:
            pick = avail[:m]
            g = np.concatenate([rows.g, new.g[pick]])
            ff = np.concatenate([f_old, new.f_free[pick, j] * pen])
            pp = np.concatenate([rows.present[:, j], np.ones(m, bool)])
            return bool(self.safe(g, ff[:, None], pp[:, None], x[j:j + 1], s[j:j + 1],
                                  margin=margin)[0])

        if not ok(len(avail)):
            margin = False
            if not self.margin or not ok(len(avail)):
                return None
        lo, hi = 1, len(avail)
        while lo < hi:
            mid = (lo + hi) // 2
            if ok(mid):
                hi = mid
            else:
                lo = mid + 1
        return int(avail[lo - 1]) + 1 - k

    def _remove(self, slots, cur: '_Rows', times, x, s) -> list[int]:
        """Ordinals whose removal now keeps every minute of the window safe."""
        sim, cfg = self.sim, self.cfg
        n = int(cur.present[:, 0].sum())
        if n <= self.min_size:
            return []
        # keep room for a join's cleanup: without it the next VM the cluster
        # needs would slow all the others and call for a burst of VMs
        f = cur.f_free * self.cfg.streaming_penalty
        # the hottest VMs (token weight over their worst capacity) go first
        serving = (sim.state[slots] == SERVING) & ~sim.seed_flag[slots]
        cand = np.flatnonzero(serving)
        cand = cand[np.argsort(-(cur.g / f.min(axis=1))[cand], kind='stable')]
        cand = cand[:n - self.min_size]
        # a removed VM serves, streaming, until its decommission is done
        gone = times >= sim.t + cfg.decommission_s
        f_leaving = cur.f_free * cfg.streaming_penalty

        def ok(m: int) -> bool:
            keep, ff = cur.present.copy(), f.copy()
            keep[cand[:m]] &= ~gone
            ff[cand[:m]] = f_leaving[cand[:m]]
            return bool(self.safe(cur.g, ff, keep, x, s).all())

        if not len(cand) or not ok(1):
            return []
        lo, hi = 1, len(cand)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if ok(mid):
                lo = mid
            else:
                hi = mid - 1
        return [int(sim.ordinal[slots[c]]) for c in cand[:lo]]


class _Rows:
    """VMs (rows) over the window's minutes: what the plan varies."""

    def __init__(self, g, f_free, present, stream, joins) -> None:
        self.g, self.f_free, self.present, self.stream = g, f_free, present, stream
        self.joins = np.asarray(joins, float)      # ready times of VMs still joining

    def upto(self, n: int) -> '_Rows':
        """The first ``n`` minutes."""
        return _Rows(self.g, self.f_free[:, :n], self.present[:, :n], self.stream[:, :n],
                     self.joins)

    def plus(self, new: '_Rows', k: int) -> '_Rows':
        if not k:
            return self
        return _Rows(np.concatenate([self.g, new.g[:k]]),
                     np.concatenate([self.f_free, new.f_free[:k]]),
                     np.concatenate([self.present, new.present[:k]]),
                     np.concatenate([self.stream, new.stream[:k]]),
                     np.concatenate([self.joins, new.joins[:k]]))


def best_plan(sim: SimCluster, initial: dict[str, int], name: str, min_size: int = 3,
              **planner_kwargs) -> tuple[dict[str, Any], dict[int, Action]]:
    """Run the trace of ``sim`` on a twin cluster (same trace, seed, start
    and noise key) with each scale-out rule; the plan (per minute, the
    action) with the fewest violation minutes, then VM-hours, and its
    figures.
    """
    best: tuple[tuple[float, float], dict[str, Any], dict[int, Action]] | None = None
    for room in (False, True):
        twin = SimCluster(sim.trace, sim.cfg, sim.flavors, initial, sim.lottery.seed, name)
        planner = Planner(twin, min_size=min_size, room_to_grow=room, **planner_kwargs)
        actions: dict[int, Action] = {}
        vms = np.zeros(len(sim.trace), dtype=np.int64)
        violations = 0
        for i in range(len(sim.trace)):
            row = twin.step()
            vms[i] = int(row['vms'])
            violations += int(row['violation'])
            add, remove, reason = planner.plan()
            if add or remove:
                act = Action(add=add, flavor=sim.flavors[0].name, remove=remove,
                             serialised=planner.serial,
                             reason=reason or 'surplus %d over the next %d min'
                             % (len(remove), planner.hold))
                actions[i] = act
                twin.apply(act)
        key = (float(violations), float(vms.sum()))
        figures = {'room_to_grow': room, 'violation_minutes': violations,
                   'vm_minutes': int(vms.sum()), 'vms': vms}
        if best is None or key < best[0]:
            best = (key, figures, actions)
    return best[1], best[2]
