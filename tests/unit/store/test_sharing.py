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
"""WorkShare: copies of a worker split the clusters by rendezvous hashing,
hand them over when one joins, and take a dead copy's clusters when its
leases expire."""
from elastman.store import sharing
from tests.unit.store import fakes

CLUSTERS = ['c%03d' % i for i in range(100)]


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class Store:
    def __init__(self, clock):
        self.leases = fakes.FakeLeases(clock)
        self.members = fakes.FakeMembers(clock)


def _pair(ttl=90):
    clock = Clock()
    store = Store(clock)
    a = sharing.WorkShare(store, 'trainer', 'host-a', ttl, clock=clock)
    b = sharing.WorkShare(store, 'trainer', 'host-b', ttl, clock=clock)
    return clock, store, a, b


class _Worker(sharing.SharedManager):
    WORKER = 'trainer'


def _worker(share, clock, budget=None):
    """A worker on ``share`` without a service around it."""
    worker = _Worker.__new__(_Worker)
    worker.share = share
    worker._clock = clock
    worker._worked_at = {}
    worker.last_round = {}
    worker.round_budget = budget
    return worker


def test_two_copies_split_the_clusters_and_each_cluster_has_one():
    clock, store, a, b = _pair()
    a.refresh(), b.refresh()
    mine_a, mine_b = set(a.claim(CLUSTERS)), set(b.claim(CLUSTERS))
    assert mine_a.isdisjoint(mine_b) and mine_a | mine_b == set(CLUSTERS)
    assert 30 <= len(mine_a) <= 70
    # the next rounds renew the same shares
    clock.now += 30
    assert set(a.claim(CLUSTERS)) == mine_a
    assert set(b.claim(CLUSTERS)) == mine_b
    assert {store.leases.holder('trainer/' + c) for c in mine_a} == {'host-a'}


def test_a_copy_that_joins_gets_its_share_handed_over():
    clock, store, a, b = _pair()
    assert set(a.claim(CLUSTERS)) == set(CLUSTERS)      # alone: everything
    b.refresh()
    assert b.claim(CLUSTERS) == []                       # a still holds them
    kept = set(a.claim(CLUSTERS))                        # a sees b: releases
    assert 30 <= len(kept) <= 70
    taken = set(b.claim(CLUSTERS))
    assert taken == set(CLUSTERS) - kept


def test_a_busy_cluster_stays_until_it_is_not():
    clock, store, a, b = _pair()
    a.claim(CLUSTERS)
    b.refresh()
    theirs = [c for c in CLUSTERS
              if sharing.owner(['host-a', 'host-b'], c) == 'host-b']
    busy = theirs[0]
    assert busy in a.claim(CLUSTERS, keep=[busy])
    assert busy not in b.claim(CLUSTERS)
    assert busy not in a.claim(CLUSTERS)                 # done: handed over
    assert busy in b.claim(CLUSTERS)


def test_a_dead_copy_s_clusters_are_taken_as_its_leases_expire():
    clock, store, a, b = _pair(ttl=90)
    a.refresh(), b.refresh()
    theirs = set(a.claim(CLUSTERS))
    b.claim(CLUSTERS)
    died = clock.now            # a renewed everything now, then died
    taken_at = {}
    while clock.now < died + 200 and len(taken_at) < len(theirs):
        clock.now += min(b.next_wait(), 1.0)
        b.beat()
        for cid, _ in b.taken_over:
            taken_at.setdefault(cid, clock.now)
    assert set(taken_at) == theirs
    assert min(taken_at.values()) >= died + 90           # never before expiry
    assert max(taken_at.values()) <= died + 90 + 1.0     # within the TTL (+1 s)
    assert set(b.claim(CLUSTERS)) == set(CLUSTERS)


def test_a_copy_that_stops_releases_everything_and_leaves():
    clock, store, a, b = _pair()
    a.refresh(), b.refresh()
    theirs = set(a.claim(CLUSTERS))
    b.claim(CLUSTERS)
    a.stop()
    assert store.members.members('trainer') == ['host-b']
    assert all(store.leases.holder('trainer/' + c) is None for c in theirs)
    assert set(b.claim(CLUSTERS)) == set(CLUSTERS)


def test_clusters_that_are_gone_are_released():
    clock, store, a, b = _pair()
    a.claim(CLUSTERS)
    a.claim(CLUSTERS[:10])
    assert a.held == set(CLUSTERS[:10])
    assert store.leases.holder('trainer/' + CLUSTERS[50]) is None


def test_a_round_longer_than_the_ttl_keeps_its_leases():
    clock, store, a, b = _pair(ttl=90)
    a.refresh(), b.refresh()
    ours = set(a.claim(CLUSTERS))
    b.claim(CLUSTERS)
    start = clock.now
    # a's round runs for three TTLs without a claim; only heartbeats
    while clock.now < start + 270:
        clock.now += a.heartbeat_s
        a.beat()
        b.beat()
    assert not b.taken_over
    assert a.held == ours
    assert all(store.leases.holder('trainer/' + c) == 'host-a' for c in ours)


def test_a_lease_lost_midway_is_dropped_and_its_cluster_skipped():
    clock, store, a, b = _pair(ttl=90)
    a.refresh()
    a.claim(CLUSTERS)
    lost = CLUSTERS[0]
    # the lease expires and another holder takes it (a store outage, say)
    store.leases.rows['trainer/' + lost] = ('host-x', clock.now + 1000)
    clock.now += 45
    a.beat()
    assert lost not in a.held

    worker = _worker(a, clock)
    done = []
    worker.each_cluster([{'id': c} for c in CLUSTERS[:3]], set(CLUSTERS[:3]),
                        lambda c: done.append(c['id']), 'work')
    assert done == CLUSTERS[1:3]


def test_a_round_stops_at_its_budget_and_the_rest_go_first_next_round():
    clock = Clock()
    worker = _worker(None, clock, budget=2.5)
    clusters = [{'id': c} for c in CLUSTERS[:7]]
    rounds = []

    def work(cluster):
        clock.now += 1.0        # each cluster takes a second
        rounds[-1].append(cluster['id'])
        if cluster['id'] == CLUSTERS[1]:
            raise RuntimeError('a failing cluster still takes its turn')

    for _ in range(3):
        rounds.append([])
        worker.each_cluster(clusters, set(CLUSTERS[:7]), work, 'work')
        clock.now += 60.0
    # three clusters a round (the third starts at 2 s of a 2.5 s budget),
    # the ones worked on least recently first
    assert rounds == [CLUSTERS[0:3], CLUSTERS[3:6],
                      [CLUSTERS[6]] + CLUSTERS[0:2]]
    assert worker.last_round == {'worked': 3, 'deferred': 4}


def test_without_a_budget_a_round_works_on_every_cluster():
    clock = Clock()
    worker = _worker(None, clock)
    done = []

    def work(cluster):
        clock.now += 100.0
        done.append(cluster['id'])

    worker.each_cluster([{'id': c} for c in CLUSTERS[:5]],
                        set(CLUSTERS[:4]), work, 'work')
    assert done == CLUSTERS[:4]
    assert worker.last_round == {'worked': 4, 'deferred': 0}
