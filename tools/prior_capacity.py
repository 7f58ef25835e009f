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
"""How far a new cluster's prior capacity model sits from the simulator's
truth.

The simulator's prior (:mod:`elastman.evaluation.priors`) is the flavour
model another cluster learnt by crossing its boundary. This learns it
again with the capacity-model parameters given (JSON, as a scaling
policy's ``model`` field takes them) and prints, along a few rays of
reads, writes and request size, its capacity over the true capacity of a
nominal VM (capacity factor 1, no interference, not streaming), with the
cells a refit at the run's end would fit it on
(:meth:`~elastman.capacity.registry.ModelRegistry.flavor_training_set`):
how many are violated, and the weight of each class in the fit.

Example (doc/source/slo-first.rst)::

    python3 tools/prior_capacity.py '{}' '{"recency_floor": 1.0}'
"""

import argparse
import json
import os
import sys
from typing import List

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from elastman.actuator.policy import PAPER_RULE  # noqa: E402
from elastman.capacity import capacity as cap_mod  # noqa: E402
from elastman.capacity.params import ModelParams  # noqa: E402
from elastman.evaluation.policies import elastman as el  # noqa: E402
from elastman.evaluation import priors  # noqa: E402
from elastman.evaluation import simulator as sim_mod  # noqa: E402
from elastman.evaluation import traces as tr  # noqa: E402

#: (reads/s, writes/s, request bytes) of a VM: the rays measured
RAYS = ((650.0, 350.0, 900.0), (500.0, 500.0, 900.0),
        (800.0, 200.0, 900.0), (650.0, 350.0, 4000.0))


def measure(overrides: dict) -> str:
    cfg = sim_mod.SimConfig()
    flavor = sim_mod.Flavor('m1.large')
    base = el.Elastman(predict=False, prior=False, name='base').params
    params = ModelParams.from_dict(dict(base.to_dict(), **overrides))
    teacher = el.prior_teacher(params, dict(PAPER_RULE), 'prior-%s' % flavor.name)
    trace = tr.load(priors.PRIOR_TRACE, nodes=priors.PRIOR_NODES,
                    seed=priors.PRIOR_SEED)
    run = sim_mod.run(trace, teacher, cfg, [flavor], priors.PRIOR_SEED)
    registry = teacher.registry
    model = registry.flavor_model(flavor.name)
    if model is None or not model.two_class:
        return 'no boundary learnt'
    ratios = [cap_mod.capacities(model, [list(ray)])[0].capacity
              / el.true_capacity(cfg.hardware, 1.0, *ray) for ray in RAYS]
    _, labels, weights = registry.flavor_training_set(flavor.name, run['sim'].t)
    met, violated = labels > 0, labels < 0
    return ('capacity / true %s; cells %d, violated %d; mean weight met '
            '%.3f, violated %.3f' % (
                ' '.join('%.3f' % r for r in ratios), len(labels),
                int(violated.sum()), float(weights[met].mean()),
                float(weights[violated].mean())))


def main(argv: List[str] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('overrides', nargs='*', default=['{}'],
                    help='capacity-model parameters as JSON, one set each')
    args = ap.parse_args(argv)
    print('rays (reads/s, writes/s, bytes): %s'
          % ', '.join('(%g, %g, %g)' % r for r in RAYS))
    for text in args.overrides or ['{}']:
        print('%-36s %s' % (text, measure(json.loads(text))))
    return 0


if __name__ == '__main__':
    sys.exit(main())
