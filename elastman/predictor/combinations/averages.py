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
"""The plain mean and median of the forecasters that answered."""

from __future__ import annotations


import numpy as np

from elastman.predictor.combinations.base import answered
from elastman.predictor.combinations.base import Combination
from elastman.predictor.combinations.base import Combined
from elastman.predictor.combinations.base import running_peak


class Mean(Combination):
    """The plain mean (``median``: median) of the forecasters that answered."""

    name = 'mean'
    reduce = staticmethod(np.mean)

    def combine(self, paths: np.ndarray) -> Combined:
        ok = answered(paths)
        use = paths[ok]
        values = self.reduce(use, axis=0)
        peak = self.reduce(running_peak(use), axis=0)
        share = 1.0 / max(int(ok.sum()), 1)
        return Combined(values, np.fmax.accumulate(peak), self.name,
                        {n: share for i, n in enumerate(self.names) if ok[i]})


class Median(Mean):
    name = 'median'
    reduce = staticmethod(np.median)
