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
"""An actuator that died after an action's end but before the cluster's
state change must not leave the cluster SCALING forever.
"""
import pytest

from elastman.actuator import manager as manager_mod
from elastman.common import config


class FakeStore:
    def __init__(self, unfinished):
        self._unfinished = unfinished
        self.updates = []
        self.leases = self
        self.actions = self
        self.clusters = self
        self.nodes = self

    def acquire(self, name, holder, ttl):
        return True

    def unfinished(self, cluster_id):
        return list(self._unfinished)

    def list(self, cluster_id):
        return []

    def update(self, cluster_id, **fields):
        self.updates.append(fields)


@pytest.fixture
def manager(monkeypatch):
    conf = config.CONF
    conf([], project='elastman', default_config_files=[])
    store = FakeStore([])
    mgr = manager_mod.ActuatorManager(conf, store)
    # the decision itself is not what this test is about
    monkeypatch.setattr(mgr.controller, 'decide',
                        lambda cluster, now, record=True: None)
    monkeypatch.setattr(mgr.controller, 'newest_sample_at', lambda cluster: None)
    monkeypatch.setattr(mgr.controller, 'action_for',
                        lambda cluster, result: None)
    return mgr, store


def test_scaling_cluster_without_action_becomes_active(manager):
    mgr, store = manager
    mgr.handle_cluster({'id': 'c1', 'state': 'SCALING', 'policy': {}})
    assert store.updates == [{'state': 'ACTIVE',
                              'status_reason': 'no action in progress'}]


def test_active_cluster_is_left_alone(manager):
    mgr, store = manager
    mgr.handle_cluster({'id': 'c1', 'state': 'ACTIVE', 'policy': {}})
    assert store.updates == []


def test_clusters_plan_at_their_own_phase_of_the_control_period(
        manager, monkeypatch):
    """Clusters that came together plan once a period each, not all in the
    same round.
    """
    mgr, _store = manager
    planned = []
    monkeypatch.setattr(mgr.controller, 'decide',
                        lambda cluster, now, record=True:
                        planned.append((cluster['id'], now)))
    clusters = [{'id': 'c%d' % i, 'state': 'ACTIVE',
                 'policy': {'control_period_s': 300}} for i in range(40)]
    for tick in range(60):                      # 30 minutes of 30-s rounds
        for cluster in clusters:
            mgr.handle_cluster(cluster, now=30.0 * tick)
    by_cluster = {}
    for cid, now in planned:
        by_cluster.setdefault(cid, []).append(now)
    steady = [now for times in by_cluster.values() for now in times[2:]]
    for times in by_cluster.values():
        # one plan a period once settled on its phase
        assert all(b - a == 300.0 for a, b in zip(times[2:], times[3:]))
    # after the first round, the plans spread over the period's ten rounds
    rounds = {now % 300.0 for now in steady}
    assert len(rounds) >= 8, sorted(rounds)
