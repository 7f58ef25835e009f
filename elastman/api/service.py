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
"""Serving the API application on a thread of its own."""
from __future__ import annotations

import socketserver
import threading
from wsgiref import simple_server

from oslo_log import log as logging

from elastman.api import app as api_app
from elastman.common import exception
from elastman.common import service

LOG = logging.getLogger(__name__)


class _ThreadingServer(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, fmt, *args):
        LOG.info('%s %s', self.address_string(), fmt % args)


class APIService(service.Service):
    """The WSGI application on ``[api] bind_host:bind_port``."""

    name = 'api'

    def __init__(self, conf, application) -> None:
        self.conf = conf
        self.application = application
        self._server = None
        self._thread = None

    def start(self) -> None:
        host, port = self.conf.api.bind_host, self.conf.api.bind_port
        try:
            self._server = simple_server.make_server(
                host, port, self.application, server_class=_ThreadingServer,
                handler_class=_QuietHandler)
        except OSError as exc:
            raise exception.ConfigurationError(
                reason='[api] cannot listen on %s:%s: %s' % (host, port,
                                                             exc.strerror))
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name='api', daemon=True)
        self._thread.start()
        LOG.info('API listening on http://%s:%s/', host,
                 self._server.server_port)

    @property
    def port(self) -> int:
        return self._server.server_port

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(self.conf.graceful_shutdown_timeout)


def build(conf, store) -> APIService:
    """The API service: routes, policy and ``[api] auth_strategy``."""
    return APIService(conf, api_app.build_app(conf, store))
