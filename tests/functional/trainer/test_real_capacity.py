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
"""Real data (issue 4): the capacity the trainer learns from the monitor's
samples of a real node agrees with the node's measured saturation point.

One local node, warmed up with a whole CPU, then held to half a CPU. Its
reads count a 2,000-row partition (about a millisecond of CPU each, a
52-byte answer), so that the node's CPU, not the Python client's, is what
saturates (simple 4 KB reads did not saturate a 0.15-CPU node below
1,000 req/s, and at that quota the latency floor was noise from CFS
throttling and GC, not load). The offered rate steps up until the node has
served clearly less than offered in two steps; the monitor samples it the
whole time and the trainer fits the cluster's model from those samples
alone.

Measured on the 2-core development machine (3.5 min a run; offered req/s:
the monitor's served req/s and read p99):

=====  ==========================  ==========================  ========
run    last step within the SLO    saturated step              capacity
=====  ==========================  ==========================  ========
1      175: 166-183, 61-106 ms     350: 247-253, 455-546 ms    200
2      175: 172-177, 43-88 ms      350: 275-317, 455 ms        200
3      175: 166-169, 73 ms         450: 272-338, 455 ms        200
4      250: 223-283, 152-219 ms    350: 288-298, 455 ms        230
5      350: 339-343, 183-219 ms    450: 290-402, 379 ms        267
=====  ==========================  ==========================  ========

In run 5 the saturated step's second interval served 290 req/s at 379 ms,
less than the met step before it: a violated cell below a met one, and
the model's boundary on that cell's lower edge (267 req/s). A second run of
the same code had the same shape (313 req/s at 316 ms after 339-345 met;
267). The test's lower bound is therefore one cell along the mix (67 req/s)
below the lowest load seen over the SLO, or below the most served within
it where that is lower.

In runs 1-3 the 250 req/s step served 223-262 req/s at a p99 of 316-455 ms:
the SLO (250 ms) is crossed before the throughput saturates, and the
capacity lies on the cell edge between the two (cells are 50 req/s of reads
wide); in run 4 that step stayed within the SLO and the boundary moved up. One
more run failed on an earlier rule of this test that took a step with one
sample on each side of the SLO as met (that step served 250 req/s; the
model's capacity was 200 there too).

One saturated step was not always enough. In one run the 350 req/s step
met the SLO (p99 127 and 219 ms) and the saturated step's two intervals
served 267 req/s at 379 ms and 376 req/s at 316 ms. The second landed in
the cell of the 350 step's samples, which stayed met (two of three), so
that met cell dominated the newer violated one below it. That cell was
dropped as contradicted, and the model had met cells only. A second
saturated step gives the plateau enough samples over the SLO.

On a CI host the first two steps each had one sample just over the SLO
(100 req/s: 263 and 152 ms; 175 req/s: 786 and 88 ms) and no step counted
as met. A step whose two samples straddle the SLO now takes a third, and a
step is met when most of its samples are, as the trainer labels a cell at
its default confidence of 0.5; the warm-up waits for three good samples
in a row instead of two.

With the SVM's C at 1 the test was flaky: when the 175 req/s step had one
sample over the SLO, one met cell faced three violated ones and the soft
margin put the boundary at 69 req/s, under the met 99. At C=10 (the default
since) three runs gave 134 (that shape), 200 and 200 req/s.
"""
from __future__ import annotations

import statistics
import time
import uuid

import pytest

from elastman.monitor import manager as monitor_manager
from elastman.store import model_state
from elastman.trainer import manager as trainer_manager
from tests.functional.compute import cluster as local_cluster
from tests.functional.monitor import load as load_mod

# Few read threads, so that a saturated node queues reads inside the
# coordinator latency the monitor reads.
FLAVOR = ('sat:cpu=1,heap=384M,native_transport_max_threads=64,'
          'concurrent_reads=4,concurrent_writes=4')
CPU = 0.5                       # CFS quota while stepping, CPUs
CPU_PERIOD_US = 10000
NETWORK, JMX_BASE = '127.0.90.0/24', 17800
INTERVAL = 10                   # [monitor] sampling_interval, s
JMX_TIMEOUT = 8.0               # [monitor] jmx_timeout: room for a busy node
CQL_TIMEOUT = 2.0
PER_STEP = 2                    # monitor samples per step
SETTLE_STEP = 1                 # one more where a step's samples straddle the SLO
WARMUP_RATE = 300               # req/s offered at a whole CPU before stepping
WARMUP_MAX = 180                # s at most (a cold JVM on a busy CI host)
READ_SHARE = 0.75
SIZE = 100                      # bytes per value
ROWS = 2000                     # rows per partition; a read counts them
KEYS = 50
MAX_IN_FLIGHT = 96              # outstanding requests; more are shed
STEPS = (100, 175, 250, 350, 450, 600, 800)   # offered req/s
SATURATED_STEPS = 2             # steps on the saturated plateau
SLO_MS = 250.0                  # read p99 as the monitor reads it
SHORTFALL = 0.15                # served < (1 - SHORTFALL) * offered: saturated
GRANULARITY = 50.0              # req/s, read and write cells
#: one cell's width along the mix: the resolution of a model's boundary
CELL_ALONG_MIX = GRANULARITY / READ_SHARE


@pytest.fixture(scope='module')
def node(conf):
    conf.set_override('cpu_period_us', CPU_PERIOD_US, 'local_cloud')
    cluster = local_cluster.LocalCluster(conf, size=1, flavor=FLAVOR.split(':')[0],
                                         flavors=[FLAVOR], network=NETWORK,
                                         jmx_base=JMX_BASE)
    try:
        _log('node starting')
        cluster.start()
        _log('node up')
        yield cluster
    finally:
        cluster.destroy()
        conf.clear_override('cpu_period_us', 'local_cloud')


@pytest.fixture
def monitor(node, store, keyspace_conf):
    """The node registered in the store, and a monitor sampling it."""
    overrides = {'sampling_interval': INTERVAL, 'jmx_timeout': JMX_TIMEOUT,
                 'cql_timeout': CQL_TIMEOUT}
    for name, value in overrides.items():
        keyspace_conf.set_override(name, value, 'monitor')
    policy = {'slo_threshold_ms': SLO_MS,
              'model': {'granularity': {'read_rate': GRANULARITY, 'write_rate': GRANULARITY,
                                        'data_size': 4096.0},
                        'min_cells': 4}}
    cluster = store.clusters.create('test', 'saturation', {'local': True}, policy=policy)
    server = node.servers[0]
    store.nodes.upsert(cluster['id'], server.id, server_id=server.id, address=server.address,
                       flavor=server.flavor, state='ACTIVE', cql_port=server.cql_port,
                       jmx_host=server.jmx_host, jmx_port=server.jmx_port)
    mgr = monitor_manager.MonitorManager(keyspace_conf, store=store)
    mgr.start()
    yield mgr, cluster, server.id
    mgr.stop()
    for name in overrides:
        keyspace_conf.clear_override(name, 'monitor')


class Step:
    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.samples: list[dict] = []
        self.start = self.end = 0.0
        self.client_rate = self.client_p99 = float('nan')

    @property
    def answered(self) -> list[dict]:
        return [s for s in self.samples if s['up'] and s['reads_per_s'] is not None]

    @property
    def served(self) -> float:
        """Mean rate the monitor saw the node serve (NaN: it never answered)."""
        got = self.answered
        return statistics.mean(s['reads_per_s'] + s['writes_per_s'] for s in got) \
            if got else float('nan')

    @property
    def p99(self) -> list[float]:
        return [s['read_p99_ms'] for s in self.answered if s['read_p99_ms'] is not None]

    @property
    def saturated(self) -> bool:
        return not self.served >= (1 - SHORTFALL) * self.rate

    @property
    def straddles(self) -> bool:
        """Samples on both sides of the SLO."""
        p99 = self.p99
        return any(v <= SLO_MS for v in p99) and any(v > SLO_MS for v in p99)

    @property
    def met(self) -> bool:
        """Most samples within the SLO, as the trainer labels a cell at its
        default confidence (0.5); a tie is not a bound.
        """
        p99 = self.p99
        return 2 * sum(v <= SLO_MS for v in p99) > len(p99)

    def __str__(self) -> str:
        return ('offered %5.0f req/s: monitor %s; client %.0f req/s p99 %.0f ms%s'
                % (self.rate, ', '.join(_fmt(s) for s in self.samples),
                   self.client_rate, self.client_p99,
                   ' SATURATED' if self.saturated else ''))


def _fmt(s: dict) -> str:
    if not s['up']:
        return 'down'
    if s['reads_per_s'] is None:
        return 'reference'
    return '%.0f req/s p99 %s ms%s' % (
        s['reads_per_s'] + s['writes_per_s'],
        'n/a' if s['read_p99_ms'] is None else '%.0f' % s['read_p99_ms'],
        '' if (s.get('extra') or {}).get('jmx') else ' (cql)')


def _log(msg: str) -> None:
    print(time.strftime('%H:%M:%S'), msg, flush=True)


def _warm_up(mgr, node_row: dict) -> None:
    """Sample the node under a throwaway cluster id (so that the trainer never
    sees these samples) until JMX answers and the read p99 is well within the
    SLO: a cold JVM on a small quota is slow for a minute or more.
    """
    warm_id = uuid.uuid4()
    deadline = time.monotonic() + WARMUP_MAX
    good = 0
    while time.monotonic() < deadline:
        start = time.monotonic()
        (s,) = mgr.sample_cluster(warm_id, [node_row])
        _log('warm-up: %s' % _fmt(s))
        if s['up'] and (s.get('extra') or {}).get('jmx') and \
                s['read_p99_ms'] is not None and s['read_p99_ms'] <= SLO_MS / 2:
            good += 1
            if good == 3:
                return
        else:
            good = 0
        time.sleep(max(0.0, start + INTERVAL - time.monotonic()))
    _log('warm-up: not warm after %d s, stepping anyway' % WARMUP_MAX)


def _stepped(mgr, node, node_row: dict) -> list[Step]:
    """Warm up, then step the offered rate until SATURATED_STEPS steps are
    saturated.
    """
    _log('load starting')
    load = load_mod.PacedLoad(
        [node_row['address']], 'saturation', WARMUP_RATE * READ_SHARE,
        WARMUP_RATE * (1 - READ_SHARE), SIZE, max_in_flight=MAX_IN_FLIGHT,
        keys=KEYS, rows=ROWS, count=True)

    def offer(rate):
        load.set_rates(rate * READ_SHARE, rate * (1 - READ_SHARE))
    load.start()
    steps = []
    try:
        _log('load started')
        _warm_up(mgr, node_row)
        node.driver._cgroup(node.servers[0].id).set_quota(CPU, CPU_PERIOD_US)
        offer(STEPS[0])
        _log('quota %s CPU' % node.driver._cgroup(node.servers[0].id).quota())
        time.sleep(INTERVAL / 2)
        mgr.sample_all()                  # the reference reading: warm-up left out
        for rate in STEPS:
            step = Step(rate)
            steps.append(step)
            offer(rate)
            step.start = time.monotonic()
            k = 0
            while k < PER_STEP or (k < PER_STEP + SETTLE_STEP and step.straddles
                                   and not step.saturated):
                k += 1
                time.sleep(max(0.0, step.start + k * INTERVAL - time.monotonic()))
                step.samples += mgr.sample_all()
            step.end = time.monotonic()
            _log(str(step))
            if sum(st.saturated for st in steps) >= SATURATED_STEPS:
                break
    finally:
        load.stop()
    for step in steps:
        done = [ms for t, k, ms in load.done if step.start <= t < step.end]
        step.client_rate = len(done) / (step.end - step.start)
        step.client_p99 = load_mod.p(done, 0.99) if done else float('nan')
    print('client errors %d, shed %d' % (load.errors, load.shed))
    return steps


def test_capacity_along_the_mix_is_the_saturation_point(node, monitor):
    mgr, cluster, node_id = monitor
    t0 = time.monotonic()
    node_row = mgr.store.nodes.list(cluster['id'])[0]
    steps = _stepped(mgr, node, node_row)
    for step in steps:
        print(step)
    sat = steps[-1]
    assert sat.saturated, 'no step saturated the node'
    assert not steps[0].saturated, 'the first step already saturated the node'
    below = [s for s in steps if not s.saturated]
    met = [s for s in below if s.met]
    assert met, 'no step below saturation met the SLO:\n%s' % '\n'.join(
        map(str, steps))
    ok = max(met, key=lambda s: s.served)
    ok_load = ok.served
    sat_load = sat.served

    trainer = trainer_manager.TrainerManager(mgr.conf, store=mgr.store)
    trainer.train_cluster(cluster, now=time.time())
    last = ok.answered[-1]
    workload = {'reads_per_s': ok_load * READ_SHARE, 'writes_per_s': ok_load * (1 - READ_SHARE),
                'read_bytes_mean': last['read_bytes_mean'],
                'write_bytes_mean': last['write_bytes_mean']}
    # what the actuator reads from the store
    est = model_state.load_capacity(mgr.store, str(cluster['id'])).capacity(
        node_id, workload).to_dict()
    grid = trainer._clusters[str(cluster['id'])].registry.grids[node_id]
    for key in sorted(map(tuple, grid.keys())):
        print('cell %s: p99 %s' % (key, [round(v) for v in grid.cell_values(key)]))
    print('met up to %.0f req/s; saturated: offered %.0f, served %.0f req/s (p99 %s); '
          'capacity %s req/s (%s, %s model, from %s), seen %s; %.0f s'
          % (ok_load, sat.rate, sat_load, sat.p99, est['capacity'], est['bound'],
             est['model_kind'], est['source'], est['seen'], time.monotonic() - t0))
    # the saturation is real on the client too: the open-loop clients got
    # what they offered below it, and clearly less at it
    assert ok.client_rate >= (1 - SHORTFALL / 3) * ok.rate, str(ok)
    assert sat.client_rate < (1 - SHORTFALL / 2) * sat.rate, str(sat)
    assert est['bound'] == 'exact' and est['model_kind'] == 'svm', est
    # between the most the node served within the SLO and the most it
    # served at all. Where the node was over the SLO at a lower load (a
    # saturated interval that served less), no model true to its samples
    # puts the boundary above that load; and a boundary lies on a cell
    # edge, so up to one cell along the mix below it.
    over = [s['reads_per_s'] + s['writes_per_s'] for step in steps
            for s in step.answered
            if s['read_p99_ms'] is not None and s['read_p99_ms'] > SLO_MS]
    floor = min([ok_load] + over)
    assert floor - CELL_ALONG_MIX <= est['capacity'] <= sat_load, est
