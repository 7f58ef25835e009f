"""Fixtures shared by the unit tests: the global configuration, parsed
with no files and a state_path of the test's own.
"""
import pytest

from elastman.common import config as em_config


@pytest.fixture
def conf(tmp_path):
    conf = em_config.CONF
    conf([], project='elastman', default_config_files=[])
    conf.set_override('state_path', str(tmp_path / 'state'))
    yield conf
    conf.clear_override('state_path')
