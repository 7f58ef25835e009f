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
"""The YCSB output parser and command builder (no Java needed)."""
import pytest

from elastman.evaluation import ycsb

SUMMARY = """\
Loading workload...
[OVERALL], RunTime(ms), 22328
[OVERALL], Throughput(ops/sec), 30.813328556073092
[TOTAL_GCS_G1_Young_Generation], Count, 3
[TOTAL_GC_TIME], Time(ms), 12
[READ], Operations, 551
[READ], AverageLatency(us), 32329.33938294011
[READ], MinLatency(us), 1333
[READ], MaxLatency(us), 372735
[READ], 95thPercentileLatency(us), 155775
[READ], 99thPercentileLatency(us), 255103
[READ], Return=OK, 549
[READ], Return=ERROR, 2
[CLEANUP], Operations, 4
[CLEANUP], AverageLatency(us), 568066.75
[UPDATE], Operations, 137
[UPDATE], AverageLatency(us), 38444.16788321168
[UPDATE], 99thPercentileLatency(us), 266239
[UPDATE], Return=OK, 137
[READ-FAILED], Operations, 2
[READ-FAILED], 99thPercentileLatency(us), 10001
"""

STATUS = ('2026-11-22 00:21:08:943 10 sec: 301 operations; 30.1 current '
          'ops/sec; est completion in 13 seconds [READ: Count=240, '
          'Max=372735, Min=1333, Avg=32329.34, 90=90111, 99=255103, '
          '99.9=372735, 99.99=372735] [UPDATE: Count=61, Max=500735, '
          'Min=1432, Avg=38444.17, 90=100000, 99=266239, 99.9=500735, '
          '99.99=500735] ')


def test_parse_summary():
    s = ycsb.parse_summary(SUMMARY)
    assert s['runtime_ms'] == 22328
    assert s['throughput'] == pytest.approx(30.81, abs=0.01)
    read = s['ops']['READ']
    assert read['operations'] == 551
    assert read['p99_us'] == 255103 and read['p95_us'] == 155775
    assert read['avg_us'] == pytest.approx(32329.34, abs=0.01)
    assert read['returns'] == {'OK': 549, 'ERROR': 2}
    assert s['ops']['UPDATE']['p99_us'] == 266239
    assert 'CLEANUP' not in s['ops']
    assert not any(k.startswith('TOTAL') for k in s['ops'])
    assert ycsb.failures(s) == 2


def test_parse_summary_of_nothing():
    assert ycsb.parse_summary('Error: could not connect') == {
        'runtime_ms': None, 'throughput': None, 'ops': {}}


def test_parse_status_line():
    st = ycsb.parse_status_line(STATUS)
    assert st['elapsed_s'] == 10 and st['operations'] == 301
    assert st['ops_per_s'] == pytest.approx(30.1)
    assert st['ops']['READ']['count'] == 240
    assert st['ops']['READ']['p99_us'] == 255103
    assert st['ops']['READ']['p99.9_us'] == 372735
    assert st['ops']['UPDATE']['max_us'] == 500735


def test_parse_status_line_without_operations():
    st = ycsb.parse_status_line('2026-11-22 00:20:58:943 0 sec: 0 '
                                'operations; est completion in 0 second ')
    assert st == {'elapsed_s': 0, 'operations': 0, 'ops_per_s': 0.0,
                  'ops': {}}
    assert ycsb.parse_status_line('Loading workload...') is None
    assert ycsb.parse_status_line('[READ], Operations, 5') is None


def test_phase_validation():
    p = ycsb.Phase('a', 60, 100, 0.5, 0.5, fieldcount=10, fieldlength=200)
    assert p.record_bytes == 2000
    with pytest.raises(ValueError):
        ycsb.Phase('b', 60, 100, 0.8, 0.5)
    with pytest.raises(ValueError):
        ycsb.Phase('c', 0, 100)
    with pytest.raises(ValueError):
        ycsb.Phase('d', 60, 100, fieldlength=0)


def test_properties_and_command(tmp_path):
    lib = tmp_path / 'lib'
    lib.mkdir()
    (lib / 'elastman-ycsb-1.jar').write_text('')
    target = ycsb.Target(hosts=['127.0.80.1', '127.0.80.2'],
                         lib_dir=str(lib), recordcount=1000)
    phase = ycsb.Phase('p', 30, 200, 0.7, 0.3, fieldcount=5,
                       fieldlength=400, threads=8)
    props = ycsb.properties(target, phase)
    assert props['cassandra.hosts'] == '127.0.80.1,127.0.80.2'
    assert props['readproportion'] == '0.7'
    assert props['updateproportion'] == '0.3'
    assert props['scanproportion'] == '0'
    assert props['fieldlength'] == '400' and props['fieldcount'] == '5'
    assert props['maxexecutiontime'] == '30'
    assert int(props['operationcount']) >= 200 * 30
    path = ycsb.write_properties(str(tmp_path / 'p.properties'), props)
    cmd = ycsb.command(target, phase, path)
    assert cmd[cmd.index('-db') + 1] == ycsb.BINDING
    assert cmd[cmd.index('-target') + 1] == '200'
    assert cmd[cmd.index('-threads') + 1] == '8'
    assert '-t' in cmd and '-load' not in cmd
    assert '-load' in ycsb.command(target, phase, path, mode='load')


def test_a_low_target_runs_fewer_threads(tmp_path):
    """Each throttled YCSB thread needs at least MIN_THREAD_OPS ops/s; a
    lower target runs as many threads as keep that pace, at least one, and
    an unthrottled phase keeps all of them.
    """
    lib = tmp_path / 'lib'
    lib.mkdir()
    (lib / 'elastman-ycsb-1.jar').write_text('')
    target = ycsb.Target(hosts=['127.0.80.1'], lib_dir=str(lib))
    for rate, threads, expected in ((109, 256, 218), (300, 256, 256),
                                    (0.2, 16, 1), (0, 256, 256)):
        phase = ycsb.Phase('p', 30, rate, threads=threads)
        assert phase.client_threads == expected, (rate, threads)
        assert phase.target == 0 or phase.target / phase.client_threads >= min(
            ycsb.MIN_THREAD_OPS, phase.target)
        cmd = ycsb.command(target, phase, str(tmp_path / 'p.properties'))
        assert cmd[cmd.index('-threads') + 1] == str(expected)


def test_missing_driver(tmp_path):
    target = ycsb.Target(hosts=['x'], lib_dir=str(tmp_path / 'none'))
    with pytest.raises(ycsb.YcsbError, match='install.sh --ycsb'):
        ycsb.classpath(target)
