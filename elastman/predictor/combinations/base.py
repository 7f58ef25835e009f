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
"""What every combination rule shares: its answer, its interface and the
error it scores forecasts by."""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Mapping, Optional, Sequence

import numpy as np

from elastman.predictor.paths import Matured


#: How :class:`~.select.Select` and :class:`~.select.Hedge` judge a candidate at a lead: by
#: its errors at that lead (``lead``), by one loss for every lead from all
#: the matured forecasts (``pooled``), or by the sum of both (``both``).
SCOPES = ('both', 'pooled', 'lead')

#: A relative error above this counts as this much (a forecast ten times
#: the actual is no more of a miss than one twice it).
MAX_ERROR = 1.0

#: The ``[predictor]`` options of the combination rules (each rule takes
#: those it knows).
OPTIONS = ('discount', 'eta', 'relative_eta', 'switch_discount',
           'switch_min_rounds')


@dataclasses.dataclass
class Combined:
    """A combination's answer for one round."""

    values: np.ndarray
    peak: np.ndarray
    chosen: Optional[str]
    weights: Dict[str, float]
    missed: List[str] = dataclasses.field(default_factory=list)


def relative_errors(predicted: np.ndarray, actual: float) -> np.ndarray:
    """Capped relative errors; a missing forecast (NaN) stays NaN."""
    err = np.abs(np.asarray(predicted, float) - actual) / max(abs(actual),
                                                              1e-9)
    return np.minimum(err, MAX_ERROR)


class Combination:
    """Base class: learn from matured forecasts, combine this round's paths.

    :param names: the forecasters, in the order of the rows of the paths.
    """

    name = 'combination'

    def __init__(self, names: Sequence[str], **_: Any) -> None:
        self.names = list(names)

    def learn(self, matured: Sequence[Matured]) -> List[str]:
        """Take in the forecasts that matured with one new point; return the
        forecasters this round counts as having missed (if the rule has
        such a notion).
        """
        return []

    def combine(self, paths: np.ndarray) -> Combined:
        """Combine ``paths`` (forecasters x steps, NaN rows: no answer)."""
        raise NotImplementedError

    def to_dict(self) -> Dict[str, Any]:
        return {}

    def load(self, data: Mapping[str, Any]) -> None:
        """Carry over a stored state (of the same rule)."""


def running_peak(paths: np.ndarray) -> np.ndarray:
    return np.fmax.accumulate(paths, axis=-1)


def answered(paths: np.ndarray) -> np.ndarray:
    return np.isfinite(paths[:, 0]) if paths.size else np.zeros(0, bool)


def borrow_unscored(table: np.ndarray, scored: np.ndarray) -> np.ndarray:
    """``table`` (candidates x leads) with each column not ``scored`` taken
    from the next scored lead, or the last scored one beyond it.
    """
    idx = np.flatnonzero(scored)
    if idx.size:
        for k in np.flatnonzero(~scored):
            later = idx[idx >= k]
            table[:, k] = table[:, later[0] if later.size else idx[-1]]
    return table
