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
"""elastman's YCSB Cassandra binding against a real Cassandra node.

Builds the driver with tools/ycsb/install.sh (a no-op when it is up to date),
loads a few hundred records into a keyspace of this test's own on the
session's store node and runs a short mixed phase: YCSB's report must show
the expected operation counts and no failures.
"""
import os
import shutil
import subprocess
import uuid

from cassandra.cluster import Cluster
from cassandra.policies import RoundRobinPolicy
import pytest

from elastman.evaluation import ycsb

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
RECORDS = 300


def _cluster(hosts, port):
    return Cluster(hosts, port=port, protocol_version=5,
                   load_balancing_policy=RoundRobinPolicy())


@pytest.fixture(scope='module')
def ycsb_lib(tmp_path_factory):
    if shutil.which('mvn') is None and not os.path.isdir(
            os.path.expanduser(ycsb.DEFAULT_LIB_DIR)):
        pytest.skip('maven is not installed and the YCSB driver is not built')
    subprocess.run([os.path.join(REPO, 'tools', 'ycsb', 'install.sh')],
                   check=True, timeout=900)
    return os.path.expanduser(ycsb.DEFAULT_LIB_DIR)


@pytest.fixture
def target(store_node, ycsb_lib):
    keyspace = 'ycsb_%s' % uuid.uuid4().hex[:10]
    yield ycsb.Target(hosts=[store_node.spec.address],
                      port=store_node.spec.cql_port, keyspace=keyspace,
                      recordcount=RECORDS, replication_factor=1,
                      lib_dir=ycsb_lib)
    with _cluster([store_node.spec.address], store_node.spec.cql_port) as cql:
        cql.connect().execute('DROP KEYSPACE IF EXISTS %s' % keyspace,
                              timeout=60)


def test_load_and_run(target, tmp_path):
    runner = ycsb.Runner(target, str(tmp_path))
    load = runner.load(ycsb.Phase('load', duration_s=60, target=0,
                                  read_proportion=0, update_proportion=0,
                                  insert_proportion=1, fieldcount=4,
                                  fieldlength=200, threads=4))
    assert load.returncode == 0, open(load.log_path).read()[-3000:]
    assert load.summary['ops']['INSERT']['operations'] == RECORDS
    assert ycsb.failures(load.summary) == 0

    with _cluster(target.hosts, target.port) as cql:
        row = cql.connect().execute('SELECT * FROM %s.usertable LIMIT 1'
                                    % target.keyspace).one()
    assert len(row.field0) == 200

    phase = ycsb.Phase('mixed', duration_s=20, target=50,
                       read_proportion=0.8, update_proportion=0.2,
                       fieldcount=4, fieldlength=200, threads=4)
    seen = []
    run = runner.run(phase, on_status=lambda p, t, s: seen.append(s))
    assert run.returncode == 0, open(run.log_path).read()[-3000:]
    ops = run.summary['ops']
    reads, updates = ops['READ']['operations'], ops['UPDATE']['operations']
    # ~50 ops/s for ~20 s, split about 80/20
    assert 600 <= reads + updates <= 1100, (reads, updates)
    assert 0.65 < reads / (reads + updates) < 0.95
    assert ops['READ']['returns'] == {'OK': reads}
    assert ycsb.failures(run.summary) == 0
    assert ops['READ']['p99_us'] > 0
    assert seen and seen[-1]['operations'] > 0

    # a target under MIN_THREAD_OPS per thread: YCSB itself would stop
    # every thread at once and run no operation; with fewer threads it paces
    slow = ycsb.Phase('slow', duration_s=20, target=10, read_proportion=1.0,
                      update_proportion=0, fieldcount=4, fieldlength=200,
                      threads=64)
    assert slow.client_threads == 20
    crawl = runner.run(slow)
    assert crawl.returncode == 0, open(crawl.log_path).read()[-3000:]
    assert 'bound must be positive' not in open(crawl.log_path).read()
    assert 100 <= crawl.summary['ops']['READ']['operations'] <= 260
    assert ycsb.failures(crawl.summary) == 0

    ycsb.write_results([load, run], str(tmp_path / 'phases.csv'),
                       str(tmp_path / 'phases.json'))
    lines = (tmp_path / 'phases.csv').read_text().splitlines()
    assert len(lines) == 3 and lines[2].startswith('mixed,run,')
