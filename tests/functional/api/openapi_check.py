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
"""Check responses against elastman/api/openapi.yaml (JSON Schema 2020-12)."""
from __future__ import annotations

import functools
import os

import jsonschema
import referencing
import referencing.jsonschema
import yaml

import elastman.api

DOC_PATH = os.path.join(os.path.dirname(elastman.api.__file__),
                        'openapi.yaml')
_URI = 'urn:elastman-openapi'


@functools.lru_cache(maxsize=1)
def document() -> dict:
    with open(DOC_PATH) as f:
        return yaml.safe_load(f)


def operations() -> dict[str, tuple[str, str, dict]]:
    """operationId -> (path, METHOD, operation)."""
    ops = {}
    for path, item in document()['paths'].items():
        for method, op in item.items():
            if method != 'parameters':
                ops[op['operationId']] = (path, method.upper(), op)
    return ops


@functools.lru_cache(maxsize=1)
def _registry() -> referencing.Registry:
    resource = referencing.Resource(
        contents=document(),
        specification=referencing.jsonschema.DRAFT202012)
    return referencing.Registry().with_resource(_URI, resource)


def _pointer(*parts: str) -> str:
    return '/'.join(p.replace('~', '~0').replace('/', '~1') for p in parts)


def validate_response(operation_id: str, resp) -> None:
    """Assert that ``resp`` (requests.Response) is documented and valid."""
    path, method, op = operations()[operation_id]
    status = str(resp.status_code)
    assert status in op['responses'], '%s gave undocumented %s' % (
        operation_id, status)
    response = op['responses'][status]
    if '$ref' in response:
        name = response['$ref'].rsplit('/', 1)[-1]
        response = document()['components']['responses'][name]
        pointer = _pointer('components', 'responses', name)
    else:
        pointer = _pointer('paths', path, method.lower(), 'responses', status)
    if 'content' not in response:
        assert not resp.content, resp.content
        return
    assert resp.headers['Content-Type'].startswith('application/json')
    schema = {'$ref': '%s#/%s/content/application~1json/schema'
                      % (_URI, pointer)}
    jsonschema.Draft202012Validator(
        schema, registry=_registry(),
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    ).validate(resp.json())
