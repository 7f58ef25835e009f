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
"""JSON error documents: ``{"error": {"code", "title", "message"}}``."""
from __future__ import annotations

import json
import math

import webob
import webob.exc


class APIError(Exception):
    """An error the API answers with ``code`` and ``message``."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def bad_request(message: str) -> APIError:
    return APIError(400, message)


def not_found(message: str) -> APIError:
    return APIError(404, message)


def json_response(status: int, body: dict | None,
                  headers: dict | None = None) -> webob.Response:
    resp = webob.Response(status=status, headerlist=list((headers or {})
                                                         .items()))
    if body is not None:
        resp.content_type = 'application/json'
        resp.charset = 'utf-8'
        resp.body = _dumps(body).encode()
    return resp


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _dumps(body: dict) -> str:
    """JSON without NaN/Infinity (they become null)."""
    try:
        return json.dumps(body, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(body), allow_nan=False)


def error_response(status: int, message: str) -> webob.Response:
    title = webob.exc.status_map[status].title
    return json_response(status, {'error': {'code': status, 'title': title,
                                            'message': message}})
