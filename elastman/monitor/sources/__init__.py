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
"""Where the monitor reads a node's counters: pluggable metrics sources.

A source turns one node (a :class:`~elastman.monitor.readings.Target`) into
one :class:`~elastman.monitor.readings.Reading`: cumulative counters, and
the histograms or gauges the sample's percentiles come from. The monitor
keeps the previous reading of each node and builds samples from the
difference (:mod:`elastman.monitor.sampler`), so a source holds no
per-interval state of its own.

Sources are stevedore drivers of the ``elastman.monitor.sources`` namespace,
chosen by ``[monitor] metrics_source``. One instance serves every node of
every cluster and is called from several threads at once. When a source
cannot read a node it raises :class:`SourceError`; the monitor then counts
that node's requests from the CQL virtual tables for the round.
"""
from __future__ import annotations

import abc


from elastman.common import exception
from elastman.common import loader
from elastman.monitor import readings

NAMESPACE = 'elastman.monitor.sources'


class SourceError(exception.ElastmanException):
    msg_fmt = '%(source)s cannot read %(where)s: %(reason)s'


class MetricsSource(abc.ABC):
    """Reads the cumulative counters of one node at a time."""

    #: the stevedore name; also ``Reading.source`` of what it reads
    name = ''

    def __init__(self, conf, excluded: frozenset[str]) -> None:
        """``excluded``: keyspaces whose traffic is not workload."""
        self.conf = conf
        self.excluded = excluded

    @property
    @abc.abstractmethod
    def timeout(self) -> float:
        """Seconds one read may take before the node counts as silent."""

    def start(self) -> None:
        """Get ready for the first round; may take seconds (a JVM starts).

        A failure here is logged by the monitor; reads then raise
        SourceError until the source recovers.
        """

    @abc.abstractmethod
    def read(self, target: readings.Target) -> readings.Reading:
        """The node's counters now, or SourceError."""

    def close(self) -> None:
        """Release connections and child processes."""


def load(conf, excluded: frozenset[str],
         name: str | None = None) -> MetricsSource:
    """The source ``name`` (default ``[monitor] metrics_source``)."""
    return loader.driver(NAMESPACE, name or conf.monitor.metrics_source,
                         '[monitor] metrics_source', invoke_args=(conf, excluded))
