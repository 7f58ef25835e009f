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
"""The ``--set`` assignments of the simulator's elastman policies, checked
as the API checks a scaling policy and as the predictor worker checks its
options.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from elastman.actuator import policy as policy_mod
from elastman.actuator.policy import ScalingPolicy
from elastman.capacity.params import InvalidParams
from elastman.capacity.params import ModelParams
from elastman.common import assignments
from elastman.predictor import combinations
from elastman.predictor.ensemble import Ensemble
from elastman.predictor.ensemble import MODES as ENSEMBLE_MODES

#: ScalingPolicy fields the simulator sets from its own configuration.
SIMULATOR_FIELDS = ('min_size', 'max_size', 'replication_factor', 'slo_threshold_ms')


#: ``[predictor]`` options of the ensemble the simulator's forecasts take
#: (``--set predictor={...}``), by their Ensemble argument; the
#: combination's are :data:`elastman.predictor.combinations.OPTIONS`
PREDICTOR_OPTIONS = {'selection': 'mode', 'tolerance': 'tolerance',
                     'penalty': 'penalty', 'weight_floor': 'weight_floor',
                     'quantile': 'quantile', 'quantile_gamma': 'quantile_gamma'}


def ensemble_options(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The :class:`Ensemble` arguments of ``[predictor]`` options given by
    their option names. Raises ValueError naming an unknown one.
    """
    out: dict[str, Any] = {}
    combination = {}
    for name, value in doc.items():
        if name == 'selection' and value not in ENSEMBLE_MODES:
            raise ValueError('--set predictor: selection %r is not one of %s'
                             % (value, ', '.join(ENSEMBLE_MODES)))
        if name in PREDICTOR_OPTIONS:
            out[PREDICTOR_OPTIONS[name]] = value
        elif name in combinations.OPTIONS:
            combination[name] = value
        else:
            raise ValueError('--set predictor: unknown option %r (one of %s)' % (
                name, ', '.join(sorted(set(PREDICTOR_OPTIONS) | set(combinations.OPTIONS)))))
    if combination:
        out['combination_options'] = combination
    return out


def parse_settings(specs: Sequence[str]) -> dict[str, Any]:
    """Scaling policy fields for the elastman policies, from ``FIELD=VALUE``
    assignments (``VALUE`` is JSON; a bare word is a string), checked as the
    API checks a policy. Raises ValueError naming the field.
    """
    out = assignments.parse(specs)
    model = out.pop('model', None)
    predictor = out.pop('predictor', None)
    names = policy_mod.field_names()
    for name in out:
        if name not in names:
            raise ValueError('--set %s: not a scaling policy field (one of %s)'
                             % (name, ', '.join(names)))
        if name in SIMULATOR_FIELDS:
            raise ValueError('--set %s: the simulator sets it from its own '
                             'configuration' % name)
    try:
        ScalingPolicy(**out).validate()
    except policy_mod.InvalidPolicy as exc:
        raise ValueError('--set %s' % exc) from None
    if model is not None:
        # the policy document's capacity model parameters, as the API's
        try:
            if not isinstance(model, dict):
                raise InvalidParams('not an object')
            ModelParams.from_dict(model)
        except (InvalidParams, TypeError) as exc:
            raise ValueError('--set model: %s (a JSON object of capacity '
                             'model parameters)' % exc) from None
        out['model'] = dict(model)
    if predictor is not None:
        # the [predictor] options of the simulated forecasts, checked as the
        # predictor worker checks them when it starts
        if not isinstance(predictor, dict):
            raise ValueError('--set predictor: not an object (a JSON object of '
                             '[predictor] options)')
        try:
            Ensemble(**ensemble_options(predictor))
        except (ValueError, TypeError) as exc:
            msg = str(exc)
            raise ValueError(msg if msg.startswith('--set') else
                             '--set predictor: %s' % msg) from None
        out['predictor'] = dict(predictor)
    return out
