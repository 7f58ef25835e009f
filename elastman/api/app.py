"""The elastman REST API application (WSGI).

Only the version documents live here for now; the resources arrive with the
API issue.
"""
from __future__ import annotations

import json

import webob
import webob.dec
import webob.exc

from elastman import version

API_VERSIONS = ({'id': 'v1.0', 'status': 'CURRENT',
                 'min_version': '1.0', 'max_version': '1.0'},)


def _json(status: int, body: dict) -> webob.Response:
    return webob.Response(status=status, content_type='application/json',
                          charset='utf-8', body=json.dumps(body).encode())


def _error(status: int, message: str) -> webob.Response:
    title = webob.exc.status_map[status].title
    return _json(status, {'error': {'code': status, 'title': title,
                                    'message': message}})


class Application:
    """Routes requests; unknown paths get a JSON 404."""

    def __init__(self, conf, store=None) -> None:
        self.conf = conf
        self.store = store

    def _versions(self, req: webob.Request) -> dict:
        base = req.host_url.rstrip('/')
        return {'versions': [dict(v, links=[{'rel': 'self',
                                             'href': base + '/v1/'}])
                             for v in API_VERSIONS]}

    @webob.dec.wsgify
    def __call__(self, req: webob.Request) -> webob.Response:
        if req.method not in ('GET', 'HEAD'):
            return _error(405, 'method %s not allowed on %s'
                          % (req.method, req.path))
        path = req.path.rstrip('/')
        if path == '':
            return _json(300, self._versions(req))
        if path == '/v1':
            doc = self._versions(req)['versions'][0]
            doc['server_version'] = version.version_info.version_string()
            return _json(200, {'version': doc})
        return _error(404, 'no resource at %s' % req.path)
