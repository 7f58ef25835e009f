"""Fixtures of the actuator unit tests."""
import pytest
from oslo_config import cfg

import elastman.conf.actuator


@pytest.fixture
def conf():
    """A private ConfigOpts with the [actuator] options only."""
    conf = cfg.ConfigOpts()
    elastman.conf.actuator.register_opts(conf)
    conf([], default_config_files=[])
    return conf
