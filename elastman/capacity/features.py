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
"""Feature plug-ins: each one turns a monitor sample into one coordinate.

Plug-ins are found through the stevedore namespace ``elastman.features``. A
feature says whether it grows with the load (``scales_with_load``): the capacity
ray scales those coordinates and keeps the others (data size, interference)
fixed, so that capacity is "the most load of this mix".

The host agents' interference index is either a coordinate of its own
(:class:`InterferenceIndex`, Hubbub-Scale's third dimension) or the load's
scale (:func:`slowdown`): the index is the drop ``(L_c - L_i) / L_i`` a VM
suffers from its co-runners (:mod:`elastman.hostagent.interference`), read
as its service time grown ``1 + index`` times, so a VM serving ``w`` under
it is as loaded as one serving ``(1 + index) w`` alone, and its capacity is
``1 / (1 + index)`` of what it would be alone.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Sequence

from elastman.common import loader

NAMESPACE = 'elastman.features'


class Feature:
    """Base class of a feature dimension."""

    #: stevedore name; also the key used in granularity settings.
    name: str = ''
    unit: str = ''
    #: default width of a grid cell along this dimension.
    default_granularity: float = 1.0
    #: True when the coordinate is a load intensity (scaled along the ray).
    scales_with_load: bool = False
    #: the sample's field that is the coordinate, for a feature read as is.
    field: str = ''

    def extract(self, sample: Mapping[str, Any]) -> float:
        """Return the coordinate of ``sample``; NaN when it cannot be known."""
        if not self.field:
            raise NotImplementedError
        return _num(sample, self.field)

    def __repr__(self) -> str:
        return '<Feature %s>' % self.name


def _num(sample: Mapping[str, Any], key: str) -> float:
    value = sample.get(key)
    if value is None or isinstance(value, bool):
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


class _Intensity(Feature):
    """A request rate of the node: scales with the load."""

    default_granularity = 100.0
    scales_with_load = True


class ReadRate(_Intensity):
    """Read intensity: reads per second served by the node."""

    name = 'read_rate'
    unit = 'reads/s'
    field = 'reads_per_s'


class WriteRate(_Intensity):
    """Write intensity: writes per second served by the node."""

    name = 'write_rate'
    unit = 'writes/s'
    field = 'writes_per_s'


class DataSize(Feature):
    """Average request size, the request-weighted mean of read and write sizes.

    With no request in the window the plain mean of the known sizes is used
    (0 when neither is known).
    """

    name = 'data_size'
    unit = 'bytes'
    default_granularity = 512.0
    scales_with_load = False

    def extract(self, sample: Mapping[str, Any]) -> float:
        reads = _num(sample, 'reads_per_s')
        writes = _num(sample, 'writes_per_s')
        rsize = _num(sample, 'read_bytes_mean')
        wsize = _num(sample, 'write_bytes_mean')
        if math.isnan(reads) or math.isnan(writes):
            return math.nan
        total = reads + writes
        if total > 0:
            if (reads > 0 and math.isnan(rsize)) or (writes > 0 and math.isnan(wsize)):
                return math.nan
            rpart = reads * rsize if reads > 0 else 0.0
            wpart = writes * wsize if writes > 0 else 0.0
            return (rpart + wpart) / total
        known = [s for s in (rsize, wsize) if not math.isnan(s)]
        return sum(known) / len(known) if known else 0.0


class InterferenceIndex(Feature):
    """Interference index of the VM's host (Hubbub-Scale), reported by the
    host agent in the sample as ``interference_index`` (0 = none).
    """

    name = 'interference_index'
    unit = ''
    default_granularity = 0.1
    field = 'interference_index'


def slowdown(sample: Mapping[str, Any]) -> float:
    """``1 + interference_index`` of ``sample`` (1 when it carries none).

    Raises ValueError for an index that is not a finite number >= 0.
    """
    value = sample.get(InterferenceIndex.field)
    if value is None:
        return 1.0
    index = _num(sample, InterferenceIndex.field)
    if not (math.isfinite(index) and index >= 0):
        raise ValueError('interference_index must be a finite number >= 0, '
                         'not %r' % (value,))
    return 1.0 + index


def scale_loads(features: Sequence[Feature], point: Sequence[float],
                factor: float) -> list[float]:
    """``point`` with its load coordinates multiplied by ``factor``."""
    return [v * factor if f.scales_with_load else float(v)
            for f, v in zip(features, point)]


def load_feature(name: str) -> Feature:
    """Instantiate the plug-in ``name`` of the ``elastman.features``
    namespace (ConfigurationError if it cannot be loaded).
    """
    return loader.driver(NAMESPACE, name, '[trainer] features')


def load_features(names: Iterable[str]) -> list[Feature]:
    """Instantiate the plug-ins of ``names`` in order."""
    return [load_feature(n) for n in names]


def extract_point(features: Sequence[Feature],
                  sample: Mapping[str, Any]) -> list[float]:
    """The feature-space coordinates of ``sample``."""
    return [f.extract(sample) for f in features]
