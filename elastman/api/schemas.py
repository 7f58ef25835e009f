"""JSON schemas of request bodies, and the validator that applies them."""
from __future__ import annotations

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
        'prune_conflicts': {'type': 'boolean'},
        'cell_max_age': {'type': 'number', 'minimum': 0},
        'balanced': {'type': 'boolean'},
    },
}

POLICY = {
    'type': 'object',
    'additionalProperties': False,
    'properties': {
        'slo_metric': {'enum': list(cap_params.SLO_METRICS)},
        'slo_threshold_ms': {'type': 'number', 'exclusiveMinimum': 0,
                             'maximum': 600000},
        'min_size': {'type': 'integer', 'minimum': 1, 'maximum': 1000},
        'max_size': {'type': 'integer', 'minimum': 1, 'maximum': 1000},
        'alpha': {'type': 'number', 'minimum': 0, 'maximum': 1000},
        'beta': {'type': 'number', 'minimum': 0, 'maximum': 1000},
        'control_period_s': {'type': 'integer', 'minimum': 10,
                             'maximum': 86400},
        'cooldown_s': {'type': 'integer', 'minimum': 0, 'maximum': 86400},
        'headroom': {'type': 'number', 'minimum': 0, 'exclusiveMaximum': 1},
        'scale_out_count': {'enum': ['sum', 'violators']},
        'beyond_lower': {'enum': ['uncertain', 'over']},
        'explore': {'type': 'number', 'minimum': 0, 'maximum': 10},
        'extrapolation': {'enum': ['trust', 'lower']},
        'max_scale_in_fraction': {'type': 'number', 'exclusiveMinimum': 0,
                                  'maximum': 1},
        'flavors': {'type': 'array', 'uniqueItems': True, 'items': REF,
                    'maxItems': 32},
        'dry_run': {'type': 'boolean'},
        'model': MODEL_PARAMS,
    },
}

POLICY_DEFAULTS = {'slo_metric': 'read_p99_ms', 'slo_threshold_ms': 35.0,
                   'min_size': 1, 'max_size': 10, 'alpha': 1.0, 'beta': 0.5,
                   'control_period_s': 300, 'cooldown_s': 600,
                   'flavors': [], 'dry_run': False, 'model': {},
                   'beyond_lower': 'uncertain', 'explore': 0.0,
                   # beyond seed 000's rule: see elastman.actuator.policy
                   **policy_mod.RECOMMENDED_OPTIONS}

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
        'size': {'type': 'integer', 'minimum': 1, 'maximum': 1000},
        'policy': POLICY,
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
        'count': {'type': 'integer', 'minimum': 1, 'maximum': 1000},
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
    body with integers as ints."""
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
