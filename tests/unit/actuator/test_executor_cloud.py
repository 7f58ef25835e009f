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
"""The executor against a cloud: the cluster's project and request, the
seeds it hands new nodes, quota, failures, and registered rings (with an
in-memory store, driver and nodetool)."""
import pytest

from elastman.actuator import executor as executor_mod
from elastman.cassandra import nodetool
from elastman.common import exception
from elastman.compute import base as compute
from tests.unit import fakecompute
from tests.unit import memstore


class Cloud(fakecompute.MemoryDriver):
    """Servers come up ACTIVE at once; records what was asked."""

    def __init__(self, conf=None, project=None):
        super().__init__(conf)
        self.project = project
        self.created = []
        self.scopes = []
        self.quota_left = None
        self.released = []
        self.fail_create = None

    def scoped(self, project_id, trust_id):
        self.scopes.append((project_id, trust_id))
        return self

    def create(self, name, flavor, metadata=None, *, seeds=None,
               request=None):
        if self.fail_create:
            raise self.fail_create
        index = len(self.created) + 1
        server = compute.Server(
            id='s%d' % index, name=name, address='10.0.0.%d' % index,
            flavor=flavor, status=compute.ACTIVE,
            metadata=dict(metadata or {}), jmx_host='10.0.0.%d' % index,
            jmx_port=7199, project_id=self.project)
        self.servers[server.id] = server
        self.created.append((name, list(seeds or []), request))
        return server

    def check_quota(self, flavor, count):
        if self.quota_left is not None and count > self.quota_left:
            raise compute.QuotaExceeded(project=self.project,
                                        reason='instances: no room')

    def release(self, cluster_id):
        self.released.append(cluster_id)


class Ring:
    """nodetool of a ring in which every server the cloud made is UN."""

    def __init__(self, cloud, extra=()):
        self.cloud = cloud
        self.extra = list(extra)
        self.calls = []
        self.host = None
        self.log = []      # (operation, host) of cleanups and decommissions

    def __call__(self, host, port):
        self.calls.append((host, port))
        self.host = host
        return self

    def status(self):
        members = [s.address for s in self.cloud.servers.values()]
        return [nodetool.NodeStatus('dc1', 'U', 'N', a, 1, 16, 33.3,
                                    '00000000-0000-0000-0000-%012d' % i,
                                    'rack1')
                for i, a in enumerate(members + self.extra)]

    def describe_cluster(self):
        return {'name': 'Shop Cluster'}

    def cleanup(self, timeout=None):
        self.log.append(('cleanup', self.host))

    def netstats(self):
        return {'mode': 'NORMAL'}

    def decommission(self, progress=None, timeout=None):
        self.log.append(('decommission', self.host))
        self.cloud.servers = {k: v for k, v in self.cloud.servers.items()
                              if v.address != self.host}


SPEC = {'mode': 'managed', 'flavor': 'small', 'image': 'img-1',
        'networks': ['net-a'], 'security_groups': ['cassandra'],
        'trust_id': 'trust-1'}


def make_world(conf, cloud, ring_class=Ring):
    """A store with cluster c1 (CREATING, no node), ``cloud``, a ring of
    its servers (a ``ring_class``) and an executor on them.
    """
    conf.set_override('join_timeout', 5, 'actuator')
    store = memstore.MemStore()
    store.clusters.rows['c1'] = {'id': 'c1', 'name': 'shop',
                                 'project_id': 'proj-a', 'state': 'CREATING',
                                 'spec': dict(SPEC), 'policy': {}}
    ring = ring_class(cloud)
    executor = executor_mod.ActionExecutor(conf, store, cloud,
                                           nodetool_factory=ring)
    return store, cloud, ring, executor


@pytest.fixture
def world(conf):
    return make_world(conf, Cloud(project='proj-a'))


def _run(store, executor, kind, **params):
    return executor.run(store.actions.create('c1', kind, params))


def test_create_in_the_project_with_the_request_and_seeds(world):
    store, cloud, _ring, executor = world
    done = _run(store, executor, 'create', count=3, flavor='small')
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert ('proj-a', 'trust-1') in cloud.scopes
    request = compute.ServerRequest(image='img-1', networks=['net-a'],
                                    security_groups=['cassandra'])
    assert [c[2] for c in cloud.created] == [request] * 3
    # the first node seeds itself, the next ones join through the seeds
    assert [c[1] for c in cloud.created] == [
        [], ['10.0.0.1'], ['10.0.0.1', '10.0.0.2']]
    assert store.clusters.get('c1')['state'] == 'ACTIVE'


def test_quota_is_checked_before_any_server(world):
    store, cloud, _ring, executor = world
    cloud.quota_left = 2
    done = _run(store, executor, 'create', count=3, flavor='small')
    assert done['state'] == 'FAILED'
    assert 'Quota of project proj-a exceeded' in done['reason']
    assert cloud.created == [] and cloud.servers == {}
    cluster = store.clusters.get('c1')
    assert cluster['state'] == 'ERROR'       # nothing was made
    assert 'Quota of project proj-a exceeded' in cluster['status_reason']


def test_failed_create_leaves_no_server(world):
    store, cloud, _ring, executor = world
    cloud.fail_create = compute.ComputeError(driver='fake',
                                             reason='Image img-1 not found')
    done = _run(store, executor, 'create', count=2, flavor='small')
    assert done['state'] == 'FAILED'
    assert 'Image img-1 not found' in done['reason']
    assert cloud.servers == {} and store.nodes.list('c1') == []
    assert store.clusters.get('c1')['state'] == 'ERROR'


def test_delete_releases_the_server_group(world):
    store, cloud, _ring, executor = world
    _run(store, executor, 'create', count=1, flavor='small')
    store.clusters.update('c1', spec=dict(SPEC, trust_id=None))
    done = _run(store, executor, 'delete', count=0)
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert cloud.servers == {} and cloud.released == ['c1']
    with pytest.raises(exception.NotFound):
        store.clusters.get('c1')


def _registered(store, seeds):
    store.clusters.rows['c1'].update(
        state='ACTIVE', spec={'mode': 'registered', 'jmx_port': 7199,
                              'cql_port': 9042, 'trust_id': 'trust-1',
                              'seeds': ['%s:9042' % s for s in seeds]})
    for seed in seeds:
        store.nodes.upsert('c1', seed, address=seed, seed=True,
                           state='UNKNOWN')


def test_register_maps_the_ring_and_never_removes_what_it_does_not_manage(
        world):
    store, cloud, ring, executor = world
    for _ in range(2):
        cloud.create('vm', 'small', {})        # the tenant's own servers
    ring.extra = ['192.168.7.7']               # a node without a server
    cloud.created.clear()
    _registered(store, ['10.0.0.1'])
    done = _run(store, executor, 'register', count=1)
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert done['result']['mapped'] == ['10.0.0.1', '10.0.0.2']
    assert done['result']['unmapped'] == ['192.168.7.7']
    nodes = {n['node_id']: n for n in store.nodes.list('c1')}
    assert set(nodes) == {'s1', 's2', '192.168.7.7'}
    assert nodes['s1']['seed'] and not nodes['s2']['seed']
    assert nodes['192.168.7.7']['server_id'] is None
    spec = store.clusters.get('c1')['spec']
    assert spec['cluster_name'] == 'Shop Cluster'
    assert spec['flavor'] == 'small'
    assert ring.calls[0] == ('10.0.0.1', 7199)

    # scaling in by two: only the one removable non-seed can go
    done = _run(store, executor, 'scale', count=1)
    assert done['state'] == 'FAILED'
    assert '2 of the 3 serving nodes have a server' in done['reason']
    assert len(cloud.servers) == 2
    done = _run(store, executor, 'scale_in', nodes=['192.168.7.7'])
    assert done['state'] == 'FAILED'
    assert 'elastman does not remove them' in done['reason']
    done = _run(store, executor, 'scale', count=2)
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert sorted(n['node_id'] for n in store.nodes.list('c1')) == [
        '192.168.7.7', 's1']
    assert list(cloud.servers) == ['s1']


def test_register_fails_clearly_when_no_seed_answers(world, monkeypatch):
    store, _cloud, ring, executor = world
    _registered(store, ['10.9.9.9'])

    def refuse():
        raise exception.NodetoolError(command='status', node='10.9.9.9',
                                      reason='Connection refused')
    monkeypatch.setattr(ring, 'status', refuse)
    done = _run(store, executor, 'register', count=1)
    assert done['state'] == 'FAILED'
    assert 'no seed answers on JMX' in done['reason']
    assert 'Connection refused' in done['reason']


def _marked(store):
    return sorted(n['node_id'] for n in store.nodes.list('c1')
                  if (n.get('details') or {}).get('cleanup_pending'))


def test_a_scale_out_defers_its_cleanup_to_the_next_removal(world):
    store, _cloud, ring, executor = world
    _run(store, executor, 'create', count=3, flavor='small')
    ring.log.clear()
    done = _run(store, executor, 'scale_out', count=2, flavor='small')
    assert done['state'] == 'SUCCEEDED', done['reason']
    # the scale-out ends at the join: no cleanup, the old nodes marked
    assert ring.log == []
    assert _marked(store) == ['s1', 's2', 's3']
    assert done['result']['cleanup'] == 'deferred on 3 node(s)'
    # a scale-in first cleans up the marked nodes that stay, then removes
    done = _run(store, executor, 'scale_in', nodes=['s1'])
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert ring.log == [('cleanup', '10.0.0.2'), ('cleanup', '10.0.0.3'),
                        ('decommission', '10.0.0.1')]
    assert _marked(store) == []


class GossipLag(Ring):
    """A ring whose old nodes see the newest server joining (UJ) for the
    first ``lag`` times they are asked, while it already says UN itself.
    """

    lag = 2

    def __init__(self, cloud):
        super().__init__(cloud)
        self.peer_views = []     # (asked host, code it gave the newest)

    def status(self):
        members = super().status()
        newest = members[len(self.cloud.servers) - 1]
        if self.host != newest.address and len(self.cloud.servers) > 3:
            code = 'J' if len(self.peer_views) < self.lag else 'N'
            self.peer_views.append((self.host, 'U' + code))
            newest.state = code
        return members


def test_a_joined_node_waits_until_a_peer_sees_it_normal(conf, monkeypatch):
    store, _cloud, ring, executor = make_world(
        conf, Cloud(project='proj-a'), GossipLag)
    _run(store, executor, 'create', count=3, flavor='small')
    monkeypatch.setattr(executor_mod.time, 'sleep', lambda seconds: None)
    done = _run(store, executor, 'scale_out', count=1, flavor='small')
    assert done['state'] == 'SUCCEEDED', done['reason']
    # the seed was asked until its gossip had the new node UN
    views = [view for view in ring.peer_views if view[0] == '10.0.0.1']
    assert views[:3] == [('10.0.0.1', 'UJ'), ('10.0.0.1', 'UJ'),
                         ('10.0.0.1', 'UN')]
    assert store.nodes.get('c1', 's4')['state'] == 'UN'


def test_without_a_peer_that_answers_the_node_s_own_word_decides(
        conf, monkeypatch):
    store, _cloud, ring, executor = make_world(
        conf, Cloud(project='proj-a'), GossipLag)
    _run(store, executor, 'create', count=3, flavor='small')
    peers = {'10.0.0.1', '10.0.0.2', '10.0.0.3'}
    status = GossipLag.status

    def unreachable_peers(self):
        if self.host in peers:
            raise exception.NodetoolError(
                command='status', node=self.host,
                reason='Connection refused')
        return status(self)

    monkeypatch.setattr(GossipLag, 'status', unreachable_peers)
    done = _run(store, executor, 'scale_out', count=1, flavor='small')
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert ring.peer_views == []
    assert store.nodes.get('c1', 's4')['state'] == 'UN'


def test_a_failed_cleanup_keeps_the_mark(world, monkeypatch):
    store, _cloud, ring, executor = world
    _run(store, executor, 'create', count=3, flavor='small')
    _run(store, executor, 'scale_out', count=1, flavor='small')

    def fail(timeout=None):
        raise exception.NodetoolError(command='cleanup', node='s1',
                                      reason='disk full')
    monkeypatch.setattr(ring, 'cleanup', fail)
    done = _run(store, executor, 'scale_in', nodes=['s4'])
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert len(done['result']['warnings']) == 3
    assert 'disk full' in done['result']['warnings'][0]
    assert _marked(store) == ['s1', 's2', 's3']


def test_cleanup_after_join_when_the_policy_says_so(world):
    store, _cloud, ring, executor = world
    store.clusters.rows['c1']['policy'] = {'cleanup': 'after_join'}
    _run(store, executor, 'create', count=3, flavor='small')
    ring.log.clear()
    done = _run(store, executor, 'scale_out', count=1, flavor='small')
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert ring.log == [('cleanup', '10.0.0.1'), ('cleanup', '10.0.0.2'),
                        ('cleanup', '10.0.0.3')]
    assert _marked(store) == [] and 'cleanup' not in done['result']


class TokenRing(Ring):
    """A ring whose nodes hold 16 tokens each; logs status calls among the
    cloud's creates.
    """

    def __init__(self, cloud, events):
        super().__init__(cloud)
        self.events = events

    def status(self):
        self.events.append('status')
        return super().status()

    def ring_tokens(self):
        return [i * 2 ** 58 for i in range(-32, 32, 2)]


class TokenCloud(Cloud):
    supports_initial_tokens = True

    def __init__(self, events, **kwargs):
        super().__init__(**kwargs)
        self.events = events

    def create(self, name, flavor, metadata=None, **kwargs):
        self.events.append('create')
        return super().create(name, flavor, metadata, **kwargs)


@pytest.fixture
def token_world(conf, world):
    store, _cloud, _ring, _executor = world
    events = []
    cloud = TokenCloud(events, project='proj-a')
    ring = TokenRing(cloud, events)
    executor = executor_mod.ActionExecutor(conf, store, cloud,
                                           nodetool_factory=ring)
    _run(store, executor, 'create', count=2, flavor='small')
    return store, cloud, ring, executor, events


def _tokens(server):
    return [int(t) for t in
            server.metadata[compute.INITIAL_TOKENS].split(',')]


def test_concurrent_joins_create_the_group_together_with_tokens(
        conf, token_world):
    store, cloud, ring, executor, events = token_world
    # the first nodes of a new cluster join one at a time, tokens their own
    assert all(compute.INITIAL_TOKENS not in s.metadata
               for s in cloud.servers.values())
    conf.set_override('concurrent_joins', 2, 'actuator')
    events.clear()
    done = _run(store, executor, 'scale_out', count=3, flavor='small')
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert not [w for w in done['result'].get('warnings', [])
                if 'concurrent_joins' in w], done['result']['warnings']
    # +3 with two at a time: two servers created back to back, joined,
    # then the third
    creates = [i for i, e in enumerate(events) if e == 'create']
    assert len(creates) == 3 and creates[1] == creates[0] + 1
    assert 'status' in events[creates[1]:creates[2]]
    given = [_tokens(cloud.servers[s]) for s in ('s3', 's4')]
    assert [len(t) for t in given] == [16, 16]
    flat = [t for tokens in given for t in tokens]
    assert len(set(flat)) == 32
    assert not set(flat) & set(ring.ring_tokens())
    # the last one joins alone: Cassandra allocates its tokens
    assert compute.INITIAL_TOKENS not in cloud.servers['s5'].metadata


def test_concurrent_joins_fall_back_to_one_at_a_time(conf, token_world):
    store, cloud, _ring, executor, events = token_world
    cloud.supports_initial_tokens = False
    conf.set_override('concurrent_joins', 3, 'actuator')
    events.clear()
    done = _run(store, executor, 'scale_out', count=2, flavor='small')
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert done['result']['warnings'] == [
        'concurrent_joins 3: the fake compute driver cannot give a new node '
        'its tokens; joining one at a time']
    creates = [i for i, e in enumerate(events) if e == 'create']
    assert 'status' in events[creates[0]:creates[1]]
    assert all(compute.INITIAL_TOKENS not in s.metadata
               for s in cloud.servers.values())


def test_concurrent_joins_need_the_ring_s_tokens(conf, token_world):
    store, cloud, ring, executor, _events = token_world
    ring.ring_tokens = lambda: []        # nodetool ring printed nothing
    conf.set_override('concurrent_joins', 2, 'actuator')
    done = _run(store, executor, 'scale_out', count=2, flavor='small')
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert done['result']['warnings'] == [
        'concurrent_joins 2: no ring to place tokens in (nodetool ring lists '
        'no token); joining one at a time']
    assert all(compute.INITIAL_TOKENS not in s.metadata
               for s in cloud.servers.values())
