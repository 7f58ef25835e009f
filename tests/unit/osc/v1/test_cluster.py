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
"""openstack elastman cluster show: what elastman is doing now, and why."""
import datetime
from unittest import mock

from elastman.osc.v1 import cluster
from tests.unit.osc.v1 import fakes

POLICY = {'slo_metric': 'read_p99_ms', 'slo_threshold_ms': 35.0,
          'min_size': 3, 'max_size': 4, 'control_period_s': 60,
          'cooldown_s': 120, 'dry_run': False}


def _client(actions=(), decisions=(), policy=POLICY):
    client = mock.Mock()
    client.find_cluster.return_value = fakes.cluster_doc(policy)
    client.list_actions.return_value = list(actions)
    client.list_decisions.return_value = list(decisions)
    return client


def _in_flight(decided_at):
    return {'id': 'a1', 'cluster_id': fakes.CLUSTER_ID, 'kind': 'scale_out',
            'state': 'RUNNING', 'step': 'joining',
            'params': {'flavor': 'm1.small', 'count': 1,
                       'decided_at': decided_at},
            'result': None, 'reason': None,
            'created_at': '2026-11-24T10:15:01.000Z',
            'updated_at': '2026-11-24T10:16:00.000Z'}


def test_show_says_what_it_is_doing_and_why():
    decision = fakes.decision_doc()            # at 2026-11-24 10:15:00 UTC
    decided_at = datetime.datetime(2026, 11, 24, 10, 15, tzinfo=(
        datetime.timezone.utc)).timestamp()
    done = dict(_in_flight(0), id='a0', state='SUCCEEDED')
    client = _client([_in_flight(decided_at), done], [decision])
    out = fakes.run(cluster.ShowCluster, client, 'orders')
    rows = {}
    field = None
    for line in out.splitlines()[3:-1]:
        name, value = line.split('|')[1:3]
        field = name.strip() or field
        rows.setdefault(field, []).append(value.strip())
    doing = ' '.join(rows['doing'])
    assert doing.startswith('scale_out: add 1 node(s) of m1.small, RUNNING '
                            'at step joining since 2026-11-24 10:15:01; '
                            'decided because: scale out by 1 of m1.small')
    assert 'a0' not in out                      # finished actions are not
    assert ' '.join(rows['last_decision']).startswith(
        '2026-11-24 10:15:00 scale_out: scale out by 1')
    assert rows['health'][0] == 'nodes: 3 ACTIVE'
    assert rows['health'][1].startswith('control loop: last decision')
    assert rows['policy'] == ['read_p99_ms <= 35 ms; 3..4 nodes',
                              'every 60 s, cool-down 120 s']
    assert max(len(line) for line in out.splitlines()) <= 120


def test_show_idle_without_policy_and_json_is_whole():
    client = _client(policy=None)
    out = fakes.run(cluster.ShowCluster, client, 'orders')
    assert 'idle: no action in flight' in out
    assert 'control loop: off (no scaling policy)' in out
    assert 'none: elastman does not scale this cluster' in out
    doc = fakes.run_json(cluster.ShowCluster, client, 'orders')
    assert doc == dict(fakes.cluster_doc(None), actions_in_flight=[],
                       last_decision=None)


def test_list_is_short_and_json_whole():
    client = mock.Mock()
    client.list_clusters.return_value = [fakes.cluster_doc(POLICY)]
    out = fakes.run(cluster.ListCluster, client)
    assert out.splitlines()[1].split('|')[1:-1] == [
        ' id                                   ', ' name   ', ' state  ',
        ' mode    ', ' size ', ' flavor   ']
    assert fakes.run_json(cluster.ListCluster, client) == [
        fakes.cluster_doc(POLICY)]
