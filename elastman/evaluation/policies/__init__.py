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
"""Scaling policies behind one interface, for the simulator
(:class:`~elastman.evaluation.policies.base.Policy`).

* the baselines (:mod:`.baselines`): ``static``, ``reactive`` (Heat + Aodh's
  alarms) and ``target`` (the Kubernetes HPA's target tracking);
* elastman's own (:mod:`.elastman`): ``elastman-noprediction``, ``elastman``
  (a new cluster's :class:`~elastman.actuator.policy.ScalingPolicy`
  defaults) and their variants, which run the service's guard, planning
  loop, capacity model and forecaster ensemble;
* the oracles (:mod:`.oracles`): ``oracle``, ``load-oracle`` and
  ``serial-oracle``.

:func:`make` builds them by name; :func:`~.settings.parse_settings` checks
the ``--set`` assignments of elastman's.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from elastman.actuator.policy import PAPER_RULE
from elastman.evaluation.policies.base import MIN_SIZE
from elastman.evaluation.policies.base import Policy
from elastman.evaluation.policies.baselines import Reactive
from elastman.evaluation.policies.baselines import Static
from elastman.evaluation.policies.baselines import TargetTracking
from elastman.evaluation.policies.elastman import Elastman
from elastman.evaluation.policies.elastman import ExactCapacity
from elastman.evaluation.policies.elastman import FORECAST_AT
from elastman.evaluation.policies.elastman import Foresight
from elastman.evaluation.policies.elastman import grid_means
from elastman.evaluation.policies.elastman import GRID_STEPS
from elastman.evaluation.policies.elastman import INTERFERENCE_MODES
from elastman.evaluation.policies.elastman import QuantileLevel
from elastman.evaluation.policies.elastman import TrueCapacity
from elastman.evaluation.policies.oracles import LoadOracle
from elastman.evaluation.policies.oracles import Oracle
from elastman.evaluation.policies.oracles import SerialOracle
from elastman.evaluation.policies.settings import ensemble_options
from elastman.evaluation.policies.settings import parse_settings

__all__ = ['ALL', 'Elastman', 'FORECAST_AT', 'Foresight', 'GRID_STEPS', 'INTERFERENCE_MODES',
           'LoadOracle', 'MIN_SIZE', 'NAMES', 'Oracle', 'Policy', 'QuantileLevel',
           'Reactive', 'Static', 'TargetTracking', 'check_names', 'ensemble_options',
           'grid_means', 'make', 'parse_settings']


def _factories(elastman_kwargs: dict[str, Any]) -> dict[str, Callable[[], Policy]]:
    """A factory per policy name (``elastman_kwargs`` go to every elastman
    policy; ``elastman-paper`` keeps the paper's rule).
    """
    return {
        'static': Static, 'reactive': Reactive, 'target': TargetTracking,
        'elastman-noprediction': lambda: Elastman(predict=False, **elastman_kwargs),
        'elastman': lambda: Elastman(predict=True, **elastman_kwargs),
        'elastman-nointerference': lambda: Elastman(predict=True, **dict(
            elastman_kwargs, interference='never', name='elastman-nointerference')),
        'elastman-dimension': lambda: Elastman(predict=True, **dict(
            elastman_kwargs, interference='dimension', name='elastman-dimension')),
        'elastman-noprior': lambda: Elastman(predict=True, **dict(
            elastman_kwargs, prior=False, name='elastman-noprior')),
        'elastman-paper': lambda: Elastman(predict=True, **dict(
            elastman_kwargs, options=PAPER_RULE, prior=False, name='elastman-paper')),
        # plans on the forecast's upper quantile instead of its peak
        'elastman-quantile': lambda: Elastman(predict=True, **dict(
            elastman_kwargs, name='elastman-quantile', options=dict(
                elastman_kwargs.get('options') or {}, plan_on='quantile'))),
        # the same with no headroom: the bound's level is the margin
        'elastman-quantile-level': lambda: QuantileLevel(**dict(
            elastman_kwargs, name='elastman-quantile-level')),
        # the load's true future instead of a forecast
        'elastman-foresight': lambda: Foresight(**elastman_kwargs),
        # every VM's true capacity instead of its model's
        'elastman-true-capacity': lambda: TrueCapacity(**elastman_kwargs),
        # ... and the load's true future as well
        'elastman-exact': lambda: ExactCapacity(**elastman_kwargs),
        'oracle': Oracle, 'load-oracle': LoadOracle, 'serial-oracle': SerialOracle}


#: Every policy :func:`make` knows.
NAMES = tuple(_factories({}))


def check_names(names: Sequence[str]) -> None:
    """ValueError naming the policies :func:`make` does not know."""
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        raise ValueError('unknown policies: %s (one of %s)'
                         % (', '.join(unknown), ', '.join(NAMES)))


def make(names: Sequence[str] | None = None, **elastman_kwargs: Any) -> list[Policy]:
    """The policies by name, in the report's order (``elastman_kwargs`` go
    to every elastman policy; ``elastman-paper`` keeps the paper's rule).
    """
    names = list(names or ALL)
    check_names(names)
    factories = _factories(elastman_kwargs)
    return [factories[n]() for n in names]


#: The default report; ``load-oracle``, ``serial-oracle``, ``elastman-paper``,
#: ``elastman-quantile``, ``elastman-quantile-level``, ``elastman-foresight``,
#: ``elastman-true-capacity``, ``elastman-exact``, ``elastman-nointerference``,
#: ``elastman-dimension`` and ``elastman-noprior`` run when named.
ALL = ('static', 'reactive', 'target', 'elastman-noprediction', 'elastman', 'oracle')
