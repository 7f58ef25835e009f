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
"""An in-memory stand-in for the store repositories the actuator uses
(clusters, nodes, actions, decisions, leases), with the same semantics where
the actuator relies on them: the journal's conditional advance, leases held by
one holder until they expire, node state changes only from expected states.
The real repositories are exercised by the functional tests."""
import copy
import datetime
import itertools
import uuid

from elastman.common import exception
from elastman.store import actions as actions_store

_clock = itertools.count()


def _now():
    return datetime.datetime(2026, 1, 1) + datetime.timedelta(
        microseconds=next(_clock))


class Clusters:
    def __init__(self):
        self.rows = {}

    def create(self, project_id, name, spec, policy=None, state='ACTIVE',
               cluster_id=None):
        cluster_id = cluster_id or uuid.uuid4()
        if cluster_id in self.rows:
            raise exception.Conflict(reason='cluster %s exists' % cluster_id)
        self.rows[cluster_id] = {
            'id': cluster_id, 'project_id': project_id, 'name': name,
            'state': state, 'status_reason': None,
            'spec': copy.deepcopy(spec), 'policy': copy.deepcopy(policy or {}),
            'created_at': _now()}
        return self.get(cluster_id)

    def get(self, cluster_id):
        if cluster_id not in self.rows:
            raise exception.NotFound(kind='cluster', id=cluster_id)
        return copy.deepcopy(self.rows[cluster_id])

    def all(self):
        return [copy.deepcopy(r) for r in self.rows.values()]

    def update(self, cluster_id, **fields):
        self.get(cluster_id)
        self.rows[cluster_id].update(fields)
        return self.get(cluster_id)

    def delete(self, cluster_id):
        self.rows.pop(cluster_id, None)


class Nodes:
    def __init__(self):
        self.rows = {}

    def upsert(self, cluster_id, node_id, **fields):
        row = self.rows.setdefault((cluster_id, node_id), {
            'cluster_id': cluster_id, 'node_id': node_id, 'state': None,
            'state_reason': None, 'state_changed_at': None})
        if 'state' in fields:
            fields.setdefault('state_reason', None)
            row['state_changed_at'] = _now()
        row.update(fields)
        return dict(row)

    def get(self, cluster_id, node_id):
        if (cluster_id, node_id) not in self.rows:
            raise exception.NotFound(kind='node', id=node_id)
        return dict(self.rows[(cluster_id, node_id)])

    def list(self, cluster_id):
        return [dict(r) for (c, _n), r in sorted(self.rows.items())
                if c == cluster_id]

    def change_state(self, cluster_id, node_id, state, reason, expected):
        row = self.rows.get((cluster_id, node_id))
        if row is None or row.get('state') not in expected:
            return False
        row.update(state=state, state_reason=reason,
                   state_changed_at=_now())
        return True

    def delete(self, cluster_id, node_id):
        self.rows.pop((cluster_id, node_id), None)


class Actions:
    def __init__(self):
        self.rows = {}
        self.decisions = []

    def create(self, cluster_id, kind, params, step='created',
               state='RUNNING'):
        now = _now()
        action_id = uuid.uuid1()
        self.rows[action_id] = {
            'cluster_id': cluster_id, 'id': action_id, 'kind': kind,
            'state': state, 'step': step, 'params': copy.deepcopy(params),
            'result': None, 'reason': None, 'created_at': now,
            'updated_at': now}
        return self.get(cluster_id, action_id)

    def get(self, cluster_id, action_id):
        if action_id not in self.rows:
            raise exception.NotFound(kind='action', id=action_id)
        return copy.deepcopy(self.rows[action_id])

    def advance(self, cluster_id, action_id, step, state='RUNNING',
                expected_step=None, result=None, reason=None,
                expected_params=None):
        row = self.rows[action_id]
        if expected_step is not None and (
                row['step'] != expected_step
                or expected_params is not None
                and row['params'] != expected_params):
            raise exception.Conflict(reason='action moved on')
        row.update(step=step, state=state, result=copy.deepcopy(result),
                   reason=reason, updated_at=_now())

    def top_up(self, cluster_id, action_id, count, record):
        return self._resize(cluster_id, action_id, 'top_ups',
                            lambda row, wanted: count, record)

    def trim(self, cluster_id, action_id, count, record):
        def change(row, wanted):
            created = len((row.get('result') or {}).get('servers') or [])
            return -max(0, min(count, wanted - max(created, 1)))
        return self._resize(cluster_id, action_id, 'trims', change, record)

    def keep(self, cluster_id, action_id, nodes, record):
        """As ActionRepository.keep, without the transaction."""
        row = self.rows[action_id]
        if row['kind'] != 'scale_in' or row['state'] in (
                actions_store.TERMINAL_STATES) or row['step'] not in (
                actions_store.SHRINKABLE_STEPS):
            return None
        params = row['params']
        kept = [n for n in actions_store.not_begun(row) if n in nodes]
        if not kept:
            return None
        row['params'] = dict(params, nodes=[n for n in params['nodes'] if n not in kept],
                             keeps=list(params.get('keeps') or []) + [
                                 dict(record, nodes=kept)])
        return self.get(cluster_id, action_id)

    def _resize(self, cluster_id, action_id, listed, change, record):
        """As ActionRepository._resize, without the transaction."""
        row = self.rows[action_id]
        if row['kind'] != 'scale_out' or row['state'] in (
                actions_store.TERMINAL_STATES) or row['step'] not in (
                actions_store.GROWABLE_STEPS):
            return None
        params = row['params']
        delta = change(row, params['count'])
        if not delta:
            return None
        row['params'] = dict(params, count=params['count'] + delta, **{
            listed: list(params.get(listed) or []) + [dict(record, count=abs(delta))]})
        return self.get(cluster_id, action_id)

    def list(self, cluster_id, limit=100, marker=None):
        rows = sorted((r for r in self.rows.values()
                       if r['cluster_id'] == cluster_id),
                      key=lambda r: r['created_at'], reverse=True)
        return [copy.deepcopy(r) for r in rows[:limit]]

    def unfinished(self, cluster_id):
        return [r for r in self.list(cluster_id, limit=10 ** 6)
                if r['state'] not in ('SUCCEEDED', 'FAILED', 'ROLLED_BACK')]

    def record_decision(self, cluster_id, ts, action, record):
        self.decisions.append((cluster_id, ts, action, record))


class Leases:
    def __init__(self):
        self.holders = {}
        self.released = []

    def acquire(self, name, holder, ttl):
        current = self.holders.get(name)
        if current in (None, holder):
            self.holders[name] = holder
            return True
        return False

    def holder(self, name):
        return self.holders.get(name)

    def release(self, name, holder):
        if self.holders.get(name) != holder:
            return False
        del self.holders[name]
        self.released.append(name)
        return True


class Samples:
    def __init__(self):
        self.rows = {}

    def add(self, sample):
        self.rows.setdefault((sample['cluster_id'], sample['node_id']),
                             []).insert(0, dict(sample))

    def for_node(self, cluster_id, node_id, since=None, limit=None):
        rows = self.rows.get((cluster_id, node_id), [])
        return list(rows[:limit] if limit is not None else rows)

    def newest(self, cluster_id, node_ids, limit=1):
        return {n: self.rows[(cluster_id, n)][:limit] for n in node_ids
                if self.rows.get((cluster_id, n))}


class Credentials:
    """No cluster has credentials or TLS."""

    def get(self, cluster_id):
        return None


class Hosts:
    """The host agents' interference reports and escalations, in the order
    received.
    """

    def __init__(self):
        self.reports = []
        self.escalations = []

    def report(self, host, vms, ts=None):
        self.reports.append((host, vms))

    def escalate(self, host, details):
        self.escalations.append((host, details))


class MemStore:
    def __init__(self):
        self.credentials = Credentials()
        self.hosts = Hosts()
        self.clusters = Clusters()
        self.nodes = Nodes()
        self.actions = Actions()
        self.leases = Leases()
        self.samples = Samples()
