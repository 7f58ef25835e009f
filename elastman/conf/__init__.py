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
