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
"""The local compute driver against real Cassandra processes.

The fourth node's join and decommission are checked by reading back, at
consistency ALL, every row written before them (replication factor 3).
"""
import os

import pytest

from elastman.compute import base
from elastman.compute import local
from tests.functional.compute import cluster as shared
from tests.functional import datacheck

ROWS = 300


@pytest.fixture(scope='module')
def cluster(conf, request):
    return shared.acquire(conf, request.config)


def test_three_nodes_up_normal(cluster):
    status = {n.address: n.code for n in cluster.nodetool().status()}
    for server in cluster.servers[:3]:
        assert status[server.address] == 'UN'
        assert cluster.driver.get(server.id).status == base.ACTIVE
    listed = cluster.driver.list(cluster.cluster_id)
    assert [s.id for s in listed][:3] == [s.id for s in cluster.servers[:3]]


def test_cpu_quota_applied(cluster):
    group = cluster.driver.cpu_cgroup(cluster.servers[0].id)
    if group is None:
        pytest.skip('no cgroup hierarchy on this host')
    assert group.quota() == pytest.approx(1.0)
    pid = cluster.driver.node(cluster.servers[0].id).pid()
    assert pid in group.pids()


def test_recovery_after_restart(cluster, conf):
    again = local.LocalDriver(conf)
    ids = {s.id: s.status for s in again.list(cluster.cluster_id)}
    assert all(ids[s.id] == base.ACTIVE for s in cluster.servers)


def test_add_decommission_delete_fourth_node(cluster):
    progress = []
    contact = cluster.servers[0].address
    datacheck.create(contact)
    rows = datacheck.write(contact, range(ROWS))
    server = cluster.add(flavor='c05')
    try:
        assert server.flavor == 'c05'
        group = cluster.driver.cpu_cgroup(server.id)
        if group is not None:
            assert group.quota() == pytest.approx(0.5)
        status = {n.address: n for n in cluster.nodetool().status()}
        assert status[server.address].code == 'UN'
        assert len(status) == 4
        assert datacheck.verify(contact, rows) == ROWS
        cluster.nodetool(server).decommission(progress=progress.append,
                                              poll_interval=3)
        assert progress and progress[-1]['mode'] == 'DECOMMISSIONED'
        status = {n.address for n in cluster.nodetool().status()}
        assert server.address not in status
        assert datacheck.verify(contact, rows) == ROWS
    finally:
        path = os.path.join(cluster.driver.state_dir, server.id)
        pid = cluster.driver.node(server.id).pid()
        cluster.driver.delete(server.id)
        cluster.servers.remove(server)
    assert not os.path.exists(path)
    assert pid is None or not os.path.exists('/proc/%d' % pid)
    if group is not None:
        assert not group.exists()
    with pytest.raises(base.ServerNotFound):
        cluster.driver.get(server.id)
    assert cluster.driver.wait_for_state(server.id, base.DELETED,
                                         timeout=1).status == base.DELETED
