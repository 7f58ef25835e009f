"""What compute-host agents tell the actuator over the bus.

``hostagent.interference`` reports (per VM interference index and latency)
are kept in the store, where the API shows them; ``hostagent.escalation``
(the BALM controller ran out of host-level remedies) is recorded too and
logged as a warning: the next control period sees the VM's latency in the
monitor's samples and its capacity model, which is how it reacts.
"""
from __future__ import annotations

from oslo_log import log as logging
import oslo_messaging as messaging

LOG = logging.getLogger(__name__)


class HostEventsEndpoint:
    """Notification endpoint for the ``hostagent.*`` events."""

    filter_rule = messaging.NotificationFilter(event_type=r'^hostagent\.')

    def __init__(self, store) -> None:
        self.store = store

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        host = payload.get('host') or publisher_id.partition('.')[2]
        if event_type == 'hostagent.interference':
            self.store.hosts.report(host, payload.get('vms') or {})
        elif event_type == 'hostagent.escalation':
            LOG.warning('host %s escalates: %s', host, payload)
            self.store.hosts.report(host, {}, details={'escalation': payload})
        return messaging.NotificationResult.HANDLED

    warn = info
