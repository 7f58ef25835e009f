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
"""A flavour's prior capacity model in the simulator: what another cluster of
the same flavour, on the same cloud, has learnt.

In the service a new cluster starts from the newest model of its flavour in
the store, learnt by any other cluster (``elastman.trainer``). The
simulator's counterpart runs that other cluster: the shipped ``paper`` trace
at 20 VMs, with a seed of its own (so its VMs are other VMs), under
OnlineElastMan's rule without prediction and without the latency guard, the
way a cluster that learnt by crossing the boundary did. Its flavour model is
exported as the service exports one (``elastman-manage model export``) and
imported by the new cluster. The run is cached per process.
"""
from __future__ import annotations

import dataclasses
import functools
import json
from typing import Any, Callable

import numpy as np

from elastman.actuator.policy import PAPER_RULE
from elastman.capacity.params import ModelParams
from elastman.evaluation import simulator as sim_mod
from elastman.evaluation import traces as tr

#: The other cluster: its trace, size and seed.
PRIOR_TRACE, PRIOR_NODES, PRIOR_SEED = 'paper', 20, 1000


#: Builds the other cluster's policy: ``teacher(params, options, name)``
#: returns an elastman policy with ``options`` for its scaling policy and a
#: ``registry`` (``policies.Elastman`` without prediction or prior).
Teacher = Callable[[ModelParams, dict[str, Any], str], Any]


def flavor_prior(cfg: sim_mod.SimConfig, flavor: sim_mod.Flavor,
                 params: ModelParams, teacher: Teacher) -> dict[str, Any] | None:
    """The exported flavour model of the other cluster, run by the policy
    ``teacher`` builds (None if it learnt no boundary).
    """
    doc = _learn(_key(cfg), _key(flavor), json.dumps(params.to_dict(), sort_keys=True),
                 teacher)
    return json.loads(doc) if doc else None


def _key(obj: Any) -> str:
    return json.dumps(dataclasses.asdict(obj), sort_keys=True)


@functools.lru_cache(maxsize=8)
def _learn(cfg_key: str, flavor_key: str, params_key: str,
           teacher: Teacher) -> str | None:
    cfg_doc = json.loads(cfg_key)
    cfg_doc['hardware'] = tr.Hardware(**cfg_doc['hardware'])
    cfg_doc['interference_drop'] = tuple(cfg_doc['interference_drop'])
    cfg = sim_mod.SimConfig(**cfg_doc)
    flavor = sim_mod.Flavor(**json.loads(flavor_key))
    params = ModelParams.from_dict(json.loads(params_key))
    trace = tr.load(PRIOR_TRACE, nodes=PRIOR_NODES, seed=PRIOR_SEED)
    other = teacher(params, dict(PAPER_RULE), 'prior-%s' % flavor.name)
    state = np.random.get_state()
    try:
        sim_mod.run(trace, other, cfg, [flavor], PRIOR_SEED)
    finally:
        np.random.set_state(state)
    model = other.registry.flavor_model(flavor.name)
    if model is None or not model.two_class:
        return None
    return json.dumps(other.registry.export_flavor_model(flavor.name))
