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
"""What compute-host agents tell the actuator over the bus.

``hostagent.interference`` reports (per VM interference index and latency)
are kept in the store, where the API shows them; ``hostagent.escalation``
(the agent's ladder ran out of host-level remedies) is kept as the host's
``details`` (the newest escalation; reports leave it alone, and it leaves
the newest report's interference index alone) and logged as a warning:
the next control period sees the VM's latency in the monitor's samples
and its capacity model, which is how it reacts. The
escalation's last rung, a live-migration recommendation, is carried out
through the compute driver (Nova) when ``[actuator]
live_migrate_on_escalation`` is on.
"""
from __future__ import annotations

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import timeutils

LOG = logging.getLogger(__name__)


class HostEventsEndpoint:
    """Notification endpoint for the ``hostagent.*`` events."""

    filter_rule = messaging.NotificationFilter(event_type=r'^hostagent\.')

    def __init__(self, store, driver=None, conf=None) -> None:
        self.store = store
        self.driver = driver
        self.conf = conf

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        host = payload.get('host') or publisher_id.partition('.')[2]
        if event_type == 'hostagent.interference':
            self.store.hosts.report(host, payload.get('vms') or {})
        elif event_type == 'hostagent.escalation':
            LOG.warning('host %s escalates: %s', host, payload)
            details = {'escalation': payload,
                       'at': timeutils.utcnow().isoformat()}
            migration = self._live_migrate(host, payload.get('recommendation'))
            if migration is not None:
                details['live_migration'] = migration
            self.store.hosts.escalate(host, details)
        return messaging.NotificationResult.HANDLED

    def _live_migrate(self, host: str, recommendation) -> dict | None:
        """Carry out a live-migration recommendation when configured."""
        if not isinstance(recommendation, dict) or \
                recommendation.get('action') != 'live_migration' or \
                not recommendation.get('server_id'):
            return None
        server = str(recommendation['server_id'])
        if self.conf is None or \
                not self.conf.actuator.live_migrate_on_escalation:
            return {'server_id': server, 'state': 'recommended'}
        migrate = getattr(self.driver, 'live_migrate', None)
        if migrate is None:
            return {'server_id': server, 'state': 'unsupported',
                    'reason': 'the %s compute driver cannot live-migrate'
                              % getattr(self.driver, 'name', '?')}
        try:
            migrate(server)
        except Exception as exc:  # noqa: BLE001 - recorded, not raised
            LOG.warning('live migration of %s off %s failed: %s', server,
                        host, exc)
            return {'server_id': server, 'state': 'failed',
                    'reason': str(exc)}
        LOG.info('live migration of %s off %s requested', server, host)
        return {'server_id': server, 'state': 'requested'}

    warn = info
