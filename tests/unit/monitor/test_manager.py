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
import threading
import time
from typing import Callable
import uuid

import pytest

from elastman.common import config as em_config
from elastman.monitor import jmx
from elastman.monitor import manager as monitor_manager
from elastman.monitor import readings
from elastman.monitor import sources
from elastman.monitor.sources import jmx as jmx_source
from tests.unit.store import fakes


@pytest.fixture
def conf():
    conf = em_config.CONF
    conf([], project='elastman', default_config_files=[])
    conf.set_override('sampling_interval', 2, 'monitor')
    conf.set_override('cql_timeout', 0.3, 'monitor')
    conf.set_override('jmx_timeout', 0.5, 'monitor')
    yield conf
    for name in ('sampling_interval', 'cql_timeout', 'jmx_timeout'):
        conf.clear_override(name, 'monitor')


class FakeSamples:
    def __init__(self):
        self.samples, self.totals = [], []

    def add(self, sample):
        self.samples.append(sample)

    def add_many(self, samples):
        self.samples.extend(samples)

    def add_cluster_workload(self, cluster_id, ts, **total):
        self.totals.append(total)


class FakeCredentials:
    def __init__(self):
        self.document = None

    def get(self, cluster_id):
        return self.document


class FakeStore:
    def __init__(self, cluster_id, nodes):
        self.samples = FakeSamples()
        self.cluster_id = cluster_id
        self._nodes = nodes
        self.clusters = self
        self.nodes = self
        self.leases = fakes.FakeLeases()
        self.members = fakes.FakeMembers()
        self.credentials = FakeCredentials()
        self.row = {'id': cluster_id, 'status_reason': None}

    def all(self):
        return [dict(self.row)]

    def get(self, cluster_id):
        return dict(self.row)

    def update(self, cluster_id, **fields):
        self.row.update(fields)

    def list(self, cluster_id):
        return self._nodes

    def list_many(self, cluster_ids):
        return {c: self._nodes for c in cluster_ids}


def node(name, address):
    return {'node_id': name, 'address': address, 'cql_port': 9042,
            'jmx_host': '127.0.0.1', 'jmx_port': 7199, 'state': 'ACTIVE'}


#: How long the hung node's ping blocks unless released: a guard against a
#: test that hangs, not a speed target.
HUNG_S = 60.0


@pytest.fixture
def hung():
    """The hung node's ping: ``release`` ends it, ``returned`` says it ended."""
    return {'release': threading.Event(), 'returned': threading.Event()}


@pytest.fixture
def mgr(conf, monkeypatch, hung):
    cid = uuid.uuid4()
    store = FakeStore(cid, [node('a', '10.0.0.1'), node('b', '10.0.0.2'),
                            node('c', '10.0.0.3')])
    m = monitor_manager.MonitorManager(conf, store=store)
    counts = {'a': 0}
    release = hung['release']

    def ping(target, requests=1):
        if target.address == '10.0.0.2':
            raise ConnectionError('refused')        # down
        if target.address == '10.0.0.3':
            release.wait(HUNG_S)                    # hangs
            hung['returned'].set()

    def read(target):
        counts['a'] += 100
        return readings.Reading(mono=time.monotonic(), source='jmx',
                                reads=counts['a'], writes=counts['a'] // 2,
                                read_latency=[0] * 128,
                                write_latency=[0] * 128)
    monkeypatch.setattr(m.cql_reader, 'ping', ping)
    monkeypatch.setattr(m.source, 'read', read)
    yield m
    release.set()
    m.stop()


def test_down_and_hung_nodes_do_not_stall_others(mgr, hung):
    first = {s['node_id']: s for s in mgr.sample_all()}
    # the round ended while the hung node's ping was still blocked
    assert not hung['returned'].is_set()
    assert first['a']['up'] and not first['b']['up'] and not first['c']['up']
    second = {s['node_id']: s for s in mgr.sample_all()}
    assert second['a']['reads_per_s'] > 0
    assert second['a']['writes_per_s'] == pytest.approx(
        second['a']['reads_per_s'] / 2, rel=0.01)
    assert not second['c']['up']
    store = mgr.store
    assert len(store.samples.samples) == 6
    assert store.samples.totals[-1]['nodes_up'] == 1
    assert store.samples.totals[-1]['nodes_total'] == 3
    assert 'sampling 3 node(s) of 1 cluster(s)' in mgr.describe()


def test_jmx_failure_falls_back_to_cql(mgr, monkeypatch):
    def broken(target):
        raise sources.SourceError(source='jmx', where='x', reason='refused')

    def cql_read(target):
        return readings.Reading(mono=time.monotonic(), source='cql',
                                reads=7, writes=3)
    monkeypatch.setattr(mgr.source, 'read', broken)
    monkeypatch.setattr(mgr.cql_reader, 'read', cql_read)
    samples = {s['node_id']: s for s in mgr.sample_all()}
    assert samples['a']['up']
    assert samples['a']['extra'] == {'jmx': 0.0, 'cql_only': 1.0}


class FakeHostAgents:
    def __init__(self):
        self.pushed = []

    def push_latency(self, ctxt, server, vm, latency_ms, jmx_host=None,
                     jmx_port=None):
        self.pushed.append((server, vm, latency_ms))
        self.endpoints = (jmx_host, jmx_port)


def _slow_reads(**extra):
    """A source's read: 100 more reads each time, all in bucket 60."""
    reads = {'n': 0}

    def read(target):
        reads['n'] += 100
        hist = [0] * 128
        hist[60] = reads['n']
        return readings.Reading(mono=time.monotonic(), source='jmx',
                                reads=reads['n'], writes=0, read_latency=hist,
                                write_latency=[0] * 128, **extra)
    return read


def test_latencies_go_to_the_agent_of_the_compute_host(mgr, monkeypatch):
    nodes = mgr.store._nodes
    nodes[0].update(host='cmp-1', server_id='vm-a')      # up, on a known host
    nodes[1].update(host='cmp-2', server_id='vm-b')      # down: nothing to say
    mgr.hostagents = FakeHostAgents()
    monkeypatch.setattr(mgr.source, 'read', _slow_reads())
    mgr.sample_all()
    second = {s['node_id']: s for s in mgr.sample_all()}
    assert second['a']['read_p99_ms'] > 0
    assert mgr.hostagents.pushed[-1] == ('cmp-1', 'vm-a',
                                         second['a']['read_p99_ms'])
    assert {p[:2] for p in mgr.hostagents.pushed} == {('cmp-1', 'vm-a')}
    # where the agent can poll the node's histogram itself
    assert mgr.hostagents.endpoints == ('127.0.0.1', 7199)


def test_each_round_stores_the_clusters_own_read_p99(mgr, monkeypatch):
    monkeypatch.setattr(mgr.source, 'read', _slow_reads(queue_wait=[0] * 128))
    mgr.sample_all()
    assert 'read_p99_ms' not in mgr.store.samples.totals[-1]   # one reading
    second = {s['node_id']: s for s in mgr.sample_all()}
    total = mgr.store.samples.totals[-1]
    assert total['read_p99_ms'] == second['a']['read_p99_ms'] > 0
    # nothing queued: the queue-inclusive metric is the read p99
    assert total['read_with_queue_p99_ms'] == total['read_p99_ms']


def test_no_rpc_api():
    # the monitor's products are in the store; it serves no topic
    assert monitor_manager.MonitorManager.target is None


class FakeBridge:
    """A JMX bridge whose answer to each query is ``answer(pattern)``."""

    timeout = 1.0

    def __init__(self, answer: Callable[[str], list[dict]]) -> None:
        self._answer = answer

    def submit(self, host, port, pattern, attrs, ops, access=None):
        return pattern

    def result(self, pattern):
        return self._answer(pattern)


def test_jmx_reader_filters_keyspaces():
    def answer(pattern):
        if 'Queued' in pattern:
            return [{'name': 'o.a.c.m:type=Client,name=Queued',
                     'attrs': {'Count': 3}, 'ops': {'values': [1, 2]}}]
        if 'MutationSize' in pattern:
            return [{'name': 'x', 'attrs': {'Count': 4},
                     'ops': {'values': [0, 4]}}]
        return [
            {'name': 'o.a.c.m:type=Table,keyspace=ks,scope=t,name=N',
             'attrs': {'Count': 10}, 'ops': {'values': [10, 0]}},
            {'name': 'o.a.c.m:type=Table,keyspace=ks2,scope=t,name=N',
             'attrs': {'Count': 5}, 'ops': {'values': [0, 5]}},
            {'name': 'o.a.c.m:type=Table,keyspace=system,scope=l,name=N',
             'attrs': {'Count': 99}, 'ops': {'values': [99, 0]}},
            {'name': 'o.a.c.m:type=Table,keyspace=elastman,scope=l,'
                     'name=N',
             'attrs': {'Count': 99}, 'ops': {'values': [99, 0]}}]
    reader = jmx_source.JmxSource(None, frozenset({'system', 'elastman'}),
                                  bridge=FakeBridge(answer))
    got = reader.read(readings.Target('10.0.0.1', jmx_port=7199))
    assert got.reads == 15 and got.read_latency == [10, 5]
    assert got.write_size == [0, 4]
    assert got.queue_wait == [1, 2]


def test_sources_are_stevedore_drivers_chosen_by_configuration(conf):
    source = sources.load(conf, frozenset())
    assert isinstance(source, jmx_source.JmxSource)
    assert source.name == 'jmx' and source.timeout == 0.5
    conf.set_override('metrics_source', 'nonesuch', 'monitor')
    try:
        with pytest.raises(Exception) as err:
            sources.load(conf, frozenset())
        assert '[monitor] metrics_source' in str(err.value)
        assert 'nonesuch' in str(err.value)
    finally:
        conf.clear_override('metrics_source', 'monitor')


def test_jmx_failure_is_a_source_error():
    def answer(pattern):
        raise jmx.JmxError(where='127.0.0.1:7199',
                           reason='connection refused')
    source = jmx_source.JmxSource(None, frozenset(), bridge=FakeBridge(answer))
    with pytest.raises(sources.SourceError) as err:
        source.read(readings.Target('10.0.0.1', jmx_port=7199))
    assert 'connection refused' in str(err.value)
    assert '10.0.0.1:7199' in str(err.value)


def test_nodes_are_read_with_the_clusters_access(mgr, monkeypatch):
    mgr.store.credentials.document = {
        'credentials': {'username': 'mon', 'password': 'pw'},
        'tls': {'cql': True, 'jmx': False}}
    seen = []

    def ping(target, requests=1):
        seen.append(target.access)
    monkeypatch.setattr(mgr.cql_reader, 'ping', ping)
    mgr.sample_all()
    assert seen and all(a.username == 'mon' and a.password == 'pw'
                        and a.cql_tls and not a.jmx_tls for a in seen)


def test_refused_credentials_show_on_the_cluster(mgr, monkeypatch):
    from elastman.cassandra import access

    def refuse(target, requests=1):
        raise access.AccessDenied(service='CQL', where=target.address,
                                  who="user 'mon'", reason='Bad credentials')
    monkeypatch.setattr(mgr.cql_reader, 'ping', refuse)
    samples = mgr.sample_all()
    assert not any(s['up'] for s in samples)
    reason = mgr.store.row['status_reason']
    assert reason.startswith('monitor: CQL at 10.0.0.') and \
        "refused user 'mon': Bad credentials" in reason
    monkeypatch.setattr(mgr.cql_reader, 'ping', lambda target, requests=1: None)
    mgr.sample_all()
    assert mgr.store.row['status_reason'] is None
    # a reason the monitor did not write is left alone
    mgr.store.row['status_reason'] = 'scale_out done'
    mgr.sample_all()
    assert mgr.store.row['status_reason'] == 'scale_out done'


class FakeHosts:
    def __init__(self, index):
        self.index = index
        self.asked = []

    def interference(self, nodes, now, max_age):
        self.asked.append(max_age)
        return self.index


def test_samples_carry_the_host_agents_interference_index(mgr):
    mgr.store.hosts = FakeHosts({'a': 0.4, 'b': 0.9})   # b is down
    mgr.sample_all()
    second = {s['node_id']: s for s in mgr.sample_all()}
    assert second['a']['extra']['interference_index'] == 0.4
    assert 'interference_index' not in (second['b'].get('extra') or {})
    assert mgr.store.hosts.asked[-1] == \
        mgr.conf.monitor.interference_max_age
