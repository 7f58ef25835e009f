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
"""oslo.messaging plumbing: transports, versioned RPC clients/servers, notifier.

A worker with an RPC API listens on the topic ``<[rpc] topic_prefix>-<worker>``.
Clients derive from :class:`RPCClient`, servers are built by
:func:`get_server`. Notifications go to ``[rpc] notification_topic``.
"""
from __future__ import annotations

from typing import Any
import urllib.parse

import kombu
from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_serialization import jsonutils

from elastman.common import context as em_context
from elastman.common import exception

LOG = logging.getLogger(__name__)

_DRIVERS_WITHOUT_BROKER = frozenset({'fake'})


class ContextSerializer(messaging.Serializer):
    """Carries RequestContext across the bus as a dict; payloads as JSON."""

    def __init__(self) -> None:
        self._base = messaging.JsonPayloadSerializer()

    def serialize_entity(self, ctxt, entity):
        return self._base.serialize_entity(ctxt, entity)

    def deserialize_entity(self, ctxt, entity):
        return self._base.deserialize_entity(ctxt, entity)

    def serialize_context(self, ctxt):
        return ctxt.to_dict()

    def deserialize_context(self, ctxt):
        return em_context.RequestContext.from_dict(ctxt)


def topic(conf, worker: str) -> str:
    return '%s-%s' % (conf.rpc.topic_prefix, worker)


def transport_scheme(conf) -> str:
    url = conf.transport_url or 'rabbit://'
    return urllib.parse.urlsplit(url).scheme.split('+')[0]


def get_transport(conf) -> messaging.Transport:
    """Return the RPC transport; a ConfigurationError names a bad URL."""
    try:
        return messaging.get_rpc_transport(conf)
    except messaging.InvalidTransportURL as exc:
        raise exception.ConfigurationError(
            reason='[DEFAULT] transport_url %r is not valid: %s'
                   % (conf.transport_url, exc))
    except messaging.DriverLoadFailure:
        raise exception.ConfigurationError(
            reason='[DEFAULT] transport_url: unknown transport %r (use '
                   'rabbit:// for separate processes or fake:// within one)'
                   % transport_scheme(conf))


def get_notification_transport(conf) -> messaging.Transport:
    try:
        return messaging.get_notification_transport(conf)
    except (messaging.InvalidTransportURL, messaging.DriverLoadFailure) as exc:
        raise exception.ConfigurationError(
            reason='notification transport: %s' % exc)


def check_broker(conf, attempts: int = 3) -> None:
    """Fail fast, with one clear line, when the broker cannot be reached.

    oslo.messaging connects lazily and retries forever; a service that starts
    against a wrong URL should say so instead.
    """
    scheme = transport_scheme(conf)
    if scheme in _DRIVERS_WITHOUT_BROKER:
        return
    url = messaging.TransportURL.parse(conf, conf.transport_url)
    if scheme not in ('rabbit', 'amqp', 'kombu'):
        return
    errors = []
    for host in url.hosts or [messaging.TransportHost('localhost', 5672)]:
        where = '%s:%s' % (host.hostname or 'localhost', host.port or 5672)
        amqp_url = 'amqp://%s:%s@%s/%s' % (
            urllib.parse.quote(host.username or 'guest', safe=''),
            urllib.parse.quote(host.password or 'guest', safe=''),
            where, urllib.parse.quote(url.virtual_host or '', safe=''))
        try:
            with kombu.Connection(amqp_url, connect_timeout=3) as conn:
                conn.ensure_connection(max_retries=attempts, interval_start=0.5,
                                       interval_step=0.5)
            return
        except Exception as exc:  # kombu wraps socket and AMQP errors alike
            errors.append('%s (%s)' % (where, exc))
    raise exception.BrokerUnavailable(where=', '.join(errors).split(' (')[0],
                                      reason='; '.join(errors))


class RPCClient:
    """Base of every worker's versioned RPC API client.

    Subclasses set ``WORKER`` (the topic suffix) and ``VERSION`` (the newest
    API version they speak) and pin each method to the version that
    introduced it.
    """

    WORKER: str = ''
    VERSION: str = '1.0'

    def __init__(self, conf, transport: messaging.Transport) -> None:
        target = messaging.Target(topic=topic(conf, self.WORKER),
                                  version=self.VERSION)
        self._client = messaging.get_rpc_client(
            transport, target, serializer=ContextSerializer(),
            timeout=conf.rpc.call_timeout)

    def call(self, ctxt, method: str, version: str = '1.0',
             server: str | None = None, timeout: float | None = None,
             **kwargs) -> Any:
        cctxt = self._client.prepare(version=version, server=server,
                                     timeout=timeout)
        return cctxt.call(ctxt, method, **kwargs)

    def cast(self, ctxt, method: str, version: str = '1.0',
             server: str | None = None, **kwargs) -> None:
        cctxt = self._client.prepare(version=version, server=server)
        cctxt.cast(ctxt, method, **kwargs)


def get_server(conf, transport: messaging.Transport, worker: str,
               endpoints: list) -> messaging.RPCServer:
    target = messaging.Target(topic=topic(conf, worker), server=conf.host)
    return messaging.get_rpc_server(
        transport, target, endpoints, executor='threading',
        serializer=ContextSerializer())


def get_notifier(conf, transport: messaging.Transport,
                 publisher_id: str) -> messaging.Notifier:
    return messaging.Notifier(transport, publisher_id=publisher_id,
                              driver='messagingv2',
                              topics=[conf.rpc.notification_topic],
                              serializer=ContextSerializer())


def get_listener(conf, transport: messaging.Transport, endpoints: list,
                 pool: str | None = None) -> messaging.NotificationListener:
    """A notification listener on the notification topic.

    Listeners sharing ``pool`` split the notifications between them. Without
    a pool they read the topic's default queue, the one a notifier declares
    so that nothing is lost before a listener starts (a pool's queue is
    another one: with only pools, the default queue fills up unread).
    """
    targets = [messaging.Target(topic=conf.rpc.notification_topic)]
    return messaging.get_notification_listener(
        transport, targets, endpoints, executor='threading', pool=pool,
        serializer=ContextSerializer())


def to_primitive(value: Any) -> Any:
    """Make a value safe for the bus (datetimes, UUIDs, sets...)."""
    return jsonutils.to_primitive(value, convert_instances=True)
