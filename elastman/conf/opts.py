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
"""Option discovery for oslo-config-generator.

Every module of this package that defines ``list_opts`` is collected, so adding
an option group is adding a module: nothing here needs to change.
"""
import collections
import importlib
import pkgutil

from oslo_config import cfg

import elastman.conf

_SKIP = frozenset({'opts'})


def _option_modules():
    for info in pkgutil.iter_modules(elastman.conf.__path__):
        if info.name in _SKIP:
            continue
        module = importlib.import_module('elastman.conf.' + info.name)
        if hasattr(module, 'list_opts'):
            yield module


def list_opts():
    """Return [(group, [opts])] for every elastman option group."""
    grouped = collections.defaultdict(list)
    for module in _option_modules():
        for group, opts in module.list_opts():
            key = group.name if isinstance(group, cfg.OptGroup) else group
            grouped[key].extend(opts)
    return [(key, sorted(opts, key=lambda o: o.name))
            for key, opts in sorted(grouped.items(), key=lambda kv: (kv[0] != 'DEFAULT', kv[0]))]


def set_defaults(conf=None):
    """Hook for oslo.config.opts.defaults: elastman changes no library default."""


def register_group(conf, group: cfg.OptGroup, options: list) -> None:
    """Register ``options`` in a copy of ``group`` on ``conf``: an OptGroup
    of its own per ConfigOpts, because overrides live on the OptGroup and a
    shared one would share them between ConfigOpts.
    """
    conf.register_group(cfg.OptGroup(group.name, title=group.title,
                                     help=group.help))
    conf.register_opts(options, group=group)


def round_budget_opt(interval: str, worker: str, handled: str) -> cfg.Opt:
    """``round_budget`` of a worker that shares its clusters by leases:
    ``interval`` names its round's interval, ``handled`` what it does to a
    cluster.
    """
    return cfg.FloatOpt(
        'round_budget', default=0.8, min=0.05, max=1.0,
        help='Fraction of a round\'s interval (%s) one round may spend on '
             'its clusters. The clusters %s least recently go first; those '
             'left when the budget is spent go first in the next round, so '
             'a %s that starts with or takes over many clusters catches up '
             'over a few rounds.' % (interval, handled, worker))
