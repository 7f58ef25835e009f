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
"""The OSC plugin against the API in noauth mode (the embedded default):
cluster and policy commands, and the decision, action and cluster views
read by people, on records written as the actuator writes them.
"""
import datetime
import subprocess
import uuid

from elastman.actuator import decision as decision_mod
from tests.functional.api.test_keystone import _osc

REASON = ('scale out by 1 of m1.small: 2 VMs over capacity (alpha=1); sum '
          'of (w-t)/t over the violators 0.33; clamped from 2 by max_size=6; '
          'the forecast of reads_per_s peaks at 3,300 within the horizon')


def _record(store, cluster_id):
    """A decision and the action it journalled, as the actuator does."""
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    d = decision_mod.Decision(
        kind=decision_mod.SCALE_OUT, reason=REASON, at=now.timestamp(),
        flavor='m1.small', count=1, size=1, floor=1, max_size=6,
        vms=[decision_mod.VMTerm('n-1', 'm1.small', 1840.0, 1900.0, 'exact',
                                 'over', 0.21, 1520.0)])
    store.actions.record_decision(uuid.UUID(cluster_id), now, d.kind,
                                  d.to_dict())
    store.actions.create(uuid.UUID(cluster_id), d.kind,
                         {'flavor': 'm1.small', 'count': 1,
                          'decided_at': d.at}, step='requested')


def _fields(table: str) -> dict:
    """{field: its value's lines joined} of a ``show`` table."""
    fields, name = {}, None
    for line in table.splitlines()[3:]:
        if line.startswith('|'):
            key, value = line.split('|')[1:3]
            name = key.strip() or name
            fields[name] = ' '.join([fields.get(name, ''), value.strip()])
    return {k: v.strip() for k, v in fields.items()}


def test_osc_noauth(noauth_api, store):
    base = ('--os-auth-type', 'none', '--os-endpoint', noauth_api)
    assert _osc(*base, 'elastman', 'cluster', 'list', '-f', 'json') == []
    created = _osc(*base, 'elastman', 'cluster', 'create', 'n1', '--seed',
                   '127.0.0.9', '-f', 'json')
    assert created['size'] == 1
    policy = _osc(*base, 'elastman', 'policy', 'set', 'n1', '--max-size',
                  '6', '--dry-run', '-f', 'json')
    assert policy['max_size'] == 6 and policy['dry_run'] is True
    # any field, checked by the API: a bad value is refused and loses nothing
    policy = _osc(*base, 'elastman', 'policy', 'set', 'n1', '--set',
                  'headroom=0.35', '--set', 'guard=false', '-f', 'json')
    assert policy['headroom'] == 0.35 and policy['guard'] is False
    assert policy['max_size'] == 6
    bad = subprocess.run(['openstack', *base, 'elastman', 'policy', 'set',
                          'n1', '--set', 'headroom=2'], capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode != 0 and 'headroom' in bad.stderr, bad.stderr
    shown = _osc(*base, 'elastman', 'policy', 'show', 'n1', '-f', 'json')
    assert shown['headroom'] == 0.35

    _record(store, created['id'])
    table = _osc(*base, 'elastman', 'decision', 'list', 'n1', raw=True)
    assert max(len(line) for line in table.splitlines()) <= 120, table
    cells = ' '.join(line.split('|')[4] for line in table.splitlines()
                     if line.startswith('|'))
    assert ' '.join(REASON.split()) in ' '.join(cells.split())
    whole = _osc(*base, 'elastman', 'decision', 'show', 'n1', '-f', 'json')
    assert whole['record']['reason'] == REASON
    assert whole['record']['vms'][0]['capacity'] == 1900.0
    shown = _osc(*base, 'elastman', 'decision', 'show', 'n1', raw=True)
    assert 'n-1 (m1.small): load 1,840 of capacity 1,900 [exact]' in shown

    view = _osc(*base, 'elastman', 'cluster', 'show', 'n1', raw=True)
    fields = _fields(view)
    assert fields['doing'].startswith('scale_out: add 1 node(s) of m1.small')
    assert 'decided because: scale out by 1 of m1.small' in fields['doing']
    assert fields['health'].startswith('nodes: 1 ')
    assert 'control loop: last decision' in fields['health']
    assert max(len(line) for line in view.splitlines()) <= 120, view
    doc = _osc(*base, 'elastman', 'cluster', 'show', 'n1', '-f', 'json')
    assert doc['actions_in_flight'][0]['params']['count'] == 1
    assert doc['last_decision']['record']['reason'] == REASON


def test_osc_credentials(noauth_api, conf, store, tmp_path):
    from elastman.store import credentials
    from tests.functional import tls
    base = ('--os-auth-type', 'none', '--os-endpoint', noauth_api)
    ca = tmp_path / 'ca.pem'
    ca.write_text(tls.make(str(tmp_path), '127.0.0.0/30').ca_pem)
    conf.set_override('encryption_keys', [credentials.generate_key()],
                      'credentials')
    try:
        created = _osc(*base, 'elastman', 'cluster', 'create', 's1', '--seed',
                       '127.0.0.9', '--username', 'app', '--password', 'pw1',
                       '--cql-tls', '--ca-cert', str(ca), '-f', 'json')
        assert created['security'] == {'authentication': True,
                                       'cql_tls': True, 'jmx_tls': False}
        _osc(*base, 'elastman', 'cluster', 'credentials', 'set', 's1',
             '--username', 'app', '--password', 'pw2', '--jmx-tls')
        doc = store.credentials.get(uuid.UUID(created['id']))
        assert doc == {'credentials': {'username': 'app', 'password': 'pw2'},
                       'tls': {'cql': False, 'jmx': True,
                               'verify_hostname': True}}
        shown = _osc(*base, 'elastman', 'cluster', 'show', 's1', raw=True)
        assert 'pw1' not in shown and 'pw2' not in shown
        _osc(*base, 'elastman', 'cluster', 'credentials', 'unset', 's1')
        assert store.credentials.get(uuid.UUID(created['id'])) is None
    finally:
        conf.clear_override('encryption_keys', 'credentials')
