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
"""The host agents' interference index reaches the decision: from the latest
report of each node's compute host, when it is recent, else 0.
"""
import datetime

from elastman.actuator import controller as controller_mod
from elastman.actuator import decision as decision_mod
from elastman.actuator import policy as policy_mod
from elastman.store import hosts as hosts_repo
from elastman.store import model_state as persistence
from tests.unit.actuator import test_controller_seen as seen


def _at(ts):
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc) \
        .replace(tzinfo=None)


class HostsStore(seen.FakeStore):
    """Two nodes on two hosts; one host's report is stale."""

    NODES = [
        {'node_id': 'n1', 'flavor': 'm1', 'state': 'UN', 'seed': True,
         'host': 'cmp-1', 'server_id': 'vm-1'},
        {'node_id': 'n2', 'flavor': 'm1', 'state': 'UN', 'seed': False,
         'host': 'cmp-2', 'server_id': 'vm-2'},
        {'node_id': 'n3', 'flavor': 'm1', 'state': 'UN', 'seed': False,
         'host': None, 'server_id': 'vm-3'},
    ]

    def __init__(self, report_ages):
        super().__init__()
        self.hosts = self
        self.asked = []
        self.report_ages = report_ages

    def list(self, cluster_id, limit=None):
        return [dict(n) for n in self.NODES] if limit is None else []

    # the repository's own reading of the reports below
    latest_vms = hosts_repo.HostRepository.latest_vms
    interference = hosts_repo.HostRepository.interference

    def reports(self, host, limit=100, marker=None):
        self.asked.append(host)
        age = self.report_ages.get(host)
        if age is None:
            return []
        return [{'host': host, 'ts': _at(seen.NOW - age), 'vms': {
            'vm-1': {'interference_index': 0.7, 'latency_ms': 30.0},
            'vm-2': {'interference_index': 0.4, 'latency_ms': 20.0},
            'other': {'interference_index': 1.0}}}]


def _decide(conf, ages):
    store = HostsStore(ages)
    persistence.save_state(store, seen._registry())
    cluster = {'id': 'c1', 'created_at': None,
               'policy': {'min_size': 1, 'max_size': 5, 'warmup_s': 0}}
    decision = controller_mod.Controller(conf, store).decide(
        cluster, now=seen.NOW, record=False)
    return decision, store


def test_recent_reports_give_each_node_its_own_index(conf):
    decision, store = _decide(conf, {'cmp-1': 10, 'cmp-2': 60})
    assert decision.inputs['interference'] == {'n1': 0.7, 'n2': 0.4}
    assert sorted(store.asked) == ['cmp-1', 'cmp-2']   # once per host;
    # n3 has no host on record (a local node, or a server seen by a
    # non-admin user), so no agent can speak for it


def test_a_stale_or_missing_report_counts_as_no_interference(conf):
    conf.set_override('interference_max_age', 120, 'actuator')
    decision, _ = _decide(conf, {'cmp-1': 300})
    assert decision.inputs['interference'] == {}


def test_remove_by_interference_uses_the_reported_index(conf):
    _, store = _decide(conf, {'cmp-1': 10, 'cmp-2': 10})
    found = controller_mod.Controller(conf, store)._interference(
        store.NODES, seen.NOW)
    nodes = [decision_mod.NodeInfo(n['node_id'], 'm1', n['seed'],
                                   found.get(n['node_id'], 0.0))
             for n in store.NODES]
    terms = {n.node_id: decision_mod.VMTerm(n.node_id, 'm1', 100.0, 1000.0,
                                            'exact', 'ok', -0.9)
             for n in nodes}
    policy = policy_mod.ScalingPolicy(min_size=1, max_size=5,
                                      remove_by='interference')
    assert decision_mod.choose_nodes_to_remove(
        policy, nodes, terms, 'm1', 1) == ['n2']      # n1 is the only seed
    policy = policy_mod.ScalingPolicy(min_size=1, max_size=5)
    assert decision_mod.choose_nodes_to_remove(
        policy, nodes, terms, 'm1', 1) == ['n2']      # equal capacity: then
    # the most interference, before n3 (no report)
