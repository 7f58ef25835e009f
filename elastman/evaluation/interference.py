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
"""The capacity model's error during interference episodes, with and without
the host agents' interference index.

    elastman-manage interference-error --trace weekly --nodes 50 --days 7

runs the same controller with three capacity models on the simulated
cluster: ``elastman-nointerference`` (no index), ``elastman`` (the index
scales the load, the trainer's default) and ``elastman-dimension`` (the
index as a third feature, Hubbub-Scale's).
Every control period it asks the policy's own capacity models
(:func:`elastman.actuator.planning.estimates_for`, the decision's call) for
each serving VM's capacity at the load the VM serves that minute, and
compares it with the simulator's truth: the load along the same ray at which
the VM's utilisation reaches 1, where its mean p99 reaches the SLO
(:func:`true_capacity`). A VM counts as in an episode while the simulator's
interference factor is below 1. VMs that stream (cleanup after a join, or
leaving) are left out of both sets: neither model sees that penalty.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from typing import Any

import numpy as np

from elastman.actuator import planning
from elastman.capacity.params import INTERFERENCE
from elastman.evaluation import policies as pol
from elastman.evaluation import simulator as sim_mod
from elastman.evaluation import sweep
from elastman.evaluation import tool
from elastman.evaluation import traces as tr

#: without the index first: the others' errors are compared with its
POLICIES = ('elastman-nointerference', 'elastman', 'elastman-dimension')
MODES = {'elastman-nointerference': 'never', 'elastman': 'scale',
         'elastman-dimension': 'dimension'}


def true_capacity(reads: np.ndarray, writes: np.ndarray, size: np.ndarray,
                  factor: np.ndarray, hw: tr.Hardware) -> np.ndarray:
    """Requests per second, along the ray through (reads, writes) at the
    request ``size``, at which the simulated VM's utilisation
    ``(reads/read_cap + writes/write_cap + size/size_cap) / factor`` is 1.
    """
    per_op = reads / hw.read_cap + writes / hw.write_cap
    scale = (factor - size / hw.size_cap) / np.maximum(per_op, 1e-12)
    return np.maximum(scale, 0.0) * (reads + writes)


@dataclasses.dataclass
class ErrorTally:
    """Relative capacity errors ``(estimate - truth) / truth``."""

    episode: list[float] = dataclasses.field(default_factory=list)
    outside: list[float] = dataclasses.field(default_factory=list)
    unanswered: int = 0

    def add(self, errors: np.ndarray, in_episode: np.ndarray) -> None:
        self.episode.extend(errors[in_episode].tolist())
        self.outside.extend(errors[~in_episode].tolist())

    @staticmethod
    def _summary(errors: list[float]) -> dict[str, float]:
        e = np.asarray(errors, dtype=float)
        if not e.size:
            return {'n': 0, 'mae': float('nan'), 'bias': float('nan'),
                    'p90': float('nan')}
        return {'n': int(e.size), 'mae': float(np.abs(e).mean()),
                'bias': float(e.mean()), 'p90': float(np.quantile(np.abs(e), .9))}

    def summary(self) -> dict[str, Any]:
        return {'episode': self._summary(self.episode),
                'outside': self._summary(self.outside),
                'unanswered': self.unanswered}


class Measured(pol.Elastman):
    """An :class:`~elastman.evaluation.policies.elastman.Elastman` policy that, every
    control period, scores its capacity models against the simulator's truth.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tally = ErrorTally()

    def observe(self, sim: sim_mod.SimCluster) -> None:
        super().observe(sim)
        if sim.minute % self.every == 0:
            self.score(sim)

    def score(self, sim: sim_mod.SimCluster) -> None:
        slots = sim.serving_slots()
        slots = slots[~(sim.stream_until[slots] > sim.t)]
        if not len(slots):
            return
        ids = [str(int(k)) for k in sim.ordinal[slots]]
        flavors = {n: sim.flavors[i].name for n, i in zip(ids, sim.flavor[slots])}
        reads, writes = sim.obs_reads[slots], sim.obs_writes[slots]
        size = sim.obs_size[slots]
        interf = sim.interference_index(slots)
        per_vm = {n: {'reads_per_s': float(r), 'writes_per_s': float(w),
                      'read_bytes_mean': float(z), 'write_bytes_mean': float(z),
                      INTERFERENCE: float(i)}
                  for n, r, w, z, i in zip(ids, reads, writes, size, interf)}
        est = planning.estimates_for(self.registry, per_vm, flavors)
        truth = true_capacity(reads, writes, size, sim.true_factor(slots),
                              sim.cfg.hardware)
        got = np.array([est[n].capacity if n in est else np.nan for n in ids])
        ok = np.isfinite(got) & (truth > 0)
        self.tally.unanswered += int((~ok).sum())
        self.tally.add((got[ok] - truth[ok]) / truth[ok], interf[ok] > 0)


def measure(trace: tr.Trace, seed: int, cfg: sim_mod.SimConfig | None = None,
            flavors=None, policies=POLICIES, prior: bool = True,
            probes: int = 4, settings: dict[str, Any] | None = None
            ) -> dict[str, dict[str, Any]]:
    """Each policy's error summary (see :meth:`ErrorTally.summary`) plus
    its violation minutes and VM-hours on ``trace``; ``prior=False``
    starts the models empty instead of from another cluster's;
    ``settings`` are scaling policy fields (``model`` its capacity model
    parameters) of every policy, as ``simulate --set`` takes them; ``probes``
    VMs per flavour feed the capacity model (the service feeds it every
    VM; the simulator samples a few to stay fast).
    """
    cfg = cfg or sim_mod.SimConfig()
    flavors = flavors or [sim_mod.Flavor('m1.medium')]
    out = {}
    for name in policies:
        policy = Measured(predict=True, interference=MODES[name],
                          name=name, prior=prior, probes=probes,
                          options=settings)
        run = sim_mod.run(trace, policy, cfg, flavors, seed)
        s = run['series']
        summary = policy.tally.summary()
        summary['violation_minutes'] = int(s['violation'].sum())
        summary['vm_hours'] = float(s['vms'].sum() * trace.step_s / 3600.0)
        out[name] = summary
    return out


def format_table(results: dict[str, dict[str, Any]]) -> list[str]:
    lines = ['policy                   in episodes: n  |err|  bias   p90 |err|'
             '   outside: n  |err|  bias  viol.min  VM-hours']
    for name, r in results.items():
        e, o = r['episode'], r['outside']
        lines.append('%-24s %14d %6.1f%% %+6.1f%% %6.1f%%   %9d %6.1f%% %+6.1f%% %8d %9.1f' % (
            name, e['n'], e['mae'] * 100, e['bias'] * 100, e['p90'] * 100,
            o['n'], o['mae'] * 100, o['bias'] * 100, r['violation_minutes'],
            r['vm_hours']))
    base = results.get(POLICIES[0], {}).get('episode', {}).get('mae')
    for name in POLICIES[1:]:
        if base and name in results:
            lines.append('in episodes, the error of %s is %.2fx the error without '
                         'the index (the target: at most 0.5x)'
                         % (name, results[name]['episode']['mae'] / base))
    return lines


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('--trace', default='weekly')
    ap.add_argument('--nodes', type=int, default=50)
    ap.add_argument('--days', type=float, default=None)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--probes', type=int, default=4,
                    help='VMs per flavour whose samples train the capacity '
                    'model (the simulator\'s default: 4)')
    ap.add_argument('--set', action='append', default=[], dest='settings',
                    metavar='FIELD=VALUE',
                    help='a scaling policy field of the three policies, as '
                         'simulate --set takes it (model={...} the capacity '
                         'model parameters); repeat for several')
    ap.add_argument('--interference-per-day', type=float, default=None,
                    help='episodes per VM per day (default: the simulator\'s)')


def _checked(args: argparse.Namespace) -> dict[str, Any]:
    """The policies' settings, once every argument is one the run takes
    (ValueError naming the option).
    """
    # the simulator's own checks of a trace, a size and a seed
    sweep.trace_names(args.trace)
    sweep.sizes(str(args.nodes))
    sweep.seeds(str(args.seed))
    if args.probes < 1:
        raise ValueError('--probes %d: at least 1' % args.probes)
    if args.days is not None and not args.days > 0:
        raise ValueError('--days %g: more than 0' % args.days)
    if args.interference_per_day is not None and not args.interference_per_day >= 0:
        raise ValueError('--interference-per-day %g: 0 or more' % args.interference_per_day)
    return pol.parse_settings(args.settings)


def run_args(args: argparse.Namespace) -> int:
    t0 = time.monotonic()
    try:
        settings = _checked(args)
    except ValueError as exc:
        print('interference-error: %s' % exc, file=sys.stderr)
        return 2
    cfg = sim_mod.SimConfig()
    if args.interference_per_day is not None:
        cfg = dataclasses.replace(cfg, interference_per_day=args.interference_per_day)
    trace = tr.load(args.trace, nodes=args.nodes, days=args.days, seed=args.seed)
    results = measure(trace, args.seed, cfg, probes=args.probes,
                      settings=settings)
    print('capacity error, (estimate - truth) / truth, every control period, '
          'trace %s, %d VMs, seed %d, %d probe VMs' % (
              args.trace, args.nodes, args.seed, args.probes))
    for line in format_table(results):
        print(line)
    print('wall time %.1f s' % (time.monotonic() - t0))
    return 0


TOOL = tool.Tool(
    command='interference-error', module='elastman.evaluation.interference',
    help=('the capacity model\'s error during interference '
          'episodes, with and without the interference index'),
    doc=__doc__, add_arguments=add_arguments, run=run_args)
add_subparser = TOOL.add_subparser
main = TOOL.main


if __name__ == '__main__':
    sys.exit(main())
