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
"""JSON schemas of request bodies, and the validator that applies them."""
from __future__ import annotations

import json

import jsonschema

from elastman.actuator import policy as policy_mod
from elastman.api import errors
from elastman.capacity import params as cap_params

NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255,
        'pattern': r'^[A-Za-z0-9][A-Za-z0-9_.\- ]*$'}
HOST = {'type': 'string', 'minLength': 1, 'maxLength': 255,
        'pattern': r'^[A-Za-z0-9_.\-:\[\]]+$'}
PORT = {'type': 'integer', 'minimum': 1, 'maximum': 65535}
REF = {'type': 'string', 'minLength': 1, 'maxLength': 255}
POSITIVE = {'type': 'number', 'exclusiveMinimum': 0}

MODEL_PARAMS = {
    'type': 'object',
    'additionalProperties': False,
    'properties': {
        'features': {'type': 'array', 'minItems': 1, 'uniqueItems': True,
                     'items': {'type': 'string', 'minLength': 1,
                               'maxLength': 64}},
        'granularity': {'type': 'object',
                        'additionalProperties': POSITIVE},
        'buffer_size': {'type': 'integer', 'minimum': 1, 'maximum': 10000},
        'confidence': {'type': 'number', 'exclusiveMinimum': 0,
                       'maximum': 1},
        'update_period': POSITIVE,
        'kernel': {'enum': list(cap_params.KERNELS)},
        'svm_c': POSITIVE,
        'gamma': {'oneOf': [{'enum': ['scale', 'auto']}, POSITIVE]},
        'solver': {'enum': list(cap_params.SOLVERS)},
        'min_cells': {'type': 'integer', 'minimum': 2},
        'recency_half_life': {'type': 'number', 'minimum': 0},
        'recency_floor': {'type': 'number', 'minimum': 0, 'maximum': 1},
        'prune_conflicts': {'type': 'boolean'},
        'cell_max_age': {'type': 'number', 'minimum': 0},
        'balanced': {'type': 'boolean'},
        'keep_violated': {'type': 'boolean'},
        'keep_departed': {'type': 'boolean'},
        'interference_scale': {'type': 'boolean'},
        'monotone': {'enum': list(cap_params.MONOTONE)},
    },
}

#: A policy document: every ScalingPolicy field (elastman.actuator.policy
#: is their one source), plus the flavours the cluster may grow with and the
#: capacity model's parameters.
POLICY = policy_mod.json_schema()
POLICY['properties'].update({
    'flavors': {'type': 'array', 'uniqueItems': True, 'items': REF,
                'maxItems': 32,
                'description': 'flavours the cluster may grow with, at cost 1 each '
                               '(flavor_costs prices them)'},
    'model': dict(MODEL_PARAMS, description='capacity model parameters'),
})

# a Cassandra role name or password: any characters, but never empty
SECRET_TEXT = {'type': 'string', 'minLength': 1, 'maxLength': 256}
CREDENTIALS = {
    'type': 'object',
    'additionalProperties': False,
    'required': ['username', 'password'],
    'properties': {
        'username': SECRET_TEXT,
        'password': SECRET_TEXT,
        'jmx_username': SECRET_TEXT,
        'jmx_password': SECRET_TEXT,
    },
    'dependentRequired': {'jmx_username': ['jmx_password']},
}
TLS = {
    'type': 'object',
    'additionalProperties': False,
    'minProperties': 1,
    'properties': {
        'cql': {'type': 'boolean'},
        'jmx': {'type': 'boolean'},
        'ca_certificate': {'type': 'string', 'minLength': 1,
                           'maxLength': 65536},
        'verify_hostname': {'type': 'boolean'},
    },
}
CLUSTER_ACCESS = {
    'type': 'object',
    'additionalProperties': False,
    'minProperties': 1,
    'properties': {'credentials': CREDENTIALS, 'tls': TLS},
}

#: What an absent policy field takes: ScalingPolicy's defaults.
POLICY_DEFAULTS = dict(policy_mod.defaults(), flavors=[], model={})

CLUSTER_CREATE = {
    'type': 'object',
    'additionalProperties': False,
    'required': ['name'],
    'properties': {
        'name': NAME,
        'seeds': {'type': 'array', 'minItems': 1, 'maxItems': 64,
                  'uniqueItems': True, 'items': HOST},
        'cql_port': PORT,
        'jmx_port': PORT,
        'flavor': REF,
        'image': REF,
        'size': {'type': 'integer', 'minimum': 1,
                 'maximum': policy_mod.MAX_NODES},
        'policy': POLICY,
        'credentials': CREDENTIALS,
        'tls': TLS,
        # where new servers boot (defaults: the [nova] options)
        'networks': {'type': 'array', 'minItems': 1, 'maxItems': 8,
                     'uniqueItems': True, 'items': REF},
        'security_groups': {'type': 'array', 'maxItems': 16,
                            'uniqueItems': True, 'items': REF},
        'availability_zone': REF,
        'server_group': REF,
        'server_group_policy': {'enum': ['anti-affinity',
                                         'soft-anti-affinity', 'affinity',
                                         'soft-affinity']},
        'key_name': REF,
    },
    'oneOf': [
        {'required': ['seeds'],
         'not': {'anyOf': [{'required': ['image']},
                           {'required': ['size']}]}},
        {'required': ['flavor', 'image', 'size'],
         'not': {'required': ['seeds']}},
    ],
    'not': {'required': ['server_group', 'server_group_policy']},
}

#: request fields a cluster's spec keeps for the servers it gets
SERVER_FIELDS = ('image', 'networks', 'security_groups', 'availability_zone',
                 'server_group', 'server_group_policy', 'key_name')

CLUSTER_UPDATE = {
    'type': 'object',
    'additionalProperties': False,
    'minProperties': 1,
    'properties': {'name': NAME},
}

CLUSTER_SCALE = {
    'type': 'object',
    'additionalProperties': False,
    'required': ['count'],
    'properties': {
        'count': {'type': 'integer', 'minimum': 1,
                  'maximum': policy_mod.MAX_NODES},
        'flavor': REF,
    },
}


def _coerce(schema: dict, value):
    """Integral floats (JSON ``3.0``) where the schema says integer."""
    if schema.get('type') == 'integer' and isinstance(value, float):
        return int(value)
    if isinstance(value, dict):
        props = schema.get('properties', {})
        return {k: _coerce(props.get(k, {}), v) for k, v in value.items()}
    return value


def validate(schema: dict, body):
    """Raise a 400 APIError naming the first violation; else return the
    body with integers as ints.
    """
    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(body))
    if error is not None:
        where = '/'.join(str(p) for p in error.absolute_path) or 'body'
        raise errors.bad_request('invalid request body at %s: %s'
                                 % (where, error.message))
    return _coerce(schema, body)


def normalize_policy(body: dict) -> dict:
    """Validate a scaling policy and fill in the defaults."""
    body = validate(POLICY, body)
    policy = dict(POLICY_DEFAULTS)
    policy.update(body)
    if policy['min_size'] > policy['max_size']:
        raise errors.bad_request('min_size %d is larger than max_size %d'
                                 % (policy['min_size'], policy['max_size']))
    try:
        cap_params.ModelParams.from_dict(dict(
            policy['model'], slo_metric=policy['slo_metric'],
            slo_threshold_ms=policy['slo_threshold_ms']))
    except (cap_params.InvalidParams, TypeError, ValueError) as exc:
        raise errors.bad_request('invalid model parameters: %s' % exc)
    return policy


#: The OpenAPI components that are the request-body schemas above.
OPENAPI_COMPONENTS = {'ClusterCreate': CLUSTER_CREATE,
                      'ClusterUpdate': CLUSTER_UPDATE,
                      'ClusterScale': CLUSTER_SCALE,
                      'PolicySet': POLICY, 'Policy': POLICY}


def write_openapi_components(path: str) -> list[str]:
    """Rewrite the request-body components of the OpenAPI document at
    ``path`` from the schemas above (the rest of the file is kept as it is);
    returns the names of the components that changed.
    """
    import yaml

    with open(path) as f:
        lines = f.read().split('\n')
    changed = []
    for name, schema in OPENAPI_COMPONENTS.items():
        head = '    %s:' % name
        start = lines.index(head)
        end = start + 1
        while end < len(lines) and (lines[end].startswith('      ')
                                    or not lines[end].strip()):
            end += 1
        body = yaml.safe_dump(json.loads(json.dumps(schema)), sort_keys=False,
                              default_flow_style=False, width=1000)
        block = [head] + ['      ' + ln for ln in body.rstrip('\n').split('\n')]
        if lines[start:end] != block:
            lines[start:end] = block
            changed.append(name)
    with open(path, 'w') as f:
        f.write('\n'.join(lines))
    return changed


if __name__ == '__main__':
    import os
    import sys

    target = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), 'openapi.yaml')
    print('updated: %s' % (', '.join(write_openapi_components(target)) or 'nothing'))
