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
"""The prometheus metrics source against the JMX source, on one real node.

The node runs the Prometheus JMX exporter java agent with elastman's rules
(etc/elastman/jmx-exporter-cassandra.yaml); a real Prometheus server (the
distribution's, tools/install.sh --prometheus) scrapes it every 2 s. Under a
paced load both sources read the node at the same moments:
- the rates of each agree with what the clients completed within that
  source's own interval (the prometheus source's runs between the middles
  of two scrapes), and their sizes agree;
- every percentile of the prometheus source lies within one bucket of
  Cassandra's histogram (about 20%) of the same percentile Cassandra's JMX
  reports for the table's reservoir, read just before and just after;
- the median agrees with the JMX source's median over the interval within
  one bucket. The interval p95 and p99 are printed, not compared: the
  reservoir also holds the spikes of the last minutes (doc/source/
  monitoring.rst, "The prometheus source").
"""
import ipaddress
import os
import re
import shutil
import subprocess
import tempfile
import time
import uuid

import pytest
import requests

from elastman.cassandra import histogram
from elastman.cassandra import node as cassandra_node
from elastman.monitor import readings
from elastman.monitor import sampler
from elastman.monitor.sources import jmx as jmx_source
from elastman.monitor.sources import prometheus
from tests.functional.compute import cluster as shared
from tests.functional.monitor import load as load_mod
from tests.functional import services

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
RULES = os.path.join(REPO, 'etc', 'elastman', 'jmx-exporter-cassandra.yaml')
RING_DELAY = '-Dcassandra.ring_delay_ms=5000'
INTERVAL = 20
WARMUP = 40
ROUNDS = 2
READS, WRITES, SIZE = 150.0, 50.0, 1000
LATENCIES = ('read_p50_ms', 'read_p95_ms', 'read_p99_ms', 'write_p50_ms',
             'write_p95_ms', 'write_p99_ms')


def _exporter_jar() -> str:
    with open(os.path.join(REPO, 'tools', 'prometheus', 'pom.xml')) as f:
        version = re.search(r'<jmx.exporter.version>(.*)</', f.read())[1]
    cache = os.environ.get('ELASTMAN_CACHE',
                           os.path.expanduser('~/.cache/elastman'))
    jar = os.path.join(cache, 'jmx-exporter-%s' % version,
                       'jmx_prometheus_javaagent-%s.jar' % version)
    if not os.path.exists(jar) or not shutil.which('prometheus'):
        pytest.fail('Prometheus or the JMX exporter agent is not installed: '
                    'run tools/install.sh --prometheus')
    return jar


@pytest.fixture(scope='module')
def exported_node(conf):
    """A node with the exporter agent, and a Prometheus scraping it."""
    jar = _exporter_jar()
    address = str(list(ipaddress.ip_network(shared.NETWORK).hosts())[-1])
    base = tempfile.mkdtemp(prefix='elastman-prom-')
    exporter = '%s:%d' % (address, services.free_port())
    node = cassandra_node.LocalNode(conf, cassandra_node.NodeSpec(
        name='exported', base_dir=os.path.join(base, 'node'),
        address=address, jmx_port=services.free_port(),
        cluster_name='elastman-prom', heap='384M',
        extra_yaml={'read_thresholds_enabled': True,
                    'coordinator_read_size_warn_threshold': '512MiB',
                    'local_read_size_warn_threshold': '512MiB'},
        # the local servers' ring delay: a lone seed waits through it
        # before it picks its tokens (Cassandra's 30 s took half the setup)
        jvm_opts=(RING_DELAY, '-javaagent:%s=%s:%s' % (
            jar, exporter, RULES))))
    port = services.free_port()
    with open(os.path.join(base, 'prometheus.yml'), 'w') as f:
        f.write('global:\n  scrape_interval: 2s\nscrape_configs:\n'
                '  - job_name: cassandra\n    static_configs:\n'
                "      - targets: ['%s']\n" % exporter)
    server = None
    log = open(os.path.join(base, 'prometheus.log'), 'w')
    try:
        node.start()
        node.wait_for_cql()
        server = subprocess.Popen(
            [shutil.which('prometheus'),
             '--config.file=' + os.path.join(base, 'prometheus.yml'),
             '--storage.tsdb.path=' + os.path.join(base, 'tsdb'),
             '--web.listen-address=127.0.0.1:%d' % port],
            stdout=log, stderr=subprocess.STDOUT)
        url = 'http://127.0.0.1:%d' % port
        try:
            services.wait_for(lambda: _scraped(url, exporter), timeout=180,
                              interval=1)
        except TimeoutError:
            pytest.fail('Prometheus did not scrape the exporter at %s: %s'
                        % (exporter, _why_not(url, log.name)))
        yield node, url
    finally:
        if server is not None:
            server.terminate()
            server.wait(30)
        log.close()
        node.destroy()
        shutil.rmtree(base, ignore_errors=True)


def _scraped(url: str, exporter: str) -> bool:
    try:
        result = requests.get(url + '/api/v1/query', timeout=5, params={
            'query': 'up{instance="%s"}' % exporter}
        ).json()['data']['result']
    except (requests.RequestException, ValueError, KeyError):
        return False
    return bool(result) and result[0]['value'][1] == '1'


def _why_not(url: str, log: str) -> str:
    """The scrape's last error as Prometheus reports it and the end of
    its log.
    """
    try:
        targets = requests.get(url + '/api/v1/targets', timeout=5).json()[
            'data']['activeTargets']
        errors = '; '.join('%s %s: %s' % (t.get('scrapeUrl'), t.get('health'),
                                          t.get('lastError'))
                           for t in targets) or 'no target'
    except (requests.RequestException, ValueError, KeyError) as exc:
        errors = 'the API did not answer: %s' % exc
    with open(log) as f:
        return '%s\nprometheus log:\n%s' % (errors, f.read()[-3000:])


def _bucket(ms: float) -> int:
    """The index of the Cassandra histogram bucket whose bound is ``ms``."""
    bounds = histogram.offsets(200)
    return min(range(len(bounds)), key=lambda i: abs(bounds[i] - ms * 1000))


def reservoir(bridge, target, keyspace: str) -> dict[str, float]:
    """The percentiles Cassandra's JMX reports for the user table's
    coordinator reservoirs, in ms (sample keys).
    """
    out = {}
    for kind, name in (('read', 'CoordinatorReadLatency'),
                       ('write', 'CoordinatorWriteLatency')):
        mbeans = bridge.query(
            target.jmx_host, target.jmx_port,
            'org.apache.cassandra.metrics:type=Table,keyspace=%s,scope=kv,'
            'name=%s' % (keyspace, name),
            ('50thPercentile', '95thPercentile', '99thPercentile'))
        attrs = mbeans[0]['attrs']
        for q in ('50', '95', '99'):
            out['%s_p%s_ms' % (kind, q)] = attrs[q + 'thPercentile'] / 1000.0
    return out


def test_same_samples_as_jmx(conf, exported_node):
    node, url = exported_node
    conf.set_override('url', url, 'prometheus')
    conf.set_override('jmx_timeout', 30.0, 'monitor')   # a busy host
    excluded = frozenset(readings.SYSTEM_KEYSPACES)
    jmx = jmx_source.JmxSource(conf, excluded)
    prom = prometheus.PrometheusSource(conf, excluded)
    target = readings.Target(node.spec.address, cql_port=node.spec.cql_port,
                             jmx_host='127.0.0.1',
                             jmx_port=node.spec.jmx_port)
    load = load_mod.PacedLoad([node.spec.address], 'promload', READS, WRITES,
                              SIZE, keys=200)
    jmx.start()
    load.start()
    try:
        # both sides see all of the load, its cold start included; the
        # one-minute rates that weigh tables need a few ticks
        time.sleep(WARMUP)
        before = (jmx.read(target), prom.read(target))
        rounds = []
        # the prometheus source times a reading by Prometheus' (wall) clock
        wall = time.time() - time.monotonic()
        for _ in range(ROUNDS):
            time.sleep(INTERVAL)
            # JMX's reservoir read before and after a scrape, so that the
            # scrape the prometheus source reads lies between the two
            started = time.time()
            first = reservoir(jmx.bridge, target, 'promload')
            by_jmx = jmx.read(target)
            scraped = prom.read(target)
            while scraped.mono < started:
                time.sleep(0.5)
                scraped = prom.read(target)
            last = reservoir(jmx.bridge, target, 'promload')
            now = (by_jmx, scraped)
            windows = ((before[0].mono, by_jmx.mono),
                       (before[1].mono - wall, scraped.mono - wall))
            rounds.append(tuple(
                sampler.compute(uuid.uuid4(), 'n', None, after, earlier,
                                INTERVAL)
                for after, earlier in zip(now, before)) + ((first, last),
                                                           windows))
            before = now
    finally:
        load.stop()
        jmx.close()
        prom.close()
        conf.clear_override('url', 'prometheus')
        conf.clear_override('jmx_timeout', 'monitor')
    for by_jmx, by_prom, (first, last), windows in rounds:
        print('jmx %s\nprometheus %s\nreservoir %s .. %s' % (
            {k: by_jmx[k] for k in sampler.METRIC_KEYS},
            {k: by_prom[k] for k in sampler.METRIC_KEYS}, first, last))
        assert by_prom['interval_s'] >= INTERVAL - 4
        # each against the clients over its own interval: the two intervals
        # are up to a scrape period apart, and a client that stalls there
        # (a busy host) would part the two sources' rates
        for name, sample, (start, end) in zip(('jmx', 'prometheus'),
                                              (by_jmx, by_prom), windows):
            for kind in ('read', 'write'):
                done = len(load.window(start, end, kind)) / (end - start)
                print('%s %ss/s %.1f, the clients completed %.1f/s in '
                      '%.1f s' % (name, kind, sample[kind + 's_per_s'],
                                  done, end - start))
                assert sample[kind + 's_per_s'] == pytest.approx(
                    done, rel=0.10), (name, kind)
        for key in ('read_bytes_mean', 'write_bytes_mean'):
            assert by_prom[key] == pytest.approx(by_jmx[key], rel=0.20), key
        for key in LATENCIES:
            assert by_prom[key], key
            low, high = sorted((_bucket(first[key]), _bucket(last[key])))
            assert low - 1 <= _bucket(by_prom[key]) <= high + 1, (
                key, by_prom[key], first[key], last[key])
        # the medians come from two estimators: the JMX source differences
        # the histogram over one interval, the exporter serves Cassandra's
        # decaying reservoir, which still weighs the previous minutes. On a
        # busy 2-core host they were measured up to 2.1x apart (0.124
        # against 0.258 ms); a factor of 3, or 0.05 ms for medians below
        # 0.1 ms, separates that from a source reading the wrong metric
        for key in ('read_p50_ms', 'write_p50_ms'):
            low, high = sorted((by_jmx[key], by_prom[key]))
            assert high <= 3 * low or high - low <= 0.05, (
                key, by_jmx[key], by_prom[key])
