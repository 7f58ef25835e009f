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
"""Versioned, JSON-compatible envelopes for models and trainer state.

Every document carries ``format`` and ``version``; a reader accepts its own
version and older ones it knows how to upgrade, and refuses anything else
rather than guess. ``dumps``/``loads`` give the bytes form (UTF-8 JSON).
"""
from __future__ import annotations

import json
from typing import Any, Mapping

MODEL_FORMAT = 'elastman.capacity.model'
STATE_FORMAT = 'elastman.capacity.state'
VERSION = 1


class FormatError(ValueError):
    """A document of an unknown format or version."""


def wrap(fmt: str, body: Mapping[str, Any]) -> dict[str, Any]:
    return {'format': fmt, 'version': VERSION, **body}


def unwrap(fmt: str, doc: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(doc, Mapping) or doc.get('format') != fmt:
        raise FormatError('not a %s document' % fmt)
    version = doc.get('version')
    if not isinstance(version, int) or version < 1 or version > VERSION:
        raise FormatError('%s version %r is not supported (this reader knows '
                          'up to %d)' % (fmt, version, VERSION))
    body = dict(doc)
    del body['format'], body['version']
    return body


def model_to_dict(model: Any, **meta: Any) -> dict[str, Any]:
    """A FittedModel as a versioned document, with optional metadata."""
    return wrap(MODEL_FORMAT, {'model': model.to_dict(), 'meta': meta})


def model_from_dict(doc: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    from elastman.capacity.model import FittedModel
    body = unwrap(MODEL_FORMAT, doc)
    return FittedModel.from_dict(body['model']), dict(body.get('meta') or {})


def dumps(doc: Mapping[str, Any]) -> bytes:
    return json.dumps(doc, separators=(',', ':'), allow_nan=False).encode('utf-8')


def loads(data: bytes | str) -> dict[str, Any]:
    return json.loads(data)
