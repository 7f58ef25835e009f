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
"""Splitting the clusters between the copies of a worker.

Every copy of a worker (monitor, trainer, predictor, actuator) keeps a row in
``worker_members`` alive with a heartbeat. The clusters are split over the
live copies by rendezvous hashing: a cluster belongs to the copy with the
highest hash of (copy, cluster), so a copy that joins or leaves moves only
the clusters that hash to it. A copy works on a cluster only while it holds
the cluster's lease ``<worker>/<cluster id>``, which is what makes the work
exclusive; the hash only says which copy should take it:

* each round, a copy takes (or renews) the leases of its own clusters and
  releases those that now belong to another live copy (unless it is busy
  with one, e.g. an action in flight);
* a copy that stops releases its leases and leaves at once;
* when a copy dies, its heartbeat row expires (after half a lease TTL), the
  survivors its clusters now hash to read how long each of its leases has
  left, and take each lease the moment it expires: within one lease TTL of
  the copy's last renewal;
* a copy's heartbeat also renews the leases it holds on its own clusters
  once half a TTL has passed since their last renewal, so that a round
  longer than the TTL (a predictor's cold round over many clusters) does
  not lose them to another copy midway.
"""
from __future__ import annotations

import collections
import hashlib
import math
import threading
import time
from typing import Callable, Iterable

from oslo_log import log as logging

from elastman.common import manager

LOG = logging.getLogger(__name__)


def score(member: str, cluster_id: str) -> int:
    """Rendezvous weight of ``member`` for ``cluster_id``."""
    digest = hashlib.blake2b(('%s\0%s' % (member, cluster_id)).encode(),
                             digest_size=8).digest()
    return int.from_bytes(digest, 'big')


def owner(members: Iterable[str], cluster_id: str) -> str:
    """The member a cluster belongs to."""
    return max(members, key=lambda m: (score(m, cluster_id), m))


class WorkShare:
    """This copy's share of a worker's clusters.

    ``ttl``: the lease TTL (s). Heartbeats run every ``ttl / 6`` s in a
    thread of their own (:meth:`start`), so that a long round never looks
    like a dead copy; a member counts as alive for ``ttl / 2`` s after its
    last heartbeat.
    """

    def __init__(self, store, worker: str, holder: str, ttl: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.worker = worker
        self.holder = holder
        self.ttl = int(ttl)
        self.member_ttl = max(2, self.ttl // 2)
        self.heartbeat_s = max(0.5, self.member_ttl / 3.0)
        self._clock = clock
        self._lock = threading.Lock()
        self._held: set[str] = set()
        self._known: set[str] = set()        # clusters seen at the last claim
        self._members: list[str] = [holder]
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._waiting: dict[str, float] = {}   # cluster -> when to take it
        self._renewed: dict[str, float] = {}   # cluster -> last renewal
        #: (cluster, wall-clock time) of the latest take-overs
        self.taken_over: collections.deque = collections.deque(maxlen=1000)

    def lease_name(self, cluster_id) -> str:
        return '%s/%s' % (self.worker, cluster_id)

    # -- members ---------------------------------------------------------

    @property
    def members(self) -> list[str]:
        with self._lock:
            return list(self._members)

    def refresh(self) -> list[str]:
        """Renew this copy's heartbeat; the live members, this one included."""
        self.store.members.heartbeat(self.worker, self.holder, self.member_ttl)
        found = set(self.store.members.members(self.worker)) | {self.holder}
        with self._lock:
            self._members = sorted(found)
            return list(self._members)

    def owns(self, cluster_id) -> bool:
        """Whether ``cluster_id`` hashes to this copy (among live members)."""
        return owner(self.members, str(cluster_id)) == self.holder

    @property
    def held(self) -> set[str]:
        with self._lock:
            return set(self._held)

    # -- rounds ----------------------------------------------------------

    def claim(self, cluster_ids: Iterable, keep: Iterable = ()) -> list[str]:
        """The clusters (of ``cluster_ids``) this copy works on this round.

        Takes or renews the leases of this copy's clusters, keeps those in
        ``keep`` (busy ones) whoever they hash to, and releases the others
        it held. Returns their ids as strings, in the given order.
        """
        ids = [str(c) for c in cluster_ids]
        keep = {str(c) for c in keep}
        members = self.refresh()
        mine = []
        for cid in ids:
            name = self.lease_name(cid)
            if owner(members, cid) == self.holder or cid in keep:
                if self.store.leases.acquire(name, self.holder, self.ttl):
                    mine.append(cid)
                    with self._lock:
                        self._held.add(cid)
                        self._renewed[cid] = self._clock()
                else:
                    with self._lock:
                        self._held.discard(cid)
            elif cid in self.held:
                self._release(cid)
        with self._lock:
            self._known = set(ids)
            gone = self._held - self._known
        for cid in gone:
            self._release(cid)
        return mine

    def _release(self, cid: str) -> None:
        try:
            self.store.leases.release(self.lease_name(cid), self.holder)
        finally:
            with self._lock:
                self._held.discard(cid)
                self._renewed.pop(cid, None)

    # -- heartbeats and take-over ----------------------------------------

    def start(self) -> None:
        """Join the worker's members and keep the heartbeat going."""
        self.refresh()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name='%s-share' % self.worker)
        self._thread.start()

    def stop(self) -> None:
        """Release every lease this copy holds and leave."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        for cid in self.held:
            try:
                self._release(cid)
            except Exception as exc:     # it expires by itself then
                LOG.warning('cannot release lease %s: %s',
                            self.lease_name(cid), exc)
        try:
            self.store.members.leave(self.worker, self.holder)
        except Exception as exc:
            LOG.warning('cannot leave the %s members: %s', self.worker, exc)

    def _run(self) -> None:
        while not self._stop.wait(self.next_wait()):
            try:
                self.beat()
            except Exception:
                LOG.exception('%s heartbeat failed; retrying', self.worker)

    def beat(self) -> None:
        """One heartbeat: renew, see who left, take what is due."""
        before = set(self.members)
        after = set(self.refresh())
        if before - after:
            LOG.info('%s copies %s left; taking over their clusters as '
                     'their leases expire', self.worker,
                     ', '.join(sorted(before - after)))
        for cid, at in self._orphans(set(self._waiting)).items():
            self._waiting[cid] = at
        self._take_due(self._waiting)
        self._renew_held()

    def _renew_held(self) -> None:
        """Renew the held leases of this copy's own clusters that are half
        a TTL old; a lease another copy took meanwhile is dropped.
        """
        now = self._clock()
        members = self.members
        with self._lock:
            due = [cid for cid in self._held
                   if now - self._renewed.get(cid, now) >= self.ttl / 2.0
                   and owner(members, cid) == self.holder]
        for cid in due:
            kept = self.store.leases.acquire(self.lease_name(cid),
                                             self.holder, self.ttl)
            with self._lock:
                if kept:
                    self._renewed[cid] = now
                else:
                    self._held.discard(cid)
                    self._renewed.pop(cid, None)
            if not kept:
                LOG.warning('%s: lost the lease of cluster %s', self.worker,
                            cid)

    def next_wait(self) -> float:
        """Seconds to the next heartbeat or lease expiry."""
        wait = self.heartbeat_s
        if self._waiting:
            wait = min(wait, max(0.05, min(self._waiting.values())
                                 - self._clock()))
        return wait

    def _orphans(self, skip: set[str]) -> dict[str, float]:
        """Clusters that hash to this copy whose lease is free or held by a
        copy that is no longer alive: when each can be taken.
        """
        members = set(self.members)
        with self._lock:
            candidates = [c for c in self._known
                          if c not in self._held and c not in skip]
        out = {}
        for cid in candidates:
            if owner(members, cid) != self.holder:
                continue
            holder, left = self.store.leases.remaining(self.lease_name(cid))
            if holder is None or holder not in members:
                out[cid] = self._clock() + left
        return out

    def _take_due(self, waiting: dict[str, float]) -> None:
        now = self._clock()
        for cid, at in list(waiting.items()):
            if at > now:
                continue
            del waiting[cid]
            if not self.owns(cid):
                continue
            if self.store.leases.acquire(self.lease_name(cid), self.holder,
                                         self.ttl):
                with self._lock:
                    self._held.add(cid)
                    self._renewed[cid] = self._clock()
                self.taken_over.append((cid, time.time()))
                LOG.info('%s: took over cluster %s', self.worker, cid)
                continue
            holder, left = self.store.leases.remaining(self.lease_name(cid))
            if holder not in (None, self.holder) and holder not in self.members:
                # expiry is counted in whole seconds: try again shortly
                waiting[cid] = self._clock() + max(left, 0.25)


class SharedManager(manager.Manager):
    """A worker whose copies split the clusters between them.

    ``lease_ttl`` (a property of the subclass; None: no sharing, the copy
    works on every cluster) sets the :class:`WorkShare`'s TTL. The share
    starts and stops with the worker; each round, :meth:`mine` claims this
    copy's clusters and :meth:`each_cluster` works on them one by one, so
    that one failing cluster never stops the round.

    ``round_budget`` (seconds, a property of the subclass; None: no limit)
    bounds a round: the clusters worked on least recently go first, and
    those left when the budget is spent go first in the next round. A copy
    that starts cold, or takes over many clusters at once, so catches up
    over a few rounds while each round still ends within its period.
    """

    lease_ttl: float | None = None
    round_budget: float | None = None

    def __init__(self, conf, store=None) -> None:
        super().__init__(conf)
        self.store = store
        self._clock = time.monotonic
        self._worked_at: dict[str, float] = {}
        #: the last round's clusters worked on and left for the next round
        self.last_round = {'worked': 0, 'deferred': 0}
        ttl = self.lease_ttl if store is not None else None
        self.share = (WorkShare(store, self.WORKER, conf.host, ttl)
                      if ttl else None)

    def start(self) -> None:
        super().start()
        if self.share is not None:
            self.share.start()

    def stop(self) -> None:
        if self.share is not None:
            self.share.stop()

    def mine(self, clusters: list[dict], keep: Iterable = ()) -> set[str]:
        """The ids of ``clusters`` this copy works on this round."""
        if self.share is None:
            return {str(c['id']) for c in clusters}
        return set(self.share.claim([c['id'] for c in clusters], keep=keep))

    def each_cluster(self, clusters: list[dict], mine: set[str],
                     work: Callable[[dict], object], what: str) -> None:
        """``work(cluster)`` on each of ``clusters`` in ``mine``, the one
        worked on least recently first, until ``round_budget`` is spent; a
        failure is logged as "<what> of cluster <id> failed this round".
        """
        for cid in set(self._worked_at) - mine:
            del self._worked_at[cid]
        order = sorted((c for c in clusters if str(c['id']) in mine),
                       key=lambda c: self._worked_at.get(str(c['id']),
                                                         -math.inf))
        budget = self.round_budget
        started = self._clock()
        self.last_round = {'worked': 0, 'deferred': 0}
        for done, cluster in enumerate(order):
            cid = str(cluster['id'])
            if budget is not None and done and \
                    self._clock() - started >= budget:
                self.last_round['deferred'] = len(order) - done
                LOG.warning('%s: %d of %d clusters wait for the next round '
                            '(this round used its %.0f s budget)', what,
                            len(order) - done, len(order), budget)
                return
            if self.share is not None and cid not in self.share.held:
                continue        # its lease was lost during this round
            try:
                work(cluster)
            except Exception:
                LOG.exception('%s of cluster %s failed this round', what,
                              cluster['id'])
            self._worked_at[cid] = self._clock()
            self.last_round['worked'] += 1
