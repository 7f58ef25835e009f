"""Fixtures of the actuator unit tests."""
from oslo_config import cfg
import pytest

import elastman.conf.actuator
import elastman.conf.trainer


@pytest.fixture
def conf():
    """A private ConfigOpts with the [actuator] options and the [trainer]
    SLO the controller falls back on.
    """
    conf = cfg.ConfigOpts()
    elastman.conf.actuator.register_opts(conf)
    elastman.conf.trainer.register_opts(conf)
    conf([], default_config_files=[])
    return conf
