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
"""elastman configuration: one module per option group, all registered on CONF.

Each module of this package defines ``register_opts(conf)`` and ``list_opts()``;
they are discovered here and in :mod:`elastman.conf.opts`, so a new option group
is a new module and nothing else.
"""
import importlib
import pkgutil

from oslo_config import cfg

CONF = cfg.CONF


def _register_all(conf):
    for info in pkgutil.iter_modules(__path__):
        if info.name == 'opts':
            continue
        module = importlib.import_module(__name__ + '.' + info.name)
        module.register_opts(conf)


_register_all(CONF)
