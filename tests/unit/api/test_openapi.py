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
"""The OpenAPI document and the implementation agree: the same routes, the
same request-body schemas, and a valid OpenAPI 3.1 document.
"""
import json
import re

from openapi_spec_validator import validate

from elastman.api import app
from elastman.api import schemas
from tests.functional.api import openapi_check


def test_document_is_valid_openapi():
    validate(openapi_check.document())


def _normalise(path):
    return re.sub(r'\{[^}]+\}', '{}', path)


def test_routes_match_document():
    documented = {(_normalise(p), m) for p, m, _ in
                  openapi_check.operations().values()}
    routed = {(_normalise(p), m) for p, m, _c, _a in app.ROUTES}
    routed |= {('/', 'GET'), ('/v1', 'GET')}
    assert documented == routed


def test_request_schemas_match_code():
    comp = openapi_check.document()['components']['schemas']
    for name, schema in (('ClusterCreate', schemas.CLUSTER_CREATE),
                         ('ClusterUpdate', schemas.CLUSTER_UPDATE),
                         ('ClusterScale', schemas.CLUSTER_SCALE),
                         ('ClusterAccess', schemas.CLUSTER_ACCESS),
                         ('PolicySet', schemas.POLICY)):
        assert comp[name] == json.loads(json.dumps(schema)), name


def test_every_operation_documents_errors():
    for op_id, (path, method, op) in openapi_check.operations().items():
        if path.startswith('/v1/'):
            assert {'401', '403'} <= set(op['responses']), op_id
