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
import pytest

from elastman.common import exception
from elastman.compute import flavors


def test_parse_full():
    f = flavors.parse('small: cpu=0.5, heap=512m, concurrent_reads=8')
    assert (f.name, f.cpu, f.heap, f.heap_mb) == ('small', 0.5, '512M', 512)
    assert f.cpus == 1
    settings = f.cassandra_settings()
    assert settings['concurrent_reads'] == 8
    assert settings['concurrent_writes'] == 8
    assert settings['memtable_heap_space'] == '128MiB'
    assert f.jvm_options() == ['-XX:ActiveProcessorCount=1']


def test_unlimited_cpu_has_no_processor_count():
    f = flavors.parse('big:cpu=0,heap=2G')
    assert f.cpus == 0 and f.heap_mb == 2048
    assert f.jvm_options() == []


@pytest.mark.parametrize('text', [
    'nocolon', 'x:heap=1G', 'x:cpu=abc,heap=1G', 'x:cpu=1', 'x:cpu=1,heap=1T',
    'x:cpu=-1,heap=1G', 'x:cpu=1,heap=1G,bogus=3',
    'x:cpu=1,heap=1G,concurrent_reads=0', 'x:cpu=1,heap'])
def test_parse_errors(text):
    with pytest.raises(exception.ConfigurationError) as err:
        flavors.parse(text)
    assert '[local_cloud] flavor' in str(err.value)


def test_parse_all_rejects_duplicates():
    with pytest.raises(exception.ConfigurationError):
        flavors.parse_all(['a:cpu=1,heap=1G', 'a:cpu=2,heap=1G'])
    assert set(flavors.parse_all(['a:cpu=1,heap=1G', 'b:cpu=2,heap=1G'])) \
        == {'a', 'b'}


def test_default_flavors_parse(conf):
    parsed = flavors.parse_all(conf.local_cloud.flavor)
    assert parsed['tiny'].cpu == 0.5
