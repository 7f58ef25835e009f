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
"""Local flavours: a CPU quota, a heap, and the Cassandra settings they imply."""
from __future__ import annotations

import dataclasses
import math
import re

from elastman.common import exception

_HEAP = re.compile(r'^[1-9][0-9]*[MG]$')
_INT_SETTINGS = ('concurrent_reads', 'concurrent_writes',
                 'concurrent_counter_writes', 'native_transport_max_threads',
                 'concurrent_compactors')


@dataclasses.dataclass(frozen=True)
class Flavor:
    name: str
    cpu: float                  # CPUs of CFS quota; 0 = unlimited
    heap: str                   # -Xms/-Xmx
    settings: tuple[tuple[str, int], ...] = ()

    @property
    def heap_mb(self) -> int:
        return int(self.heap[:-1]) * (1024 if self.heap.endswith('G') else 1)

    @property
    def cpus(self) -> int:
        """Whole CPUs the JVM is told it has (at least 1)."""
        return max(1, math.ceil(self.cpu)) if self.cpu else 0

    def cassandra_settings(self) -> dict:
        """cassandra.yaml values sized for this quota and heap."""
        cpus = self.cpus or 2
        derived = {
            'concurrent_reads': max(4, 8 * cpus),
            'concurrent_writes': max(4, 8 * cpus),
            'concurrent_counter_writes': max(4, 8 * cpus),
            'native_transport_max_threads': max(16, 32 * cpus),
            'concurrent_compactors': 1,
            'memtable_heap_space': '%dMiB' % max(32, self.heap_mb // 4),
            'memtable_offheap_space': '%dMiB' % max(32, self.heap_mb // 4),
            'key_cache_size': '%dMiB' % max(4, self.heap_mb // 20),
        }
        derived.update(dict(self.settings))
        return derived

    def jvm_options(self) -> list[str]:
        opts = []
        if self.cpus:
            opts.append('-XX:ActiveProcessorCount=%d' % self.cpus)
        return opts

    def to_dict(self) -> dict:
        return {'name': self.name, 'cpu': self.cpu, 'heap': self.heap,
                **dict(self.settings)}


def parse(text: str) -> Flavor:
    """Parse ``name:cpu=0.5,heap=512M[,key=int...]``; ConfigurationError."""
    def bad(why: str) -> exception.ConfigurationError:
        return exception.ConfigurationError(
            reason='[local_cloud] flavor %r: %s' % (text, why))

    name, sep, rest = text.strip().partition(':')
    name = name.strip()
    if not sep or not re.match(r'^[A-Za-z0-9][A-Za-z0-9_.-]*$', name):
        raise bad('expected "<name>:cpu=<CPUs>,heap=<size>"')
    values: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in rest.split(','))):
        key, eq, value = item.partition('=')
        if not eq:
            raise bad('%r is not key=value' % item)
        values[key.strip()] = value.strip()
    try:
        cpu = float(values.pop('cpu'))
    except KeyError:
        raise bad('cpu is missing')
    except ValueError:
        raise bad('cpu must be a number of CPUs')
    if cpu < 0 or cpu > 1024:
        raise bad('cpu must be between 0 and 1024')
    heap = values.pop('heap', None)
    if heap is None:
        raise bad('heap is missing')
    heap = heap.upper()
    if not _HEAP.match(heap):
        raise bad('heap must look like 512M or 2G')
    settings = []
    for key, value in sorted(values.items()):
        if key not in _INT_SETTINGS:
            raise bad('unknown setting %r (known: cpu, heap, %s)'
                      % (key, ', '.join(_INT_SETTINGS)))
        if not value.isdigit() or int(value) < 1:
            raise bad('%s must be a positive integer' % key)
        settings.append((key, int(value)))
    return Flavor(name=name, cpu=cpu, heap=heap, settings=tuple(settings))


def parse_all(lines: list[str]) -> dict[str, Flavor]:
    flavors: dict[str, Flavor] = {}
    for line in lines:
        flavor = parse(line)
        if flavor.name in flavors:
            raise exception.ConfigurationError(
                reason='[local_cloud] flavor %r is defined twice'
                       % flavor.name)
        flavors[flavor.name] = flavor
    return flavors
