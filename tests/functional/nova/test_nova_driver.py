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
"""The nova driver against a real Nova: API, scheduler, placement, conductor
and two nova-compute hosts with the fake virt driver (tools/nova-lab).
"""
import uuid

import pytest

from elastman.compute import base
from elastman.compute import nova
from tests.functional.nova.conftest import HOSTS


def cluster() -> str:
    return str(uuid.uuid4())


def host_of(driver, server_id: str) -> str:
    return driver.conn.compute.get_server(server_id).compute_host


def test_flavors(driver):
    flavors = driver.flavors()
    assert flavors['m1.tiny']['vcpus'] == 1
    assert flavors['m1.small']['ram'] == 1024


def test_create_find_delete(driver):
    c1, c2 = cluster(), cluster()
    a = driver.create('node-a', 'm1.tiny', {base.CLUSTER_TAG: c1,
                                            'role': 'cassandra'},
                      user_data='#cloud-config\nruncmd: [true]\n')
    b = driver.create('node-b', 'm1.small', {base.CLUSTER_TAG: c1})
    other = driver.create('node-x', 'm1.tiny', {base.CLUSTER_TAG: c2})
    assert a.status == base.BUILD and a.cluster_id == c1

    for server, flavor in ((a, 'm1.tiny'), (b, 'm1.small'),
                           (other, 'm1.tiny')):
        up = driver.wait_for_state(server.id, base.ACTIVE)
        assert up.status == base.ACTIVE
        assert up.flavor == flavor
        assert up.cluster_id == server.cluster_id
        assert up.fault is None and up.created_at
        assert up.host in HOSTS     # what the host agent reports under
    assert driver.get(a.id).metadata == {base.CLUSTER_TAG: c1,
                                         'role': 'cassandra'}

    found = {s.id: s for s in driver.list(c1)}
    assert set(found) == {a.id, b.id}
    assert {s.flavor for s in found.values()} == {'m1.tiny', 'm1.small'}
    assert [s.id for s in driver.list(c2)] == [other.id]
    assert {a.id, b.id, other.id} <= {s.id for s in driver.list()}
    assert driver.list(cluster()) == []

    for server in (a, b):
        driver.delete(server.id)
    for server in (a, b):
        gone = driver.wait_for_state(server.id, base.DELETED)
        assert gone.status == base.DELETED
        with pytest.raises(base.ServerNotFound):
            driver.get(server.id)
    driver.delete(a.id)  # idempotent
    assert driver.list(c1) == []
    assert [s.id for s in driver.list(c2)] == [other.id]


def test_no_valid_host_when_hosts_are_full(driver):
    c = cluster()
    # two hosts of 2 vCPUs: four m1.tiny fill them
    servers = [driver.create('fill-%d' % i, 'm1.tiny', {base.CLUSTER_TAG: c})
               for i in range(4)]
    for server in servers:
        driver.wait_for_state(server.id, base.ACTIVE)
    assert sorted(host_of(driver, s.id) for s in servers) == sorted(HOSTS * 2)

    extra = driver.create('one-too-many', 'm1.tiny', {base.CLUSTER_TAG: c})
    with pytest.raises(base.ComputeError) as info:
        driver.wait_for_state(extra.id, base.ACTIVE)
    assert isinstance(info.value, nova.NoValidHost)
    assert 'No valid host was found' in str(info.value)
    failed = driver.get(extra.id)
    assert failed.status == base.ERROR
    assert 'No valid host was found' in failed.fault
    # an errored server is still the cluster's, so it can be cleaned up
    assert extra.id in {s.id for s in driver.list(c)}
    driver.delete(extra.id)
    driver.wait_for_state(extra.id, base.DELETED)


def test_anti_affinity_server_group(driver, lab_conf):
    lab_conf.set_override('server_group_policy', 'anti-affinity', 'nova')
    try:
        c = cluster()
        servers = [driver.create('aa-%d' % i, 'm1.tiny',
                                 {base.CLUSTER_TAG: c}) for i in range(2)]
        for server in servers:
            driver.wait_for_state(server.id, base.ACTIVE)
        assert sorted(host_of(driver, s.id) for s in servers) == sorted(HOSTS)
        third = driver.create('aa-2', 'm1.tiny', {base.CLUSTER_TAG: c})
        with pytest.raises(nova.NoValidHost):
            driver.wait_for_state(third.id, base.ACTIVE)
        group = driver.conn.compute.find_server_group('elastman-%s' % c)
        assert group.policy == 'anti-affinity'
    finally:
        lab_conf.clear_override('server_group_policy', 'nova')
