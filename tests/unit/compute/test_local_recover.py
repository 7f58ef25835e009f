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
"""The local cloud's recovery when several worker processes share it."""
import json
import os
import subprocess
import sys
import time

import pytest

from elastman.compute import local


def _building(conf, server_id: str, builder_pid: int, age: float = 0.0) -> str:
    state = os.path.join(conf.state_path, 'local-cloud', server_id)
    os.makedirs(state)
    with open(os.path.join(state, local.SERVER_FILE), 'w') as f:
        json.dump({'id': server_id, 'name': server_id, 'flavor': 'm1.small',
                   'metadata': {}, 'address': '127.0.99.2', 'cql_port': 9042,
                   'storage_port': 7000, 'jmx_port': 17199,
                   'created_at': time.time() - age, 'building': True,
                   'builder_pid': builder_pid, 'seeds': []}, f)
    return state


@pytest.fixture
def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, '-c', 'pass'])
    child.wait()
    return child.pid


def test_recover_keeps_a_server_another_live_process_is_building(conf):
    state = _building(conf, 'in-progress', os.getppid())
    local.LocalDriver(conf)
    assert os.path.isdir(state)


def test_recover_removes_a_server_whose_builder_died(conf, dead_pid):
    state = _building(conf, 'orphan', dead_pid)
    local.LocalDriver(conf)
    assert not os.path.exists(state)


def test_recover_removes_a_build_older_than_the_timeout(conf):
    state = _building(conf, 'stale', os.getppid(),
                      age=local.BUILD_TIMEOUT + 1)
    local.LocalDriver(conf)
    assert not os.path.exists(state)


def test_concurrent_writes_of_one_record_leave_no_temporary_file(conf):
    state = _building(conf, 'shared', os.getppid())
    first, second = local.LocalDriver(conf), local.LocalDriver(conf)
    record = first._read('shared')
    for driver in (first, second, first):
        driver._write(dict(record, building=False))
    assert os.listdir(state) == [local.SERVER_FILE]
    assert second._read('shared')['building'] is False


def test_recover_keeps_a_build_whose_node_file_is_being_written(conf):
    # another process is between creating node.json and filling it
    state = _building(conf, 'half-written', os.getppid())
    open(os.path.join(state, 'node.json'), 'w').close()
    local.LocalDriver(conf)
    assert os.path.isdir(state)
