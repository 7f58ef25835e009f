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
"""A command runner for the OSC commands, with the elastman client faked
(tests/functional/api/test_osc_noauth.py runs them against a real API).
"""
from __future__ import annotations

import io
import json
from unittest import mock

from elastman.actuator import decision as decision_mod

CLUSTER_ID = '0b7e3c1e-5d7f-4a52-9d3c-2f1e4b8a9c01'

LONG_REASON = (
    'scale out by 1 of m1.small: 2 VMs over capacity (node-a: w 1,840 > '
    't 1,520; node-b: w 1,710 > t 1,520) (alpha=1); sum of (w-t)/t over '
    'the violators 0.33; clamped from 2 by max_size=4')


def decision_doc(ts: str = '2026-11-24T10:15:00.000Z', kind: str = 'scale_out',
                 reason: str = LONG_REASON, dry_run: bool = False) -> dict:
    """A decision as the API returns it, its record made by the actuator's
    own Decision type.
    """
    d = decision_mod.Decision(
        kind=kind, reason=reason, at=0.0, flavor='m1.small',
        count=1 if kind == 'scale_out' else 0,
        remove_nodes=['node-c'] if kind == 'scale_in' else [],
        size=3, floor=3, max_size=4, alpha=1.0, beta=0.5, dry_run=dry_run,
        notes=['forecast of writes_per_s is 900 s old'],
        flavors={'m1.small': decision_mod.FlavorNumbers(
            'm1.small', vms=3, violators=2, excess_sum=0.33,
            out_bounded=1)},
        vms=[decision_mod.VMTerm('node-a', 'm1.small', 1840.0, 1900.0,
                                 'exact', 'over', 0.21, 1520.0),
             decision_mod.VMTerm('node-b', 'm1.small', 1710.0, 1900.0,
                                 'exact', 'over', 0.12, 1520.0),
             decision_mod.VMTerm('node-c', 'm1.small', 900.0, 1300.0,
                                 'lower', 'ok', -0.13, 1040.0)],
        inputs={'predicted_cluster': {'reads_per_s': 3300.0,
                                      'writes_per_s': 1150.0},
                'observed_cluster': {'reads_per_s': 3100.0,
                                     'writes_per_s': 1100.0},
                'forecast': {'reads_per_s': {
                    'value': 3300.0, 'forecaster': 'arima_110',
                    'weights': {'arima_110': 1.0}}},
                'forecast_used': True,
                'model_versions': {'m1.small': 7},
                'policy': {'alpha': 1.0, 'beta': 0.5, 'headroom': 0.2}})
    return {'cluster_id': CLUSTER_ID, 'ts': ts, 'action': kind,
            'record': d.to_dict()}


def cluster_doc(policy: dict | None = None) -> dict:
    return {
        'id': CLUSTER_ID, 'name': 'orders', 'project_id': 'p1',
        'state': 'ACTIVE', 'status_reason': None, 'mode': 'managed',
        'flavor': 'm1.small', 'image': 'cassandra', 'size': 3,
        'endpoints': ['127.0.76.1:9042', '127.0.76.2:9042',
                      '127.0.76.3:9042'],
        'has_policy': policy is not None, 'spec': {}, 'policy': policy,
        'nodes': [{'id': 'node-%s' % n, 'address': '127.0.76.%d' % i,
                   'state': 'ACTIVE', 'seed': i == 1}
                  for i, n in enumerate('abc', 1)],
        'created_at': '2026-11-24T09:00:00.000Z',
        'updated_at': '2026-11-24T10:00:00.000Z'}


def run(command_cls, client, *argv, width: int = 0) -> str:
    """Run one command as ``openstack`` would; its standard output."""
    app = mock.Mock()
    app.client_manager.elastman = client
    app.stdout = io.StringIO()
    cmd = command_cls(app, None)
    parser = cmd.get_parser('openstack elastman')
    args = parser.parse_args(list(argv))
    if hasattr(args, 'max_width'):
        args.max_width, args.fit_width = width, False
    cmd.run(args)
    return app.stdout.getvalue()


def column_text(out: str, column: int) -> str:
    """The text of one column of a table, its cells' lines joined."""
    cells = [line.split('|')[column] for line in out.splitlines()
             if line.startswith('|')][1:]
    return ' '.join(' '.join(cells).split())


def run_json(command_cls, client, *argv):
    return json.loads(run(command_cls, client, *argv, '-f', 'json'))
