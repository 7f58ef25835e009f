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
"""Healing a dead node, backing off after failures, and stopping when the
lease is lost: the executor and the actuator's round against in-memory
stand-ins of the store, the compute driver and nodetool (the functional tests
run the same paths on real Cassandra nodes).
"""
import datetime
import uuid

import pytest

from elastman.actuator import backoff
from elastman.actuator import executor as executor_mod
from elastman.actuator import healer
from elastman.actuator import manager as manager_mod
from elastman.actuator import policy as policy_mod
from elastman.actuator import steps as steps_mod
from elastman.cassandra import nodetool
from elastman.common import config
from elastman.compute import base as compute
from tests.unit import fakecompute
from tests.unit import memstore

NOW = 1_800_000_000.0


def _ts(epoch):
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc
                                           ).replace(tzinfo=None)


class FakeDriver(fakecompute.MemoryDriver):
    def __init__(self, conf, replace=True, fail_create=None,
                 flavors=('small',)):
        super().__init__(conf)
        self.created = []
        self.seeds = []
        self.replace, self.fail_create = replace, fail_create
        self.flavor_names = flavors

    @property
    def supports_replace(self):
        return self.replace

    def flavors(self):
        return {name: {} for name in self.flavor_names}

    def create(self, name, flavor, metadata=None, *, seeds=None,
               request=None):
        self.seeds.append(list(seeds or []))
        if self.fail_create:
            raise compute.ComputeError(driver='fake', reason=self.fail_create)
        n = len(self.created) + 1
        server = compute.Server(id='s%d' % n, name=name,
                                address='10.0.0.%d' % (100 + n),
                                flavor=flavor, status=compute.ACTIVE,
                                metadata=dict(metadata or {}), jmx_port=7199)
        self.servers[server.id] = server
        self.created.append(server)
        return server


class FakeRing:
    """nodetool for every node of one ring: who is UN, who is DN."""

    def __init__(self, codes):
        self.codes = dict(codes)        # address -> 'UN' / 'DN'
        self.removed = []

    def __call__(self, host, port):
        return self

    def status(self):
        return [nodetool.NodeStatus('dc1', c[0], c[1], a, 1, 16, 33.3,
                                    str(uuid.uuid5(uuid.NAMESPACE_DNS, a)),
                                    'r1') for a, c in self.codes.items()]

    def removenode_status(self):
        return None           # no removal in progress

    def removenode(self, host_id, timeout=None):
        for address in list(self.codes):
            if str(uuid.uuid5(uuid.NAMESPACE_DNS, address)) == host_id:
                del self.codes[address]
                self.removed.append(address)

    def cleanup(self, timeout=None):
        pass


@pytest.fixture
def conf():
    conf = config.CONF
    conf([], project='elastman', default_config_files=[])
    conf.set_override('join_timeout', 5, 'actuator')
    yield conf
    conf.clear_override('join_timeout', 'actuator')


def _cluster(store, dead_for=600.0, policy=None):
    cid = uuid.uuid4()
    store.clusters.rows[cid] = {
        'id': cid, 'name': 'c', 'state': 'ACTIVE', 'spec': {
            'mode': 'managed', 'flavor': 'small'},
        'policy': dict({'min_size': 3, 'max_size': 5}, **(policy or {})),
        'created_at': _ts(NOW - 86400)}
    for i in (1, 2, 3):
        store.nodes.upsert(cid, 'n%d' % i, server_id='n%d' % i,
                           address='10.0.0.%d' % i, flavor='small',
                           state='UN', seed=i == 1, jmx_host='10.0.0.%d' % i,
                           jmx_port=7199)
    store.nodes.change_state(cid, 'n3', 'DEAD', 'missed its last 2 samples',
                             ('UN',))
    store.nodes.rows[(cid, 'n3')]['state_changed_at'] = _ts(NOW - dead_for)
    return store.clusters.get(cid)


# -- the heal decision ---------------------------------------------------------

def _policy(**kw):
    return policy_mod.ScalingPolicy(**kw)


def _dead(since=NOW - 600, server='s3'):
    return {'node_id': 'n3', 'state': 'DEAD', 'address': '10.0.0.3',
            'flavor': 'small', 'server_id': server,
            'state_changed_at': _ts(since), 'state_reason': 'missed 2'}


def test_no_dead_node_no_heal():
    assert healer.heal_decision(_policy(), [{'node_id': 'n1',
                                             'state': 'UN'}], NOW) is None


def test_dead_node_waits_for_the_grace_period():
    d = healer.heal_decision(_policy(heal_grace_s=900), [_dead()], NOW)
    assert (d.kind, d.blocked_by, d.acts) == ('none', 'grace', False)
    assert '300 s' in d.reason


def test_dead_node_past_grace_is_replaced():
    d = healer.heal_decision(_policy(heal_grace_s=60), [_dead()], NOW)
    assert (d.kind, d.acts, d.remove_nodes) == ('replace', True, ['n3'])
    assert 'DEAD for 600 s: missed 2' in d.reason


@pytest.mark.parametrize('policy,why', [
    ({'dry_run': True}, 'recommended (dry-run)'),
    ({'auto_heal': False}, 'recommended (auto_heal off)')])
def test_replacement_only_recommended(policy, why):
    d = healer.heal_decision(_policy(heal_grace_s=0, **policy), [_dead()],
                             NOW)
    assert d.kind == 'replace' and not d.acts
    assert d.reason.startswith(why)


def test_node_without_server_is_not_replaced():
    d = healer.heal_decision(_policy(heal_grace_s=0), [_dead(server=None)],
                             NOW)
    assert (d.kind, d.blocked_by) == ('none', 'unmanaged')


def test_heal_decision_says_how_and_why():
    def removenode(node):
        return 'removenode', 'flavour small no longer exists', 'medium'
    d = healer.heal_decision(_policy(heal_grace_s=0), [_dead()], NOW,
                             how=removenode)
    assert d.acts and d.inputs['mode'] == 'removenode'
    assert d.inputs['why_removenode'] == 'flavour small no longer exists'
    assert d.reason.endswith(
        'no replacement can take over its tokens (flavour small no longer '
        'exists): nodetool removenode, then a scale-out by one of flavour '
        'medium')
    d = healer.heal_decision(_policy(heal_grace_s=0), [_dead()], NOW,
                             how=lambda node: ('replace', '', 'small'))
    assert d.inputs['mode'] == 'replace'
    assert d.reason.endswith('a new server of flavour small takes over its '
                             'tokens')
    d = healer.heal_decision(_policy(heal_grace_s=0), [_dead()], NOW,
                             how=lambda node: None)   # the cloud did not say
    assert d.acts and 'mode' not in d.inputs


def test_policy_rejects_negative_grace():
    with pytest.raises(policy_mod.InvalidPolicy, match='heal_grace_s'):
        _policy(heal_grace_s=-1)


# -- back-off -------------------------------------------------------------------

def _failed(kind, code, at, state='FAILED'):
    return {'kind': kind, 'state': state, 'updated_at': _ts(at),
            'result': {'failure': {'code': code}}, 'reason': code}


def test_backoff_doubles_per_failure_with_the_same_code():
    journal = [_failed('scale_out', 'no_valid_host', NOW - 10)]
    hold = backoff.hold_for(journal, 'scale_out', NOW, 60, 3600)
    assert (hold.failures, hold.delay_s, hold.until) == (1, 60, NOW + 50)
    journal += [_failed('scale_out', 'no_valid_host', NOW - 500)] * 2
    hold = backoff.hold_for(journal, 'scale_out', NOW, 60, 3600)
    assert (hold.failures, hold.delay_s) == (3, 240)
    journal = [_failed('scale_out', 'no_valid_host', NOW - 10)] * 10
    assert backoff.hold_for(journal, 'scale_out', NOW, 60, 3600).delay_s \
        == 3600


def test_backoff_restarts_with_another_code_or_after_success():
    journal = [_failed('scale_out', 'quota', NOW - 10),
               _failed('scale_out', 'no_valid_host', NOW - 900),
               _failed('scale_out', 'no_valid_host', NOW - 1800)]
    assert backoff.hold_for(journal, 'scale_out', NOW, 60, 3600).failures \
        == 1
    journal = [_failed('scale_out', 'quota', NOW - 10),
               _failed('scale_out', 'quota', NOW - 100, state='SUCCEEDED'),
               _failed('scale_out', 'quota', NOW - 900)]
    assert backoff.hold_for(journal, 'scale_out', NOW, 60, 3600).failures \
        == 1


def test_backoff_is_per_kind_and_ends():
    journal = [_failed('scale_out', 'quota', NOW - 10)]
    assert backoff.hold_for(journal, 'scale_in', NOW, 60, 3600) is None
    assert backoff.hold_for(journal, 'scale_out', NOW + 51, 60, 3600) is None


@pytest.mark.parametrize('error,code', [
    ('server s1 went to ERROR: No valid host was found.', 'no_valid_host'),
    ('Quota exceeded for cores', 'quota'),
    ('node(s) s1 did not join within 900s', 'join_timeout'),
    ('Flavour big not found.', 'flavor_not_found'),
    ('something else', 'ElastmanException')])
def test_failure_codes(error, code):
    from elastman.common import exception
    assert executor_mod.failure_code(exception.ElastmanException(error)) \
        == code


# -- the replace action ---------------------------------------------------------

def _run(conf, store, driver, ring, cluster, kind='replace', holder=None,
         **params):
    executor = executor_mod.ActionExecutor(conf, store, driver,
                                           nodetool_factory=ring,
                                           holder=holder)
    action = store.actions.create(cluster['id'], kind, params,
                                  step='requested')
    return executor, executor.run(action)


#: n3 (10.0.0.3) is down; 10.0.0.101, the first server the driver makes, is
#: up as soon as it exists
N3_DOWN_REPLACED = {'10.0.0.1': 'UN', '10.0.0.2': 'UN', '10.0.0.3': 'DN',
                    '10.0.0.101': 'UN'}


def test_replace_takes_over_the_dead_nodes_tokens(conf):
    store = memstore.MemStore()
    cluster = _cluster(store)
    ring = FakeRing(N3_DOWN_REPLACED)
    driver = FakeDriver(conf)
    driver.servers['n3'] = compute.Server('n3', 'c-3', '10.0.0.3', 'small',
                                          compute.ERROR)
    _ex, done = _run(conf, store, driver, ring, cluster, node='n3')
    assert done['state'] == 'SUCCEEDED', done['reason']
    plan = done['result']['plan']
    assert (plan['mode'], plan['previous']) == ('replace', [])
    [new] = driver.created
    assert new.metadata[compute.REPLACE_ADDRESS] == '10.0.0.3'
    assert new.flavor == 'small'
    assert driver.deleted == ['n3'] and ring.removed == []
    states = {n['node_id']: n['state'] for n in store.nodes.list(
        cluster['id'])}
    assert states == {'n1': 'UN', 'n2': 'UN', new.id: 'UN'}
    assert store.nodes.get(cluster['id'], new.id)['seed'] is False
    # it joins through the live seed, never through the node it replaces
    assert driver.seeds == [['10.0.0.1']]


def test_removenode_then_scale_out_where_replace_is_impossible(conf):
    store = memstore.MemStore()
    cluster = _cluster(store)
    ring = FakeRing(N3_DOWN_REPLACED)
    driver = FakeDriver(conf, replace=False)
    _ex, done = _run(conf, store, driver, ring, cluster, node='n3')
    assert done['state'] == 'SUCCEEDED', done['reason']
    plan = done['result']['plan']
    assert plan['mode'] == 'removenode'
    assert 'cannot boot a replacement' in plan['why_removenode']
    assert ring.removed == ['10.0.0.3']
    [new] = driver.created
    assert compute.REPLACE_ADDRESS not in new.metadata
    assert sorted(plan['previous']) == ['n1', 'n2']   # cleaned up after
    assert 'n3' not in {n['node_id'] for n in store.nodes.list(
        cluster['id'])}


def test_flavour_gone_removes_the_node_and_adds_one_of_another(conf):
    store = memstore.MemStore()
    cluster = _cluster(store, policy={'flavors': ['medium', 'small']})
    ring = FakeRing({'10.0.0.1': 'UN', '10.0.0.2': 'UN', '10.0.0.3': 'DN',
                     '10.0.0.101': 'UN'})
    driver = FakeDriver(conf, flavors=('medium', 'large'))
    _ex, done = _run(conf, store, driver, ring, cluster, node='n3')
    assert done['state'] == 'SUCCEEDED', done['reason']
    plan = done['result']['plan']
    assert (plan['mode'], plan['flavor']) == ('removenode', 'medium')
    assert plan['why_removenode'] == 'flavour small no longer exists'
    assert ring.removed == ['10.0.0.3']
    [new] = driver.created
    assert new.flavor == 'medium'
    assert compute.REPLACE_ADDRESS not in new.metadata


def test_no_flavour_left_fails_with_why_and_keeps_the_node_dead(conf):
    store = memstore.MemStore()
    cluster = _cluster(store)
    ring = FakeRing({'10.0.0.1': 'UN', '10.0.0.2': 'UN', '10.0.0.3': 'DN'})
    driver = FakeDriver(conf, flavors=('large',))
    _ex, done = _run(conf, store, driver, ring, cluster, node='n3')
    assert done['state'] == 'FAILED'
    assert ('no flavour to replace node n3 with: flavour small no longer '
            "exists, and none of the cluster's flavours exists"
            in done['reason']), done['reason']
    assert ring.removed == [] and driver.created == []
    assert store.nodes.get(cluster['id'], 'n3')['state'] == 'DEAD'


def test_failed_replacement_rolls_back_and_leaves_the_node_dead(conf):
    store = memstore.MemStore()
    cluster = _cluster(store)
    driver = FakeDriver(conf, fail_create='No valid host was found')
    ring = FakeRing({'10.0.0.1': 'UN', '10.0.0.2': 'UN', '10.0.0.3': 'DN'})
    _ex, done = _run(conf, store, driver, ring, cluster, node='n3')
    assert done['state'] == 'FAILED'
    assert done['result']['failure']['code'] == 'no_valid_host'
    assert 'No valid host' in done['reason']
    assert store.nodes.get(cluster['id'], 'n3')['state'] == 'DEAD'


def test_lost_lease_stops_the_action_at_the_next_checkpoint(conf):
    store = memstore.MemStore()
    cluster = _cluster(store)
    ring = FakeRing(N3_DOWN_REPLACED)
    driver = FakeDriver(conf)
    lease = steps_mod.lease_name(cluster['id'])
    store.leases.acquire(lease, 'a1', 60)
    executor = executor_mod.ActionExecutor(conf, store, driver,
                                           nodetool_factory=ring, holder='a1')

    def steal(point):
        if point == 'planned':   # another actuator took the cluster over
            store.leases.holders[lease] = 'a2'
    executor.checkpoint_hook = steal
    action = store.actions.create(cluster['id'], 'replace', {'node': 'n3'},
                                  step='requested')
    after = executor.run(action)
    journal = store.actions.get(cluster['id'], action['id'])
    # stopped, not failed and not rolled back: a2 resumes from 'planned'
    assert (journal['step'], journal['state']) == ('planned', 'RUNNING')
    assert after['step'] == 'planned'
    assert driver.created == [] and driver.deleted == []
    # the new holder finishes it
    other = executor_mod.ActionExecutor(conf, store, driver,
                                        nodetool_factory=ring, holder='a2')
    done = other.run(journal)
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert len(driver.created) == 1


def test_lease_is_rechecked_inside_a_long_join(conf, monkeypatch):
    store = memstore.MemStore()
    cluster = _cluster(store)
    ring = FakeRing({'10.0.0.1': 'UN', '10.0.0.2': 'UN', '10.0.0.3': 'DN'})
    driver = FakeDriver(conf)
    lease = steps_mod.lease_name(cluster['id'])
    executor = executor_mod.ActionExecutor(conf, store, driver,
                                           nodetool_factory=ring, holder='a1')
    monkeypatch.setattr(steps_mod, 'LEASE_CHECK_INTERVAL', 0)
    sleeps = []

    def sleep(seconds):   # the join never ends; the lease moves meanwhile
        sleeps.append(seconds)
        store.leases.holders[lease] = 'a2'
    monkeypatch.setattr(executor_mod.time, 'sleep', sleep)
    action = store.actions.create(cluster['id'], 'replace', {'node': 'n3'},
                                  step='requested')
    executor.run(action)
    journal = store.actions.get(cluster['id'], action['id'])
    assert (journal['step'], journal['state']) == ('creating', 'RUNNING')
    assert len(sleeps) == 1
    assert len(driver.servers) == 1   # the new server is left to a2


# -- the actuator round ---------------------------------------------------------

class InlinePool:
    """Runs submitted actions at once, in the caller's thread."""

    def submit(self, fn, *args):
        from concurrent import futures
        future = futures.Future()
        future.set_result(fn(*args))
        return future


def _manager(conf, store, driver, ring):
    mgr = manager_mod.ActuatorManager(conf, store, driver=driver)
    mgr.executor = executor_mod.ActionExecutor(
        conf, store, driver, nodetool_factory=ring, holder=conf.host)
    mgr._pool = InlinePool()
    return mgr


def test_round_replaces_a_dead_node_once_and_records_why(conf):
    store = memstore.MemStore()
    cluster = _cluster(store, dead_for=600, policy={'heal_grace_s': 60,
                                                    'control_period_s': 60})
    ring = FakeRing(N3_DOWN_REPLACED)
    driver = FakeDriver(conf)
    mgr = _manager(conf, store, driver, ring)
    mgr.controller.decide = lambda *a, **k: pytest.fail('decided instead')
    mgr.handle_cluster(store.clusters.get(cluster['id']), NOW)
    [action] = store.actions.list(cluster['id'])
    assert (action['kind'], action['state']) == ('replace', 'SUCCEEDED')
    [(_c, _ts, kind, record)] = store.actions.decisions
    assert kind == 'replace'
    assert record['inputs']['dead_node'] == 'n3'
    assert 'beyond heal_grace_s=60' in record['reason']
    assert record['inputs']['mode'] == 'replace'
    # the next round finds nothing dead: no second replacement
    mgr.controller.decide = lambda *a, **k: None
    mgr.handle_cluster(store.clusters.get(cluster['id']), NOW + 30)
    assert len(store.actions.list(cluster['id'])) == 1
    assert len(driver.created) == 1


def test_round_records_why_the_dead_node_is_removed_instead(conf):
    store = memstore.MemStore()
    cluster = _cluster(store, policy={'heal_grace_s': 0,
                                      'flavors': ['small', 'medium']})
    ring = FakeRing({'10.0.0.1': 'UN', '10.0.0.2': 'UN', '10.0.0.3': 'DN',
                     '10.0.0.101': 'UN'})
    driver = FakeDriver(conf, flavors=('medium',))
    mgr = _manager(conf, store, driver, ring)
    mgr.handle_cluster(store.clusters.get(cluster['id']), NOW)
    [action] = store.actions.list(cluster['id'])
    assert action['state'] == 'SUCCEEDED', action['reason']
    assert action['result']['plan']['mode'] == 'removenode'
    [(_c, _ts, kind, record)] = store.actions.decisions
    assert (kind, record['inputs']['mode']) == ('replace', 'removenode')
    assert ('(flavour small no longer exists): nodetool removenode, then a '
            'scale-out by one of flavour medium') in record['reason']
    assert [s.flavor for s in driver.created] == ['medium']


def test_failing_scale_out_backs_off_instead_of_churning(conf):
    """A scale-out that fails every time (no valid host) is tried at
    periods 0, 1, 3, 7 of 12, not at every period.
    """
    conf.set_override('backoff_base', 60, 'actuator')
    store = memstore.MemStore()
    cluster = _cluster(store, policy={'control_period_s': 60,
                                      'auto_heal': False})
    store.nodes.upsert(cluster['id'], 'n3', state='UN')
    driver = FakeDriver(conf, fail_create='No valid host was found')
    ring = FakeRing({'10.0.0.1': 'UN', '10.0.0.2': 'UN', '10.0.0.3': 'UN'})
    mgr = _manager(conf, store, driver, ring)
    from elastman.actuator import decision as decision_mod

    def decide(cluster, now, record=True):
        return decision_mod.Decision(kind='scale_out', reason='measured',
                                     at=now, flavor='small', count=1)
    mgr.controller.decide = decide
    tried = []
    for period in range(12):
        now = NOW + 60 * period
        before = len(store.actions.list(cluster['id']))
        # the journal's clock is the test's
        for row in store.actions.rows.values():
            if row['state'] == 'FAILED' and 'at' not in row:
                row['at'] = now - 60
                row['updated_at'] = _ts(now - 60)
        mgr.handle_cluster(store.clusters.get(cluster['id']), now)
        if len(store.actions.list(cluster['id'])) > before:
            tried.append(period)
    conf.clear_override('backoff_base', 'actuator')
    assert tried == [0, 1, 3, 7]
    held = [r for (_c, _t, k, r) in store.actions.decisions
            if r['blocked_by'] == 'backoff']
    assert len(held) == 8
    assert 'back-off 480 s after 4 failure(s) in a row: no_valid_host' \
        in held[-1]['reason']
    assert held[-1]['inputs']['backoff']['code'] == 'no_valid_host'
    assert all(a['state'] == 'FAILED' for a in store.actions.list(
        cluster['id']))
    assert driver.created == []


# -- scale-in of a small cluster ------------------------------------------------

class RefusingTool:
    """nodetool decommission that Cassandra refuses unless forced."""

    def __init__(self):
        self.calls = []

    def netstats(self):
        return {'mode': 'NORMAL'}

    def decommission(self, progress=None, timeout=None, force=False):
        self.calls.append(force)
        if not force:
            from elastman.common import exception
            raise exception.NodetoolError(
                command='decommission', node='n2', reason=(
                    'nodetool: Not enough live nodes to maintain replication '
                    'factor in keyspace system_distributed (RF = 3, N = 1). '
                    'Perform a forceful decommission to ignore.'))


@pytest.mark.parametrize('rf,forced', [(1, [False, True]), (2, [False])])
def test_decommission_forced_only_when_the_data_keeps_its_rf(conf, rf,
                                                             forced):
    store = memstore.MemStore()
    cluster = _cluster(store, policy={'min_size': 1, 'replication_factor': rf})
    store.nodes.delete(cluster['id'], 'n3')
    store.nodes.upsert(cluster['id'], 'n2', state='LEAVING')
    tool = RefusingTool()
    executor = executor_mod.ActionExecutor(conf, store, FakeDriver(conf),
                                           nodetool_factory=lambda h, p: tool)
    node = store.nodes.get(cluster['id'], 'n2')
    if forced[-1]:
        executor._decommission_node({'cluster_id': cluster['id']}, node)
    else:
        from elastman.common import exception
        with pytest.raises(exception.NodetoolError, match='forceful'):
            executor._decommission_node({'cluster_id': cluster['id']}, node)
    assert tool.calls == forced
