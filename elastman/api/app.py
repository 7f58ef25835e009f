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
"""The elastman REST API application (WSGI): version documents at ``/`` and
``/v1``, the /v1 resources routed with Routes, JSON errors throughout.
"""
from __future__ import annotations

import threading

from oslo_log import log as logging
import routes
import webob
import webob.dec

from elastman.api import auth
from elastman.api.controllers import access
from elastman.api.controllers import clusters
from elastman.api.controllers import hosts
from elastman.api.controllers import policy as policy_ctl
from elastman.api.controllers import resources
from elastman.api import errors
from elastman.api import policy
from elastman.common import context as em_context
from elastman import version

LOG = logging.getLogger(__name__)

API_VERSIONS = ({'id': 'v1.0', 'status': 'CURRENT',
                 'min_version': '1.0', 'max_version': '1.0'},)

_C = '/v1/clusters/{cluster_id}'
# (path, method, controller, action)
ROUTES = (
    ('/v1/clusters', 'GET', 'clusters', 'index'),
    ('/v1/clusters', 'POST', 'clusters', 'create'),
    (_C, 'GET', 'clusters', 'show'),
    (_C, 'PATCH', 'clusters', 'update'),
    (_C, 'DELETE', 'clusters', 'delete'),
    (_C + '/scale', 'POST', 'clusters', 'scale'),
    (_C + '/credentials', 'PUT', 'access', 'update'),
    (_C + '/credentials', 'DELETE', 'access', 'delete'),
    (_C + '/policy', 'GET', 'policy', 'show'),
    (_C + '/policy', 'PUT', 'policy', 'update'),
    (_C + '/policy', 'DELETE', 'policy', 'delete'),
    (_C + '/nodes', 'GET', 'nodes', 'index'),
    (_C + '/nodes/{node_id}', 'GET', 'nodes', 'show'),
    (_C + '/models', 'GET', 'models', 'index'),
    (_C + '/models/{scope}/{key}', 'GET', 'models', 'show'),
    (_C + '/forecasts/{metric}', 'GET', 'forecasts', 'show'),
    (_C + '/decisions', 'GET', 'decisions', 'index'),
    (_C + '/actions', 'GET', 'actions', 'index'),
    (_C + '/actions/{action_id}', 'GET', 'actions', 'show'),
    ('/v1/hosts', 'GET', 'hosts', 'index'),
    ('/v1/hosts/{host}', 'GET', 'hosts', 'show'),
    ('/v1/hosts/{host}/reports', 'GET', 'hosts', 'reports'),
)

_CONTROLLERS = {
    'clusters': clusters.ClusterController,
    'access': access.AccessController,
    'policy': policy_ctl.PolicyController,
    'nodes': resources.NodeController,
    'models': resources.ModelController,
    'forecasts': resources.ForecastController,
    'decisions': resources.DecisionController,
    'actions': resources.ActionController,
    'hosts': hosts.HostController,
}


class LazyActuator:
    """The actuator RPC client, connected on first use."""

    def __init__(self, conf) -> None:
        self.conf = conf
        self._api = None
        self._lock = threading.Lock()

    def scale(self, ctxt, cluster_id, count, flavor=None, action_id=None):
        with self._lock:
            if self._api is None:
                from elastman.common import rpc
                from elastman.common.rpcapi import actuator as rpcapi
                self._api = rpcapi.ActuatorAPI(self.conf,
                                               rpc.get_transport(self.conf))
        self._api.scale(ctxt, cluster_id, count, flavor, action_id=action_id,
                        retry=1)


def _mapper() -> routes.Mapper:
    mapper = routes.Mapper()
    for path, method, controller, action in ROUTES:
        mapper.connect(path, controller=controller, action=action,
                       conditions={'method': [method]})
    return mapper


class Application:
    """Dispatches /v1 requests to controllers; unknown paths get a JSON 404,
    known paths with another method a 405.
    """

    def __init__(self, conf, store=None, actuator=None) -> None:
        self.conf = conf
        self.store = store
        self.mapper = _mapper()
        self._methods: dict[str, set[str]] = {}
        self.controllers = {}
        if conf is not None:
            enforcer = policy.Enforcer(conf)
            self.controllers = {
                name: cls(conf, store, enforcer, actuator)
                for name, cls in _CONTROLLERS.items()}

    def _versions(self, req: webob.Request) -> dict:
        base = req.host_url.rstrip('/')
        return {'versions': [dict(v, links=[{'rel': 'self',
                                             'href': base + '/v1/'}])
                             for v in API_VERSIONS]}

    def _allowed_methods(self, path: str) -> list[str]:
        allowed = []
        for method in ('GET', 'POST', 'PUT', 'PATCH', 'DELETE'):
            if self.mapper.match(environ={'PATH_INFO': path,
                                          'REQUEST_METHOD': method}):
                allowed.append(method)
        return allowed

    @webob.dec.wsgify
    def __call__(self, req: webob.Request) -> webob.Response:
        try:
            return self._dispatch(req)
        except errors.APIError as exc:
            return errors.error_response(exc.code, exc.message)
        except Exception:
            LOG.exception('%s %s failed', req.method, req.path)
            return errors.error_response(500, 'internal error; see the '
                                              'elastman-api log')

    def _dispatch(self, req: webob.Request) -> webob.Response:
        path = req.path.rstrip('/') if req.path != '/' else ''
        if path in ('', '/v1'):
            if req.method not in ('GET', 'HEAD'):
                raise errors.APIError(405, 'method %s not allowed on %s'
                                      % (req.method, req.path))
            if path == '':
                return errors.json_response(300, self._versions(req))
            doc = self._versions(req)['versions'][0]
            doc['server_version'] = version.version_info.version_string()
            return errors.json_response(200, {'version': doc})
        environ = dict(req.environ, PATH_INFO=path)
        match = self.mapper.match(environ=environ) if self.controllers \
            else None
        if match is None:
            allowed = self._allowed_methods(path) if self.controllers else []
            if allowed:
                resp = errors.error_response(
                    405, 'method %s not allowed on %s' % (req.method,
                                                          req.path))
                resp.headers['Allow'] = ', '.join(allowed)
                return resp
            raise errors.not_found('no resource at %s' % req.path)
        match = dict(match)
        controller = self.controllers[match.pop('controller')]
        action = getattr(controller, match.pop('action'))
        # Without the auth pipeline in front there is nobody: no roles.
        ctx = req.environ.get(auth.CONTEXT_KEY) or \
            em_context.RequestContext(overwrite=False)
        status, body = action(req, ctx, **match)
        return errors.json_response(status, body)


def build_app(conf, store, actuator=None):
    """The full WSGI pipeline: version documents unauthenticated,
    everything else behind ``[api] auth_strategy``.
    """
    if actuator is None:
        actuator = LazyActuator(conf)
    application = Application(conf, store, actuator)
    protected = auth.protect(conf, application)

    def pipeline(environ, start_response):
        if environ.get('PATH_INFO', '').rstrip('/') in ('', '/v1'):
            return application(environ, start_response)
        return protected(environ, start_response)
    return pipeline
