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
"""The control loop on real inputs: samples in the store train the real
capacity models, the real predictor forecasts the workload, and the actuator
decides from both, records why, and journals the action.

Only the compute driver and nodetool are fakes here: the real ones are
exercised by test_executor_local.py.
"""
import datetime

import numpy as np

from elastman.actuator import executor as executor_mod
from elastman.actuator import manager as actuator_manager
from elastman.compute import base as compute
from elastman.predictor import manager as predictor_manager
from elastman.trainer import manager as trainer_manager
from tests.unit.capacity import synthetic
from tests.unit import fakecompute

NODES = ('n1', 'n2', 'n3')


class FakeDriver(fakecompute.MemoryDriver):
    def create(self, name, flavor, metadata=None, **kwargs):
        server = compute.Server(id='s%d' % len(self.servers), name=name,
                                address='10.0.0.%d' % len(self.servers),
                                flavor=flavor, status=compute.ACTIVE,
                                metadata=dict(metadata or {}), jmx_port=7199)
        self.servers[server.id] = server
        return server


class FakeNodetool:
    """Every node is UN at once; operations succeed."""

    def __init__(self, driver):
        self.driver = driver

    def __call__(self, host, port):
        return self

    def status(self):
        from elastman.cassandra import nodetool
        return [nodetool.NodeStatus('dc1', 'U', 'N', s.address, 1, 16, None,
                                    s.id, 'r1')
                for s in self.driver.servers.values()]

    def cleanup(self, **kwargs):
        pass

    def decommission(self, **kwargs):
        pass

    def netstats(self):
        return {'mode': 'NORMAL'}


def _cluster(store, name, trend, now, vm, rng):
    """A 3-node cluster whose VMs were seen around their capacity and whose
    total workload follows ``trend(minute)`` over the last three hours.
    """
    cluster = store.clusters.create(
        'p', name, spec={'mode': 'managed', 'flavor': 'small'},
        policy={'min_size': 1, 'max_size': 10, 'flavors': ['small'],
                'warmup_s': 0, 'cooldown_s': 0, 'control_period_s': 60,
                'slo_threshold_ms': synthetic.SLO_MS})
    start = now - 3 * 3600
    for node in NODES:
        store.nodes.upsert(cluster['id'], node, flavor='small', state='UN',
                           address=node, jmx_host='127.0.0.1', jmx_port=1,
                           seed=node == 'n1', server_id='srv-' + node)
        for i in range(360):   # a walk around the capacity surface
            share, size = rng.uniform(0.3, 0.7), rng.uniform(1024, 3072)
            load = rng.uniform(0.2, 1.8) * vm.capacity(share, size)
            r, w = share * load, (1 - share) * load
            store.samples.add({
                'cluster_id': cluster['id'], 'node_id': node,
                'ts': _dt(start + 30 * i), 'up': True, 'reads_per_s': r,
                'writes_per_s': w, 'read_bytes_mean': size,
                'write_bytes_mean': size, 'read_p99_ms': vm.p99(r, w, size)})
        # the current mix: half reads, 2 KiB requests, an even share
        store.samples.add({
            'cluster_id': cluster['id'], 'node_id': node, 'ts': _dt(now - 5),
            'up': True, 'reads_per_s': trend(180) / 6,
            'writes_per_s': trend(180) / 6, 'read_bytes_mean': 2048.0,
            'write_bytes_mean': 2048.0, 'read_p99_ms': 5.0})
    for minute in range(180):
        total = trend(minute) + rng.normal(0, trend(minute) * 0.01)
        store.samples.add_cluster_workload(
            cluster['id'], _dt(start + 60 * minute), total / 2, total / 2, 3,
            3)
    return store.clusters.get(cluster['id'])


def _dt(ts):
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc)


def _loop(conf, store, cluster, now):
    trainer_manager.TrainerManager(conf, store=store).train_cluster(
        cluster, now=now)
    # a forecast step of the clusters' control period (60 s)
    conf.set_override('step', 60, 'predictor')
    try:
        predictor = predictor_manager.PredictorManager(conf, store=store)
        for minutes_ago in range(30, -1, -1):   # the forecasters earn weights
            predictor.predict_cluster(cluster, now=now - 60 * minutes_ago)
    finally:
        conf.clear_override('step', 'predictor')
    driver = FakeDriver(conf)
    for node in store.nodes.list(cluster['id']):   # the cluster's servers
        driver.servers[node['server_id']] = compute.Server(
            id=node['server_id'], name=node['node_id'],
            address=node['address'], flavor='small', status=compute.ACTIVE,
            metadata={compute.CLUSTER_TAG: str(cluster['id'])},
            jmx_port=7199)
    actuator = actuator_manager.ActuatorManager(conf, store=store,
                                                driver=driver)
    actuator.start()
    actuator.executor = executor_mod.ActionExecutor(
        conf, store, driver, nodetool_factory=FakeNodetool(driver))
    try:
        actuator.handle_cluster(cluster, now=now)
        actuator.wait_idle(timeout=60)
    finally:
        actuator.stop()
    record = store.actions.decisions(cluster['id'])[0]['record']
    actions = list(store.actions.list(cluster['id']))
    return record, actions


def test_scale_out_ahead_of_a_ramp_and_in_when_it_falls(conf, store):
    vm = synthetic.SyntheticVM(seed=11)
    capacity = vm.capacity(0.5, 2048)           # ~8,400 req/s per VM
    now = datetime.datetime.now(datetime.timezone.utc).timestamp()
    now += 120 - now % 60   # a round minute after the clusters are made
    rng = np.random.default_rng(11)

    # Flat, then a steep ramp that is still below the cluster's capacity
    # (0.95 of it) now: only the forecast calls for more VMs.
    def rising_load(m):
        return 3 * capacity * (0.3 + 0.65 * max(0, m - 140) / 40)
    rising = _cluster(store, 'rising', rising_load, now, vm, rng)

    # Falling to a fifth of a VM's worth each: one VM goes, never the seed.
    # Made now, before the first loop runs, so that both clusters exist
    # before ``now`` however slow the machine is.
    def falling_load(m):
        return 3 * capacity * (0.6 - 0.4 * m / 180)
    falling = _cluster(store, 'falling', falling_load, now, vm, rng)

    record, actions = _loop(conf, store, rising, now)
    assert record['kind'] == 'scale_out', record['reason']
    assert record['inputs']['forecast_used'] is True
    assert record['inputs']['forecast']['reads_per_s']['forecaster']
    assert record['inputs']['model_versions']['flavor']['small'] >= 1
    predicted = {n: w['reads_per_s'] + w['writes_per_s']
                 for n, w in record['inputs']['per_vm_workload'].items()}
    over = [v for v in record['vms'] if v['load'] > v['capacity']]
    assert len(over) > 1, record['vms']           # more than alpha = 1
    assert sum(predicted.values()) > rising_load(180)   # predicted > now
    assert actions[0]['kind'] == 'scale_out'
    assert actions[0]['state'] == 'SUCCEEDED', actions[0]['reason']
    assert len(store.nodes.list(rising['id'])) == 3 + record['count']

    record, actions = _loop(conf, store, falling, now)
    assert record['kind'] == 'scale_in', record['reason']
    assert actions[0]['kind'] == 'scale_in'
    assert actions[0]['state'] == 'SUCCEEDED', actions[0]['reason']
    remaining = {n['node_id'] for n in store.nodes.list(falling['id'])}
    assert 'n1' in remaining and len(remaining) == 3 - record['count']
