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
"""The prometheus metrics source on canned answers of the Prometheus API."""
import pytest

from elastman.common import config as em_config
from elastman.monitor import readings
from elastman.monitor import sources
from elastman.monitor.sources import prometheus


def test_mixture_of_one_table_is_the_table():
    points = {0.5: 310.0, 0.75: 372.0, 0.95: 642.0, 0.98: 770.0,
              0.99: 770.0, 0.999: 1331.0, 1.0: 2759.0}
    for q, want in ((0.5, 310.0), (0.95, 642.0), (0.99, 770.0)):
        assert prometheus.mixture_quantile([(3.0, points)], q) == want
    assert prometheus.mixture_quantile([], 0.99) is None
    assert prometheus.mixture_quantile([(0.0, points)], 0.99) is None


def test_mixture_weighs_tables_by_rate():
    fast = {0.5: 100.0, 0.99: 200.0, 1.0: 300.0}
    slow = {0.5: 5000.0, 0.99: 9000.0, 1.0: 9500.0}
    # 99% of the requests on the fast table: its quantiles rule...
    assert prometheus.mixture_quantile([(99.0, fast), (1.0, slow)],
                                       0.49) == 100.0
    assert prometheus.mixture_quantile([(99.0, fast), (1.0, slow)],
                                       0.98) == 200.0
    # ...and moves to the slow table when it has half of them
    assert prometheus.mixture_quantile([(1.0, fast), (1.0, slow)],
                                       0.99) == 9000.0


def _series(name, value, **labels):
    return {'metric': dict(labels, __name__=name), 'value': [1.0, str(value)]}


ANSWER = [
    _series('cassandra_table_coordinatorreadlatency_count', 1000,
            keyspace='ks', table='t'),
    _series('cassandra_table_coordinatorreadlatency_rate1m', 50.0,
            keyspace='ks', table='t'),
    _series('cassandra_table_coordinatorreadlatency', 642.0, keyspace='ks',
            table='t', quantile='0.99'),
    _series('cassandra_table_coordinatorreadlatency', 310.0, keyspace='ks',
            table='t', quantile='0.50'),
    _series('cassandra_table_coordinatorreadlatency', 372.0, keyspace='ks',
            table='t', quantile='0.95'),
    _series('cassandra_table_coordinatorwritelatency_count', 400,
            keyspace='ks', table='t'),
    _series('cassandra_table_coordinatorwritelatency_rate1m', 20.0,
            keyspace='ks', table='t'),
    _series('cassandra_table_coordinatorwritelatency', 'NaN', keyspace='ks',
            table='t', quantile='0.99'),
    _series('cassandra_table_coordinatorreadsize_mean', 2107.5,
            keyspace='ks', table='t'),
    _series('cassandra_table_coordinatorreadlatency_count', 99999,
            keyspace='system', table='local'),
    _series('cassandra_table_coordinatorreadlatency', 99999.0,
            keyspace='system', table='local', quantile='0.99'),
    _series('cassandra_clientrequest_write_mutationsize_mean', 2100.0),
]


class Resp:
    def __init__(self, body, status=200):
        self.body, self.status_code, self.text = body, status, str(body)

    def json(self):
        return self.body


class Session:
    def __init__(self, answers):
        self.answers, self.queries = list(answers), []

    def get(self, url, params, timeout):
        self.queries.append((url, params['query']))
        return self.answers.pop(0)

    def close(self):
        pass


@pytest.fixture
def conf():
    conf = em_config.CONF
    conf([], project='elastman', default_config_files=[])
    conf.set_override('url', 'http://prom:9090/', 'prometheus')
    yield conf
    conf.clear_override('url', 'prometheus')


def _ok(result):
    return Resp({'status': 'success',
                 'data': {'resultType': 'vector', 'result': result}})


SCRAPED = {'metric': {'elastman_scraped': 'time'},
           'value': [2.0, '1700000000.5']}


def test_a_reading_from_one_query(conf):
    session = Session([_ok(ANSWER + [SCRAPED])])
    source = prometheus.PrometheusSource(conf, frozenset({'system'}),
                                         session=session)
    got = source.read(readings.Target('127.0.74.3', node_id='n1'))
    assert got.source == 'prometheus' and got.mono == 1700000000.5
    assert (got.reads, got.writes) == (1000, 400)        # system left out
    assert got.gauges == {'read_p50_ms': 0.31, 'read_p95_ms': 0.372,
                          'read_p99_ms': 0.642, 'read_bytes_mean': 2107.5,
                          'write_bytes_mean': 2100.0}
    [(url, query)] = session.queries
    assert url == 'http://prom:9090/api/v1/query'
    selector = 'instance=~"127\\\\.0\\\\.74\\\\.3:[0-9]+"'
    assert selector in query
    # the scrape time and duration of the same answer, not of a later query
    assert query.endswith(
        ' or label_replace(max(timestamp('
        'cassandra_table_coordinatorreadlatency_count{%s})), '
        '"elastman_scraped", "time", "", "")'
        ' or label_replace(max(scrape_duration_seconds{%s}), '
        '"elastman_scraped", "duration", "", "")' % (selector, selector))


def test_a_reading_is_timed_at_the_middle_of_its_scrape(conf):
    took = {'metric': {'elastman_scraped': 'duration'},
            'value': [2.0, '1.5']}
    session = Session([_ok(ANSWER + [SCRAPED, took])])
    source = prometheus.PrometheusSource(conf, frozenset({'system'}),
                                         session=session)
    got = source.read(readings.Target('127.0.74.3', node_id='n1'))
    # the exporter read the counters while Prometheus waited for them
    assert got.mono == 1700000000.5 + 0.75
    assert (got.reads, got.writes) == (1000, 400)


def test_errors_are_source_errors(conf):
    source = prometheus.PrometheusSource(
        conf, frozenset(), session=Session([Resp(
            {'status': 'error', 'error': 'parse error'}, status=400)]))
    with pytest.raises(sources.SourceError) as err:
        source.read(readings.Target('10.0.0.1'))
    assert 'parse error' in str(err.value)
    empty = prometheus.PrometheusSource(
        conf, frozenset(), session=Session([_ok([])]))
    with pytest.raises(sources.SourceError) as err:
        empty.read(readings.Target('10.0.0.1'))
    assert 'Prometheus has no series' in str(err.value)
    # the scrape's time and duration alone: the node's series are gone
    took = {'metric': {'elastman_scraped': 'duration'}, 'value': [2.0, '0.1']}
    alone = prometheus.PrometheusSource(
        conf, frozenset(), session=Session([_ok([SCRAPED, took])]))
    with pytest.raises(sources.SourceError) as err:
        alone.read(readings.Target('10.0.0.1'))
    assert 'Prometheus has no series' in str(err.value)
