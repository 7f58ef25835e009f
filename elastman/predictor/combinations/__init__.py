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
"""Online combinations of the forecasters of one series.

Every round each forecaster gives a path over the horizon; a combination
turns them into one answer with two parts:

``values``
    the point forecast of each step;
``peak``
    ``peak[k]``, the forecast of the highest value among the first ``k + 1``
    steps, which is what the actuator plans on.

It learns from the forecasts that matured (:class:`~elastman.predictor.paths.
Matured`): at each lead, how far each forecaster's point and peak were from
what happened. The combinations:

``majority`` / ``average``
    OnlineElastMan's weighted majority (:class:`WeightedMajority`): the
    forecast of the heaviest forecaster, or the weight-averaged forecast; the
    peak is the running peak of that path.
``mean`` / ``median``
    the plain mean or median of the forecasters that answered, step by step
    (the peak: of their running peaks).
``select``
    per lead, and separately for the point and the peak, the candidate with
    the lowest discounted absolute relative error, the candidates being every
    forecaster, the mean and the median (follow the leader over forecasters
    and their combinations).
``hedge``
    per lead, exponentially weighted averaging (Hedge) over the same
    candidates: weight ``exp(-eta * discounted error)``.
``switch``
    per lead, hedge's own answer or the candidate with the lowest long-run
    error (follow the leader over hedge and its candidates).

For ``select`` and ``hedge`` the point's candidates are judged by default
on their errors at each lead (``point_scope``), the peak's on one loss
pooled over the leads (``scope``: after a change the short leads tell
first); a point is never above the peak of the steps up to it.
"""

from __future__ import annotations

from typing import Any, Sequence

from elastman.predictor.combinations.averages import Mean
from elastman.predictor.combinations.averages import Median
from elastman.predictor.combinations.base import Combination
from elastman.predictor.combinations.base import Combined
from elastman.predictor.combinations.base import MAX_ERROR
from elastman.predictor.combinations.base import OPTIONS
from elastman.predictor.combinations.base import relative_errors
from elastman.predictor.combinations.base import SCOPES
from elastman.predictor.combinations.majority import Majority
from elastman.predictor.combinations.majority import WeightedMajority
from elastman.predictor.combinations.select import Hedge
from elastman.predictor.combinations.select import Select
from elastman.predictor.combinations.switch import Switch

__all__ = ['COMBINATIONS', 'Combination', 'Combined', 'Hedge', 'MAX_ERROR', 'Majority',
           'Mean', 'Median', 'OPTIONS', 'SCOPES', 'Select', 'Switch', 'WeightedMajority',
           'make', 'relative_errors']


#: Combination rules by name.
COMBINATIONS = {
    'majority': lambda names, **kw: Majority(names, average=False, **kw),
    'average': lambda names, **kw: Majority(names, average=True, **kw),
    'mean': Mean,
    'median': Median,
    'select': Select,
    'hedge': Hedge,
    'switch': Switch,
}


def make(rule: str, names: Sequence[str], **options: Any) -> Combination:
    """A combination by rule name (:data:`COMBINATIONS`)."""
    try:
        factory = COMBINATIONS[rule]
    except KeyError:
        raise ValueError('unknown combination %r (one of %s)'
                         % (rule, ', '.join(COMBINATIONS)))
    return factory(names, **options)
