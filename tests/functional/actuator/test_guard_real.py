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
"""The latency guard on real Cassandra nodes: a steady load, then the nodes'
CPU quota is cut by 30% each monitor round (to 0.05 CPU at most) until their
measured p99 enters the warning band; the guard's scale-out is journalled
within two monitor intervals (not one control period) and nothing is
scaled in meanwhile.

The SLO metric is the one new clusters get, ``read_with_queue_p99_ms``.
Then, with the nodes still saturated, each round's p99 of what the load
generator's clients waited for a read is printed beside the hottest node's
metric, its coordinator ``read_p99_ms`` and the slowest of the monitor's
probe requests to it (``probe_max_ms``), with their ratios; the metric must
come closer to what the clients saw than the coordinator's p99 in most of
those rounds.

The monitor (real JMX readings) and the actuator (its manager, controller and
guard) are the real ones; the compute driver the action is carried out with
is a fake, so that the test does not start a fourth JVM: what is under test
is the decision and its journal entry.
"""
import datetime
import math
import time

import pytest

from elastman.actuator import manager as actuator_manager
from elastman.monitor import manager as monitor_manager
from tests.functional.actuator import test_control_loop as loop
from tests.functional.compute import cluster as shared
from tests.functional.monitor import load as load_mod

INTERVAL = 10                # the monitor's sampling interval, seconds
READS, WRITES, SIZE = 300.0, 100.0, 2000
CUT_CPUS = 0.05              # the quota the nodes are cut to, at most
CUT_STEP = 0.7               # the quota's cut per monitor round
SLO_CAP_MS = 100.0           # the highest SLO the baseline may set
METRIC = 'read_with_queue_p99_ms'


@pytest.fixture(scope='module')
def cluster(conf, request):
    return shared.acquire(conf, request.config)


def _register(store, cluster, slo_ms):
    record = store.clusters.create(
        'test', 'guarded', {'mode': 'managed', 'flavor': cluster.flavor},
        policy={'slo_metric': METRIC, 'slo_threshold_ms': slo_ms,
                'min_size': 1, 'max_size': 10, 'warmup_s': 0,
                'control_period_s': 300, 'guard_intervals': 2,
                'guard_warning': 0.8, 'alpha': 1})
    for server in cluster.servers:
        store.nodes.upsert(record['id'], server.id, server_id=server.id,
                           address=server.address, flavor=server.flavor,
                           state='UN', cql_port=server.cql_port,
                           jmx_host=server.jmx_host, jmx_port=server.jmx_port)
    return store.clusters.get(record['id'])


def store_nodes(monitor, record):
    return monitor.store.nodes.list(record['id'])


def _metric(sample):
    return (sample.get('extra') or {}).get(METRIC)


def _round(monitor, actuator, record, log):
    """One monitor round and the actuator after it; ``log`` gets (when it
    ended, each node's SLO metric, each node's coordinator read p99, each
    node's slowest probe). Returns the round's row of the cluster's own
    metrics (None if it has none).
    """
    t0 = time.monotonic()
    began = datetime.datetime.now(datetime.timezone.utc)
    samples = monitor.sample_cluster(record['id'], store_nodes(monitor, record))
    actuator.handle_cluster(record)
    log.append((time.monotonic(), {s['node_id']: _metric(s) for s in samples},
                {s['node_id']: s.get('read_p99_ms') for s in samples},
                {s['node_id']: (s.get('extra') or {}).get('probe_max_ms')
                 for s in samples}))
    rows = monitor.store.samples.cluster_workload(
        record['id'], began - datetime.timedelta(seconds=1))
    time.sleep(max(0.0, INTERVAL - (time.monotonic() - t0)))
    return rows[-1] if rows else None


def _complete(log, since, node_ids):
    """The rounds since ``since`` in which every node gave both metrics (a
    throttled node's JMX may miss a round, and the hottest node is the one
    that counts).
    """
    return [(end, metric, coord, probe) for end, metric, coord, probe in log
            if end - INTERVAL >= since
            and all(metric.get(n) and coord.get(n) for n in node_ids)]


def _closeness(load, rounds, node_ids):
    """Per complete round: the clients' read p99 over the monitor's window,
    and the hottest node's SLO metric, coordinator p99 and slowest probe in
    that round.
    """
    rows = []
    for end, metric, coord, probe in rounds:
        waited = load.window(end - INTERVAL, end, 'read')
        if len(waited) >= 10:
            rows.append((load_mod.p(waited, 0.99),
                         max(metric[n] for n in node_ids),
                         max(coord[n] for n in node_ids),
                         max(probe.get(n) or 0.0 for n in node_ids)))
    return rows


def _cut_levels(quota: float) -> list[float]:
    """``CUT_STEP`` of ``quota``, then of that, ... down to ``CUT_CPUS``:
    steps fine enough that one of them saturates the nodes while they still
    answer.
    """
    levels = []
    while quota * CUT_STEP > CUT_CPUS:
        quota *= CUT_STEP
        levels.append(quota)
    return levels + [CUT_CPUS]


def _set_quotas(groups, cpus: float) -> None:
    for g in groups:
        if g is not None:
            g.set_quota(cpus)


def test_guard_scales_out_within_two_monitor_intervals(cluster, store, keyspace_conf):
    conf = keyspace_conf
    conf.set_override('sampling_interval', INTERVAL, 'monitor')
    conf.set_override('jmx_timeout', 8.0, 'monitor')
    conf.set_override('sample_max_age', 4 * INTERVAL, 'actuator')
    monitor = monitor_manager.MonitorManager(conf, store=store)
    monitor.start()
    driver = loop.FakeDriver(conf)
    actuator = actuator_manager.ActuatorManager(conf, store=store, driver=driver)
    actuator.start()
    load = load_mod.PacedLoad([s.address for s in cluster.servers], 'guardload',
                              READS, WRITES, SIZE, max_in_flight=200)
    groups = [cluster.driver.cpu_cgroup(s.id) for s in cluster.servers]
    quotas = [g.quota() if g is not None else None for g in groups]
    if not any(quotas):
        pytest.skip('no cgroup CPU quota on this host: the nodes cannot be slowed')
    log: list = []
    stopped = False
    try:
        load.start()
        # the baseline: the SLO is set well above what the nodes show now
        record = _register(store, cluster, slo_ms=1000.0)
        # five rounds at least: the nodes' JVMs warm up under the load, and
        # a cold node's p99 is several times a warm one's
        for _ in range(10):
            _round(monitor, actuator, record, log)
            if len(log) >= 5 and all(
                    v for _, p99, _, _ in log[-2:] for v in p99.values()):
                break
        values = sorted(v for _, p99, _, _ in log[-2:]
                        for v in p99.values() if v)
        assert values, 'the nodes gave no latency under load: %s' % log
        # twice the median (a spike of the loaded host does not set it), at
        # most 100 ms: JVMs still cold after five rounds read several
        # hundred ms, and a node cut until it saturates reads 90-110 ms on
        # a two-core host just before its JMX stops answering
        slo = min(SLO_CAP_MS, max(4.0, 2 * values[len(values) // 2]))
        record = store.clusters.update(record['id'], policy=dict(
            record['policy'], slo_threshold_ms=slo))
        print('baseline %s: %s ms; SLO %.1f ms' % (
            METRIC, ', '.join('%.1f' % v for v in values), slo))
        # the quota is cut by CUT_STEP each round until the band is entered,
        # to CUT_CPUS at most: a node cut at once far below what it serves
        # may stop answering JMX and CQL altogether, and then reads no
        # latency
        levels = _cut_levels(max(q for q in quotas if q))
        level = levels.pop(0)
        _set_quotas(groups, level)
        hot_at = None
        for _ in range(24):
            whole = _round(monitor, actuator, record, log) or {}
            # as the guard reads a node: its metric, or where its JMX missed
            # the round, its slowest probe
            _, metric, _, probe = log[-1]
            in_band = [v for v in (metric.get(n) or probe.get(n) for n in metric)
                       if v and v >= 0.8 * slo]
            # hot: more than alpha (1) nodes in the band, or the cluster
            hot = len(in_band) > 1 or (whole.get(METRIC) or 0) >= 0.8 * slo
            if hot and hot_at is None:
                hot_at = log[-1][0]
                print('in the band at %.3f CPU per node' % level)
            print('%.3f CPU: %s' % (level, sorted(
                round(v, 1) for v in log[-1][1].values() if v)))
            decisions = list(store.actions.decisions(record['id'], limit=50))
            guard = [d for d in decisions if d['record'].get('trigger') == 'guard'
                     and d['action'] == 'scale_out']
            if guard:
                break
            if not hot and hot_at is not None:
                # one hot round after a cut (the queue the cut built, a
                # spike of the shared host) is not a band that lasts: the
                # guard waits for guard_intervals hot rounds, so the cuts
                # go on until one lasts
                print('out of the band again at %.3f CPU per node' % level)
                hot_at = None
            if hot_at is None and levels:
                level = levels.pop(0)
                _set_quotas(groups, level)
        assert hot_at is not None, ('the p99 never entered the warning band '
                                    '(SLO %.1f ms): %s' % (slo, log[-5:]))
        assert guard, 'no guard scale-out: %s' % [
            d['record']['reason'] for d in decisions[:5]]
        acted = guard[-1]['ts'].timestamp()
        # within two monitor intervals of the first hot round (the round it
        # was first seen in, and the next one, which makes it last)
        rounds_late = sum(1 for t, *_ in log if hot_at < t)
        assert rounds_late <= 2, (rounds_late, guard[-1]['record']['reason'])
        assert guard[-1]['record']['reason'].startswith('guard: scale out by ')
        actions = [a for a in store.actions.list(record['id'])
                   if a['kind'] == 'scale_out']
        assert actions and actions[0]['params']['trigger'] == 'guard'
        assert not [d for d in decisions if d['action'] == 'scale_in']
        assert acted > 0
        # the saturated nodes, measured until three rounds in which every
        # node answered: what the clients waited for against the monitor's
        # metric (the clients' latencies reach this process when the load
        # stops). The quota stays where the band was entered, or goes up a
        # little from 0.05 CPU so that JMX answers in time; the nodes stay
        # saturated. The interval after the change is left
        # out: the queue built at the cut drains in it, and a client whose
        # request waited there may have been shed or timed out, so the node
        # and the clients do not see the same requests.
        _set_quotas(groups, max(level, 2 * CUT_CPUS))
        since = time.monotonic() + INTERVAL
        ids = [s.id for s in cluster.servers]
        wholes = {}
        for _ in range(10):
            whole = _round(monitor, actuator, record, log)
            if whole is not None:
                wholes[log[-1][0]] = whole
            if len(_complete(log, since, ids)) >= 3:
                break
        load.stop()
        stopped = True
        rows = _closeness(load, _complete(log, since, ids), ids)
        for client, metric, coord, probe in rows:
            print('client read p99 %.1f ms, %s %.1f ms, read_p99_ms %.1f ms, '
                  'probe_max_ms %.1f ms' % (client, METRIC, metric, coord,
                                            probe))
        assert rows, 'no round in which every node answered: %s' % log[-3:]
        # the cluster's own read p99, from the nodes' histograms merged: a
        # quantile of their mixture, so within the nodes' own
        for end, _, coord, _ in _complete(log, since, ids):
            whole = wholes.get(end)
            assert whole is not None and whole['read_p99_ms'] is not None, end
            nodes = [coord[n] for n in ids]
            assert min(nodes) <= whole['read_p99_ms'] <= max(nodes), (whole, coord)
            print('cluster read p99 %.1f ms, %s %s ms' % (
                whole['read_p99_ms'], METRIC, whole[METRIC]))
        print('SLO %.1f ms; rounds over it for the clients: %d of %d' % (
            slo, sum(client > slo for client, *_ in rows), len(rows)))
        # how far the clients' p99 is from the metric: printed, not
        # asserted, as the clients share this machine's two cores with three
        # nodes, and wait for them too (test_real_capacity asserts 1.5x on
        # a node saturated alone; doc/source/monitoring.rst has the runs)
        print('clients / %s: %s' % (METRIC, ', '.join(
            '%.2f' % (client / metric) for client, metric, *_ in rows)))
        print('clients / probe_max_ms: %s' % ', '.join(
            '%.2f' % (client / probe) for client, *_, probe in rows if probe))
        # the queue wait brings the metric closer than the coordinator's p99
        # in most rounds (round by round: a round whose queue drained or
        # built up within the window moves both)
        closer = sum(abs(math.log(m / c)) <= abs(math.log(r / c))
                     for c, m, r, _ in rows)
        assert 2 * closer >= len(rows), rows
    finally:
        for g, q in zip(groups, quotas):
            if g is not None and q:
                g.set_quota(q)
        if not stopped:
            load.stop()
        actuator.stop()
        monitor.stop()
        for name in ('sampling_interval', 'jmx_timeout'):
            conf.clear_override(name, 'monitor')
        conf.clear_override('sample_max_age', 'actuator')
