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
"""Store rows as API documents."""
from __future__ import annotations

import datetime
import uuid

from elastman.capacity import serialization


#: spec keys the API never returns
HIDDEN_SPEC = frozenset({'trust_id'})


def ts(value: datetime.datetime | None) -> str | None:
    if value is None:
        return None
    return value.replace(tzinfo=None).isoformat(timespec='milliseconds') + 'Z'


def _str(value) -> str | None:
    return None if value is None else str(value)


def node(row: dict) -> dict:
    return {'id': row['node_id'], 'cluster_id': _str(row['cluster_id']),
            'address': row.get('address'), 'server_id': row.get('server_id'),
            'flavor': row.get('flavor'), 'state': row.get('state'),
            'state_reason': row.get('state_reason'),
            'state_changed_at': ts(row.get('state_changed_at')),
            'seed': bool(row.get('seed')), 'cql_port': row.get('cql_port'),
            'host': row.get('host'), 'details': row.get('details') or {},
            'created_at': ts(row.get('created_at')),
            'updated_at': ts(row.get('updated_at'))}


def endpoints(cluster: dict, nodes: list[dict]) -> list[str]:
    port = (cluster.get('spec') or {}).get('cql_port', 9042)
    return ['%s:%s' % (n['address'], n.get('cql_port') or port)
            for n in nodes if n.get('address')]


def security(spec: dict) -> dict:
    """Whether credentials are set and which connections use TLS; never
    the credentials.
    """
    found = spec.get('security') or {}
    return {key: bool(found.get(key))
            for key in ('authentication', 'cql_tls', 'jmx_tls')}


def cluster(row: dict, nodes: list[dict], detail: bool = False) -> dict:
    spec = row.get('spec') or {}
    doc = {'id': str(row['id']), 'name': row['name'],
           'project_id': row['project_id'], 'state': row['state'],
           'status_reason': row.get('status_reason'),
           'mode': spec.get('mode', 'registered'),
           'flavor': spec.get('flavor'), 'image': spec.get('image'),
           'size': len(nodes), 'endpoints': endpoints(row, nodes),
           'has_policy': bool(row.get('policy')),
           'security': security(spec),
           'created_at': ts(row.get('created_at')),
           'updated_at': ts(row.get('updated_at'))}
    if detail:
        # what elastman acts with is not the caller's to see
        doc['spec'] = {k: v for k, v in spec.items() if k not in HIDDEN_SPEC}
        doc['policy'] = row.get('policy') or None
        doc['nodes'] = [node(n) for n in nodes]
    return doc


def action(row: dict) -> dict:
    return {'id': str(row['id']), 'cluster_id': str(row['cluster_id']),
            'kind': row['kind'], 'state': row['state'], 'step': row['step'],
            'params': row.get('params') or {}, 'result': row.get('result'),
            'reason': row.get('reason'),
            'created_at': ts(row.get('created_at')),
            'updated_at': ts(row.get('updated_at'))}


def decision(cluster_id, row: dict) -> dict:
    return {'cluster_id': str(cluster_id), 'ts': ts(row['ts']),
            'action': row['action'], 'record': row.get('record') or {}}


def forecast(row: dict) -> dict:
    return {'cluster_id': str(row['cluster_id']), 'metric': row['metric'],
            'ts': ts(row['ts']), 'starts_at': ts(row.get('starts_at')),
            'horizon_s': row['horizon_s'],
            'step_s': row['step_s'], 'predicted': list(row['predicted'] or []),
            'forecaster': row['forecaster'],
            'weights': dict(row['weights'] or {}),
            'peak': list(row.get('peak') or []),
            'upper': list(row.get('upper') or []),
            'quantile': row.get('quantile')}


def model(scope: str, key: str, row: dict, document: bool = True) -> dict:
    doc = {'scope': scope, 'key': key, 'version': row['version'],
           'params': row.get('params') or {},
           'summary': row.get('summary') or {},
           'created_at': ts(row.get('created_at'))}
    if document:
        try:
            doc['document'] = serialization.loads(row['payload'])
        except (TypeError, ValueError, UnicodeDecodeError):
            doc['document'] = None
    return doc


def host(row: dict) -> dict:
    return {'host': row['host'],
            'last_report_at': ts(row.get('last_report_at')),
            'details': row.get('details') or {}}


def host_report(row: dict) -> dict:
    return {'host': row['host'], 'ts': ts(row['ts']),
            'vms': row.get('vms') or {}}


def is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
        return True
    except (ValueError, TypeError, AttributeError):
        return False
