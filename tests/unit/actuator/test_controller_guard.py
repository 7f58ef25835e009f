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
"""The guard reads the cluster's own p99, which the monitor measures from the
nodes' merged histograms, beside each node's.
"""
import datetime

import pytest

from elastman.actuator import controller as controller_mod
from tests.unit.actuator import test_controller_seen as seen

NOW = seen.NOW
ROUNDS = [datetime.datetime.fromtimestamp(NOW - 10 - 10 * k, datetime.timezone.utc
                                          ).replace(tzinfo=None) for k in range(3)]


class Samples:
    """Three nodes, green each (their queue-inclusive p99 is 10 ms), and the
    cluster's own p99 per round.
    """

    def __init__(self, cluster_p99):
        self.cluster_p99 = cluster_p99

    def newest(self, cluster_id, node_ids, limit=1):
        return {n: [dict(seen.CURRENT, ts=ts, extra={'read_with_queue_p99_ms': 10.0})
                    for ts in ROUNDS[:limit]] for n in node_ids}

    def cluster_workload(self, cluster_id, since):
        # oldest first, as the store answers
        return [{'ts': ts, 'reads_per_s': 2475.0, 'read_p99_ms': 12.0,
                 'read_with_queue_p99_ms': value}
                for ts, value in zip(reversed(ROUNDS), reversed(self.cluster_p99))]


class Store(seen.FakeStore):
    def __init__(self, cluster_p99):
        super().__init__()
        self.samples = Samples(cluster_p99)

    def list(self, cluster_id, limit=None):
        if limit is None:
            return [{'node_id': n, 'flavor': 'm1', 'state': 'UN', 'seed': n == 'n1'}
                    for n in ('n1', 'n2', 'n3')]
        return []

    def decisions(self, cluster_id, limit=20):
        return []


def _guard(conf, cluster_p99, slo_metric='read_with_queue_p99_ms'):
    cluster = {'id': 'c1', 'created_at': None,
               'policy': {'min_size': 3, 'max_size': 9, 'warmup_s': 0,
                          'slo_metric': slo_metric, 'slo_threshold_ms': 35.0}}
    return controller_mod.Controller(conf, Store(cluster_p99)).guard(
        cluster, now=NOW, record=False)


def test_a_red_cluster_p99_fires_the_guard_while_each_node_is_green(conf):
    # newest first: the cluster's p99 is over the SLO in the newest round
    d = _guard(conf, [50.0, 20.0, 20.0])
    assert d is not None and d.kind == 'scale_out' and d.trigger == 'guard'
    assert 'cluster p99 50.0 ms' in d.reason
    assert d.inputs['guard']['colour'] == 'red'
    assert d.inputs['guard']['in_band'] == []          # no node in the band


@pytest.mark.parametrize('cluster_p99, fires', [
    ([30.0, 30.0, 20.0], True),        # yellow (>= 28 ms) for two rounds
    ([30.0, 20.0, 20.0], False),       # yellow for one round only
    ([20.0, 20.0, 20.0], False),       # green
])
def test_a_yellow_cluster_p99_must_last(conf, cluster_p99, fires):
    d = _guard(conf, cluster_p99)
    assert (d is not None and d.kind == 'scale_out') == fires


def test_a_metric_the_monitor_does_not_measure_for_the_cluster(conf):
    # write_p99_ms has no cluster-wide value: the nodes alone decide
    assert _guard(conf, [50.0, 50.0, 50.0], slo_metric='write_p99_ms') is None


@pytest.mark.parametrize('cluster_p99, step', [
    ([50.0, 20.0, 20.0], 1),           # red: the guard's fixed step (no model)
    ([30.0, 30.0, 20.0], 0),           # yellow: the planning loop's own count
])
def test_the_planning_loop_gets_the_guards_step_in_a_red_round(
        conf, monkeypatch, cluster_p99, step):
    seen_steps = []
    plan = controller_mod.planning.plan

    def spy(*args, **kwargs):
        seen_steps.append(args[9] if len(args) > 9 else kwargs.get('red_step'))
        return plan(*args, **kwargs)

    monkeypatch.setattr(controller_mod.planning, 'plan', spy)
    cluster = {'id': 'c1', 'created_at': None,
               'policy': {'min_size': 3, 'max_size': 9, 'warmup_s': 0,
                          'slo_metric': 'read_with_queue_p99_ms',
                          'slo_threshold_ms': 35.0}}
    controller_mod.Controller(conf, Store(cluster_p99)).decide(cluster, now=NOW,
                                                               record=False)
    assert [s[0] for s in seen_steps] == [step]


class BandSamples(Samples):
    """Node n2 was in the band (30 ms, >= 28) the round before the newest."""

    def newest(self, cluster_id, node_ids, limit=1):
        out = super().newest(cluster_id, node_ids, limit)
        for k, row in enumerate(out.get('n2', [])):
            row['extra'] = {'read_with_queue_p99_ms': 30.0 if k == 1 else 10.0}
        return out


def test_a_vm_in_the_band_a_round_ago_holds_the_planning_loops_scale_in(
        conf, monkeypatch):
    states = []
    plan = controller_mod.planning.plan

    def spy(*args, **kwargs):
        states.append(args[1])
        return plan(*args, **kwargs)

    monkeypatch.setattr(controller_mod.planning, 'plan', spy)
    store = Store([20.0] * 3)
    store.samples = BandSamples([20.0] * 3)
    cluster = {'id': 'c1', 'created_at': None,
               'policy': {'min_size': 3, 'max_size': 9, 'warmup_s': 0,
                          'slo_metric': 'read_with_queue_p99_ms',
                          'slo_threshold_ms': 35.0}}
    d = controller_mod.Controller(conf, store).decide(cluster, now=NOW, record=False)
    assert [s.in_warning_band for s in states] == [['n2']]
    assert d.inputs['guard']['in_band'] == [] and d.inputs['guard']['held'] == ['n2']


class GrowingStore(Store):
    """A scale-out of one server is still creating it (node n4, JOINING);
    ``top_up`` answers as the journal would: the action, or None when it
    moved on.
    """

    ACTION = {'id': '5c7a7e86-0b7e-11f1-8b1e-0242ac120002', 'kind': 'scale_out',
              'state': 'RUNNING', 'step': 'creating',
              'params': {'count': 1, 'flavor': 'm2'},
              'result': {'servers': ['n4']}}

    def __init__(self, cluster_p99, moved_on=False):
        super().__init__(cluster_p99)
        self.moved_on = moved_on
        self.top_ups, self.recorded = [], []

    def unfinished(self, cluster_id):
        return [dict(self.ACTION)]

    def top_up(self, cluster_id, action_id, count, record):
        self.top_ups.append((str(action_id), count, record['trigger']))
        return None if self.moved_on else dict(self.ACTION)

    def record_decision(self, cluster_id, ts, action, record):
        self.recorded.append((action, record['blocked_by']))


def _top_up(conf, moved_on=False):
    store = GrowingStore([50.0, 20.0, 20.0], moved_on)
    cluster = {'id': 'c1', 'created_at': None,
               'policy': {'min_size': 3, 'max_size': 9, 'warmup_s': 0,
                          'guard_step': 1.0, 'slo_threshold_ms': 35.0,
                          'slo_metric': 'read_with_queue_p99_ms'}}
    controller = controller_mod.Controller(conf, store)
    d = controller.guard(cluster, now=NOW, record=False)
    return store, d, controller.action_for(cluster, d)


def test_a_red_round_tops_up_the_scale_out_still_creating(conf):
    store, d, action = _top_up(conf)
    # the step is the whole cluster (guard_step 1.0 of 3 VMs, no model):
    # 3, of which the action in flight adds 1
    assert (d.kind, d.count, d.flavor) == ('scale_out', 2, 'm2')
    assert d.top_up_of == GrowingStore.ACTION['id']
    assert store.top_ups == [(GrowingStore.ACTION['id'], 2, 'guard')]
    assert action['id'] == GrowingStore.ACTION['id'] and store.recorded == []


def test_a_top_up_the_action_outran_is_recorded_as_no_action(conf):
    store, d, action = _top_up(conf, moved_on=True)
    assert action is None
    assert (d.kind, d.blocked_by) == ('none', 'in_flight')
    assert d.reason.startswith('no action: the scale-out in flight stopped '
                               'creating servers before its top-up landed')
    assert store.recorded == [('none', 'in_flight')]


class ShrinkingStore(GrowingStore):
    """A scale-in of n2 and n3 in flight: n2 is leaving, n3 not yet."""

    ACTION = {'id': '5c7a7e86-0b7e-11f1-8b1e-0242ac120003', 'kind': 'scale_in',
              'state': 'RUNNING', 'step': 'decommissioning',
              'params': {'nodes': ['n2', 'n3']},
              'result': {'leaving': 'n2', 'decommissioned': []}}

    def __init__(self, cluster_p99, moved_on=False):
        super().__init__(cluster_p99, moved_on)
        self.keeps = []

    def keep(self, cluster_id, action_id, nodes, record):
        self.keeps.append((str(action_id), nodes, record['trigger']))
        return None if self.moved_on else dict(self.ACTION)


@pytest.mark.parametrize('moved_on', [False, True])
def test_a_red_round_keeps_what_the_scale_in_has_not_begun_to_remove(conf, moved_on):
    store = ShrinkingStore([50.0, 20.0, 20.0], moved_on)
    cluster = {'id': 'c1', 'created_at': None,
               'policy': {'min_size': 3, 'max_size': 9, 'warmup_s': 0,
                          'slo_threshold_ms': 35.0,
                          'slo_metric': 'read_with_queue_p99_ms'}}
    controller = controller_mod.Controller(conf, store)
    d = controller.guard(cluster, now=NOW, record=False)
    assert (d.kind, d.trim_of, d.keep_nodes) == ('trim', ShrinkingStore.ACTION['id'],
                                                 ['n3'])
    action = controller.action_for(cluster, d)
    assert store.keeps == [(ShrinkingStore.ACTION['id'], ['n3'], 'guard')]
    if moved_on:
        assert action is None and (d.kind, d.blocked_by) == ('none', 'in_flight')
        assert d.reason.startswith('no action: the scale-in in flight had begun to '
                                   'remove those nodes or ended before its trim')
        assert store.recorded == [('none', 'in_flight')]
    else:
        assert action['id'] == ShrinkingStore.ACTION['id'] and store.recorded == []


class SilentSamples(Samples):
    """n1 and n2 are red (50 ms) in the two older rounds and do not answer
    the newest, where n3 alone answers green; the monitor measured no
    cluster-wide p99 (the slow nodes' histograms are missing).
    """

    def newest(self, cluster_id, node_ids, limit=1):
        def row(ts, value):
            if value is None:
                return dict(seen.CURRENT, ts=ts, up=False)
            return dict(seen.CURRENT, ts=ts, extra={'read_with_queue_p99_ms': value})
        readings = {'n1': [None, 50.0, 50.0], 'n2': [None, 50.0, 50.0],
                    'n3': [10.0, 10.0, 10.0]}
        return {n: [row(ts, v) for ts, v in zip(ROUNDS, readings[n])][:limit]
                for n in node_ids}

    def cluster_workload(self, cluster_id, since):
        return []


def test_nodes_that_miss_a_round_keep_their_reading_in_it(conf):
    store = Store([None, None, None])
    store.samples = SilentSamples(None)
    cluster = {'id': 'c1', 'created_at': None,
               'policy': {'min_size': 3, 'max_size': 9, 'warmup_s': 0,
                          'slo_metric': 'read_with_queue_p99_ms',
                          'slo_threshold_ms': 35.0}}
    d = controller_mod.Controller(conf, store).guard(cluster, now=NOW, record=False)
    # the newest round reads red: n1 and n2 carry their 50 ms into it
    assert d is not None and d.kind == 'scale_out' and d.trigger == 'guard'
    assert d.inputs['guard']['red'] == ['n1', 'n2']
    assert d.inputs['guard']['hot_rounds'] == 3


class ProbedSamples(Samples):
    """n1 and n2 read ``older`` ms in the two older rounds; in the newest
    their latency source did not answer (no SLO metric), and their CQL
    probes took ``probe`` ms at the slowest; n3 is green throughout.
    """

    def __init__(self, older, probe, up=True):
        super().__init__(None)
        self.older, self.probe, self.up = older, probe, up

    def newest(self, cluster_id, node_ids, limit=1):
        def row(ts, node, k):
            if node != 'n3' and k == 0:
                return dict(seen.CURRENT, ts=ts, up=self.up, read_p99_ms=None,
                            extra={'probe_max_ms': self.probe})
            value = 10.0 if node == 'n3' else self.older
            extra = {'read_with_queue_p99_ms': value, 'probe_max_ms': 8.0}
            return dict(seen.CURRENT, ts=ts, extra=extra)
        return {n: [row(ts, n, k) for k, ts in enumerate(ROUNDS)][:limit]
                for n in node_ids}

    def cluster_workload(self, cluster_id, since):
        return []


def _probed_guard(conf, older, probe, up=True):
    store = Store([None, None, None])
    store.samples = ProbedSamples(older, probe, up)
    cluster = {'id': 'c1', 'created_at': None,
               'policy': {'min_size': 3, 'max_size': 9, 'warmup_s': 0,
                          'slo_metric': 'read_with_queue_p99_ms',
                          'slo_threshold_ms': 35.0}}
    return controller_mod.Controller(conf, store).guard(cluster, now=NOW, record=False)


def test_nodes_whose_latency_source_is_silent_read_their_slowest_probe(conf):
    # green by their metric until JMX stopped answering; the probes waited
    # 60 ms (SLO 35 ms): red in the newest round
    d = _probed_guard(conf, older=10.0, probe=60.0)
    assert d is not None and d.kind == 'scale_out' and d.trigger == 'guard'
    assert d.inputs['guard']['red'] == ['n1', 'n2']
    assert d.inputs['guard']['hot_rounds'] == 1


def test_a_fast_probe_does_not_cool_a_node_whose_source_is_silent(conf):
    # yellow (30 ms >= 28) by their metric; a quick probe leaves them yellow
    d = _probed_guard(conf, older=30.0, probe=9.0)
    assert d is not None and d.kind == 'scale_out' and d.trigger == 'guard'
    assert d.inputs['guard']['in_band'] == ['n1', 'n2']
    assert d.inputs['guard']['red'] == []
    assert d.inputs['guard']['hot_rounds'] == 3


def test_the_probe_of_a_node_down_is_not_its_latency(conf):
    # a node that did not answer at all is the healer's; it keeps its reading
    assert _probed_guard(conf, older=10.0, probe=2000.0, up=False) is None


@pytest.mark.parametrize('cluster_p99, loads', [
    ([20.0, 20.0, 20.0], False),       # green: nothing to size
    ([30.0, 20.0, 20.0], True),        # yellow: a step may be sized
    ([50.0, 20.0, 20.0], True),        # red
])
def test_the_guard_loads_the_capacity_models_only_off_green(
        conf, monkeypatch, cluster_p99, loads):
    loaded = []
    load = controller_mod.model_state.load_capacity
    monkeypatch.setattr(controller_mod.model_state, 'load_capacity',
                        lambda *a, **kw: loaded.append(a) or load(*a, **kw))
    _guard(conf, cluster_p99)
    assert bool(loaded) == loads
