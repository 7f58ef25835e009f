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
"""The trainer's rounds: their interval and the budget of each."""
import pytest

from elastman.common import config
from elastman.trainer import manager as trainer_manager
from tests.unit import memstore


@pytest.fixture
def conf():
    conf = config.CONF
    conf([], project='elastman', default_config_files=[])
    yield conf
    conf.clear_override('update_period', 'trainer')
    conf.clear_override('round_budget', 'trainer')


def test_a_round_spends_at_most_its_budget_of_the_interval(conf):
    trainer = trainer_manager.TrainerManager(conf, store=memstore.MemStore())
    # the monitor's interval (60 s) is shorter than the update period
    assert trainer.interval == 60.0
    assert trainer.round_budget == pytest.approx(48.0)
    conf.set_override('update_period', 20, 'trainer')
    conf.set_override('round_budget', 0.5, 'trainer')
    assert trainer.interval == 20.0
    assert trainer.round_budget == pytest.approx(10.0)
    assert trainer.periodic_tasks() == [(trainer.train_all, 20.0)]
