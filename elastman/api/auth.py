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
"""Who is calling: keystonemiddleware's auth_token, or noauth for the
embedded default. Either way the application finds a RequestContext in
``environ['elastman.context']``.
"""
from __future__ import annotations

from oslo_log import log as logging
import webob.dec

from elastman.common import context as em_context

LOG = logging.getLogger(__name__)

CONTEXT_KEY = 'elastman.context'
NOAUTH_PROJECT = 'admin'


class ContextMiddleware:
    """Builds the context from the identity headers auth_token set."""

    def __init__(self, application) -> None:
        self.application = application

    def __call__(self, environ, start_response):
        environ[CONTEXT_KEY] = em_context.RequestContext.from_environ(environ)
        return self.application(environ, start_response)


class NoAuthMiddleware:
    """Every caller is an admin; ``X-Project-Id`` picks the project."""

    def __init__(self, application) -> None:
        self.application = application

    @webob.dec.wsgify
    def __call__(self, req):
        project = req.headers.get('X-Project-Id') or NOAUTH_PROJECT
        req.environ[CONTEXT_KEY] = em_context.RequestContext(
            user_id=req.headers.get('X-User-Id') or 'admin',
            project_id=project, roles=['admin', 'member', 'reader'],
            is_admin=True, overwrite=False)
        return req.get_response(self.application)


def protect(conf, application):
    """Wrap ``application`` per ``[api] auth_strategy``."""
    if conf.api.auth_strategy == 'noauth':
        LOG.warning('[api] auth_strategy = noauth: every request is admin')
        return NoAuthMiddleware(application)
    from keystonemiddleware import auth_token
    return auth_token.AuthProtocol(ContextMiddleware(application),
                                   {'oslo_config_config': conf})
