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
"""The host agents' notifications at the actuator: reports and escalations,
and the escalation's live-migration recommendation through the driver."""
from __future__ import annotations

from elastman.actuator import hostevents
from tests.unit import memstore


class Driver:
    name = 'fake'

    def __init__(self, fail=None):
        self.migrated = []
        self.fail = fail

    def live_migrate(self, server_id):
        if self.fail:
            raise RuntimeError(self.fail)
        self.migrated.append(server_id)


ESCALATION = {'host': 'cmp-1', 'reason': 'cannot fix SLO violation',
              'recommendation': {'action': 'live_migration',
                                 'server_id': 'be-1', 'cost_ms': 10000.0}}


def _send(conf, driver, payload=ESCALATION, on=True):
    conf.set_override('live_migrate_on_escalation', on, 'actuator')
    try:
        store = memstore.MemStore()
        endpoint = hostevents.HostEventsEndpoint(store, driver, conf)
        endpoint.info(None, 'hostagent.cmp-1', 'hostagent.escalation',
                      payload, {})
        (host, details), = store.hosts.escalations
        assert host == 'cmp-1' and details['escalation'] == payload
        assert store.hosts.reports == []   # the newest index stays
        return details.get('live_migration')
    finally:
        conf.clear_override('live_migrate_on_escalation', 'actuator')


def test_recommendation_is_recorded_and_left_to_the_operator(conf):
    driver = Driver()
    assert _send(conf, driver, on=False) == {'server_id': 'be-1',
                                             'state': 'recommended'}
    assert driver.migrated == []


def test_recommendation_is_carried_out_through_the_driver(conf):
    driver = Driver()
    assert _send(conf, driver)['state'] == 'requested'
    assert driver.migrated == ['be-1']
    failed = _send(conf, Driver(fail='no valid host'))
    assert failed['state'] == 'failed' and 'no valid host' in failed['reason']
    assert _send(conf, object())['state'] == 'unsupported'
    assert _send(conf, driver, payload={'host': 'cmp-1'}) is None
