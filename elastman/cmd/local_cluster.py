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
"""``elastman-manage local-cluster create|list|delete``: managed clusters whose
servers are Cassandra processes on this host (the ``local`` compute driver).

A cluster is what the API writes, through the same lifecycle service
(:mod:`elastman.lifecycle.service`): a row in the store and a journalled
action. Whoever holds the cluster's actuator lease carries the action out: a
running elastman-actuator (or elastman-all), or else this command itself,
in-process, with the actuator's own ActionExecutor. Either way the command
prints progress and returns once the action is over.
"""
from __future__ import annotations

import argparse
import os
import re
import socket
import sys
import threading
import time
import uuid
from typing import Any, Callable

from elastman.actuator import executor as executor_mod
from elastman.actuator import policy as policy_mod
from elastman.actuator import steps as steps_mod
from elastman.api import auth
from elastman.api import errors as api_errors
from elastman.api import schemas
from elastman.common import exception
from elastman.compute import base as compute
from elastman.compute import flavors as flavor_mod
from elastman.compute import local as local_driver
from elastman.lifecycle import service as lifecycle
from elastman import store as em_store
from elastman.store import actions as actions_repo

PROG = 'elastman-manage local-cluster'
LEASE_TTL = 30          # seconds; renewed every third of it while acting
POLL_INTERVAL = 2.0     # seconds between two looks at the journal
USAGE_ERROR = 2
_NAME = re.compile(schemas.NAME['pattern'])

Echo = Callable[[str], None]


class UsageError(exception.ElastmanException):
    """Bad input, found before anything was written."""


def default_holder() -> str:
    return 'elastman-manage@%s:%d' % (socket.gethostname(), os.getpid())


# -- input ------------------------------------------------------------------------
def configured_flavors(conf) -> dict[str, flavor_mod.Flavor]:
    """The [local_cloud] flavours, in configuration order."""
    return flavor_mod.parse_all(conf.local_cloud.flavor)


def validate_create(conf, name: str, size: int, flavor: str | None,
                    min_size: int | None = None, max_size: int | None = None,
                    slo_ms: float | None = None) -> tuple[dict, dict]:
    """The cluster's spec and policy, or UsageError naming what is wrong."""
    if conf.actuator.compute_driver != 'local':
        raise UsageError('[actuator] compute_driver is %r: local clusters '
                         'need the local driver'
                         % conf.actuator.compute_driver)
    if not name or len(name) > schemas.NAME['maxLength'] or \
            not _NAME.match(name):
        raise UsageError('invalid cluster name %r: letters, digits, "_", '
                         '".", "-" and spaces, starting with a letter or '
                         'digit' % name)
    if size < 1:
        raise UsageError('--size must be at least 1 (got %d)' % size)
    flavors = configured_flavors(conf)
    if not flavors:
        raise UsageError('no [local_cloud] flavor is configured')
    flavor = flavor or next(iter(flavors))
    if flavor not in flavors:
        raise UsageError('unknown flavour %r (configured: %s)'
                         % (flavor, ', '.join(flavors)))
    low = size if min_size is None else min_size
    high = max(size, schemas.POLICY_DEFAULTS['max_size']) \
        if max_size is None else max_size
    if not 1 <= low <= size <= high:
        raise UsageError('--size %d must lie within --min-size %d and '
                         '--max-size %d (and --min-size be at least 1)'
                         % (size, low, high))
    requested: dict[str, Any] = {'min_size': low, 'max_size': high,
                                 'flavors': [flavor]}
    if slo_ms is not None:
        requested['slo_threshold_ms'] = slo_ms
    try:
        policy = schemas.normalize_policy(requested)
    except api_errors.APIError as exc:
        raise UsageError('invalid scaling policy: %s' % exc.message)
    spec = {'mode': 'managed', 'flavor': flavor, 'image': 'local',
            'size': size, 'cql_port': conf.local_cloud.cql_port}
    try:
        policy_mod.ScalingPolicy.for_cluster({'spec': spec, 'policy': policy})
    except policy_mod.InvalidPolicy as exc:
        raise UsageError('invalid scaling policy: %s' % exc)
    return spec, policy


def _managed(cluster: dict) -> bool:
    return (cluster.get('spec') or {}).get('mode') == 'managed'


# -- carrying an action out ---------------------------------------------------
class Progress:
    """Prints an action's step and its cluster's nodes whenever they change."""

    def __init__(self, store, echo: Echo) -> None:
        self.store = store
        self.echo = echo
        self._last: str | None = None

    def show(self, action: dict) -> None:
        nodes = self.store.nodes.list(action['cluster_id'])
        line = '%s %s at step %s; nodes: %s' % (
            action['kind'], action['state'], action['step'],
            ', '.join('%s %s' % (n.get('address') or n['node_id'],
                                 n.get('state')) for n in
                      sorted(nodes, key=lambda n: n.get('address') or ''))
            or 'none')
        if line != self._last:
            self.echo('[%s] %s' % (time.strftime('%H:%M:%S'), line))
            self._last = line


class LocalClusters:
    """The sub-commands' work, on a store and a compute driver."""

    def __init__(self, conf, store, driver: compute.ComputeDriver,
                 echo: Echo = print, holder: str | None = None,
                 executor: executor_mod.ActionExecutor | None = None,
                 poll_interval: float = POLL_INTERVAL,
                 lease_ttl: int = LEASE_TTL) -> None:
        self.conf = conf
        self.store = store
        self.driver = driver
        self.echo = echo
        self.holder = holder or default_holder()
        self.executor = executor or executor_mod.ActionExecutor(conf, store,
                                                                driver)
        self.poll_interval = poll_interval
        self.lease_ttl = lease_ttl
        # no notify: this command, or an actuator, finds the PENDING action
        self.service = lifecycle.ClusterService(conf, store)

    # lookup ------------------------------------------------------------------
    def managed_clusters(self) -> list[dict]:
        return sorted((c for c in self.store.clusters.all() if _managed(c)),
                      key=lambda c: (c['name'], str(c['id'])))

    def find(self, ref: str) -> dict:
        """A managed cluster by id or name; UsageError if none or several."""
        try:
            cluster_id = uuid.UUID(ref)
        except ValueError:
            cluster_id = None
        if cluster_id is not None:
            try:
                found = [self.store.clusters.get(cluster_id)]
            except exception.NotFound:
                found = []
        else:
            found = [c for c in self.store.clusters.all() if c['name'] == ref]
        if not found:
            raise UsageError('no cluster %r' % ref)
        if len(found) > 1:
            raise UsageError('%d clusters are named %r; give the id (%s)'
                             % (len(found), ref,
                                ', '.join(str(c['id']) for c in found)))
        if not _managed(found[0]):
            raise UsageError('cluster %s (%s) is registered, not managed: '
                             'elastman has no servers of it'
                             % (found[0]['name'], found[0]['id']))
        return found[0]

    # create ------------------------------------------------------------------
    def create(self, name: str, spec: dict, policy: dict,
               project: str = auth.NOAUTH_PROJECT,
               exist_ok: bool = False) -> int:
        """Register the cluster, journal its 'create' and see it done."""
        existing = [c for c in self.store.clusters.all() if c['name'] == name]
        if existing:
            if not exist_ok:
                raise UsageError('a cluster named %r exists already (%s)'
                                 % (name, existing[0]['id']))
            return self._resume_existing(self.find(name))
        cluster, action = self.service.create(project, name, spec, policy,
                                              requested_by=self.holder)
        self.echo('cluster %s (%s): %d %s node(s) requested'
                  % (name, cluster['id'], spec['size'], spec['flavor']))
        return self._report(cluster, self.carry_out(action))

    def _resume_existing(self, cluster: dict) -> int:
        """--exist-ok: finish what the cluster has unfinished, if anything."""
        unfinished = self._unfinished(cluster['id'])
        if unfinished:
            self.echo('cluster %s (%s) exists with unfinished actions; '
                      'finishing them' % (cluster['name'], cluster['id']))
            return self._report(cluster, self.carry_out(unfinished[-1]))
        nodes = self.store.nodes.list(cluster['id'])
        self.echo('cluster %s (%s) exists: %s, %d node(s)'
                  % (cluster['name'], cluster['id'], cluster['state'],
                     len(nodes)))
        return 0

    # delete ------------------------------------------------------------------
    def delete(self, ref: str) -> int:
        """Journal a 'delete' (or take over the one journalled) and see it
        done: every server, node row and the cluster row go. A cluster with
        neither servers nor an action under way goes at once.
        """
        cluster = self.find(ref)
        action = self.service.delete(cluster, requested_by=self.holder)
        if action is None:      # nothing of it was left to an actuator
            self.echo('cluster %s (%s) deleted' % (cluster['name'],
                                                   cluster['id']))
            return 0
        self.echo('cluster %s (%s): delete requested'
                  % (cluster['name'], cluster['id']))
        return self._report(cluster, self.carry_out(action))

    # list --------------------------------------------------------------------
    def rows(self) -> list[dict]:
        """One row per node (or server) of every managed cluster, plus the
        local servers whose cluster is gone.
        """
        rows: list[dict] = []
        servers = {s.id: s for s in self.driver.list()}
        clusters = self.managed_clusters()
        for cluster in clusters:
            base = {'cluster': cluster['name'], 'id': str(cluster['id']),
                    'cluster_state': cluster['state']}
            nodes = sorted(self.store.nodes.list(cluster['id']),
                           key=lambda n: n.get('address') or '')
            for node in nodes:
                server = servers.pop(node.get('server_id') or '', None)
                rows.append(dict(base, **self._node_columns(node, server)))
            tagged = [s for s in servers.values()
                      if s.cluster_id == str(cluster['id'])]
            for server in tagged:
                del servers[server.id]
                rows.append(dict(base, **self._node_columns(None, server)))
            if not nodes and not tagged:
                rows.append(dict(base, **self._node_columns(None, None)))
        for server in servers.values():
            rows.append(dict({'cluster': '(none)',
                              'id': server.cluster_id or '-',
                              'cluster_state': 'ORPHAN'},
                             **self._node_columns(None, server)))
        return rows

    def _node_columns(self, node: dict | None,
                      server: compute.Server | None) -> dict:
        pid = None
        if server is not None and isinstance(self.driver,
                                             local_driver.LocalDriver):
            try:
                pid = self.driver.node(server.id).pid()
            except (compute.ServerNotFound, OSError, ValueError):
                pid = None
        return {
            'address': (node or {}).get('address') or (
                server.address if server else None) or '-',
            'flavor': (node or {}).get('flavor') or (
                server.flavor if server else None) or '-',
            'node_state': (node or {}).get('state') or '-',
            'server': server.status if server else '-',
            'pid': str(pid) if pid else ('stopped' if server else '-'),
        }

    # the action ----------------------------------------------------------------
    def _unfinished(self, cluster_id) -> list[dict]:
        return self.service.unfinished(cluster_id)

    def carry_out(self, action: dict) -> dict:
        """Run ``action`` here if no actuator holds the cluster's lease, or
        wait for the one that does; returns the terminal journal row.
        """
        progress = Progress(self.store, self.echo)
        lease = steps_mod.lease_name(action['cluster_id'])
        told = None
        while True:
            current = self.store.actions.get(action['cluster_id'],
                                             action['id'])
            progress.show(current)
            if current['state'] in actions_repo.TERMINAL_STATES:
                return current
            holder = self.store.leases.holder(lease)  # a plain read first
            if holder in (None, self.holder) and self.store.leases.acquire(
                    lease, self.holder, self.lease_ttl):
                return self._run_here(current, lease, progress)
            if holder and holder != told:
                self.echo('%s holds the cluster\'s lease (an actuator): '
                          'waiting for it to carry the %s out'
                          % (holder, action['kind']))
                told = holder
            time.sleep(self.poll_interval)

    def _run_here(self, target: dict, lease: str,
                  progress: Progress) -> dict:
        """Holding the lease: run the cluster's unfinished actions, oldest
        first, up to ``target``, as an actuator would.
        """
        queue = [a for a in self._unfinished(target['cluster_id'])
                 if a['created_at'] <= target['created_at']]
        self.echo('running the %s here (no actuator holds the cluster)'
                  % target['kind'])
        stop = threading.Event()
        renewer = threading.Thread(target=self._renew, args=(lease, stop),
                                   name='lease-renewal', daemon=True)
        # daemon: Ctrl-C leaves the action in the journal for an actuator
        worker = threading.Thread(target=self._run_all, args=(queue,),
                                  name='action', daemon=True)
        renewer.start()
        worker.start()
        try:
            while worker.is_alive():
                worker.join(self.poll_interval)
                progress.show(self.store.actions.get(target['cluster_id'],
                                                     target['id']))
        finally:
            stop.set()
            renewer.join()
            self.store.leases.release(lease, self.holder)
        return self.store.actions.get(target['cluster_id'], target['id'])

    def _run_all(self, actions: list[dict]) -> None:
        for action in actions:
            self.executor.run(action)  # journals its own failure

    def _renew(self, lease: str, stop: threading.Event) -> None:
        while not stop.wait(self.lease_ttl / 3.0):
            try:
                if not self.store.leases.acquire(lease, self.holder,
                                                 self.lease_ttl):
                    self.echo('warning: lost the lease %s; the journal keeps '
                              'a second actor from repeating a step' % lease)
            except Exception as exc:  # the store may hiccup; try again
                self.echo('warning: cannot renew the lease %s: %s'
                          % (lease, exc))

    def _report(self, cluster: dict, action: dict) -> int:
        what = 'cluster %s (%s)' % (cluster['name'], cluster['id'])
        if action['state'] != 'SUCCEEDED':
            print('%s: %s of %s %s: %s' % (PROG, action['kind'], what,
                                           action['state'].lower(),
                                           action.get('reason')),
                  file=sys.stderr)
            return 1
        if action['kind'] == 'delete':
            self.echo('%s deleted' % what)
            return 0
        nodes = self.store.nodes.list(cluster['id'])
        self.echo('%s is ready: %s' % (what, ', '.join(
            '%s %s' % (n.get('address'), n.get('state')) for n in
            sorted(nodes, key=lambda n: n.get('address') or ''))))
        return 0


# -- output ------------------------------------------------------------------------
COLUMNS = (('CLUSTER', 'cluster'), ('ID', 'id'),
           ('STATE', 'cluster_state'), ('ADDRESS', 'address'),
           ('FLAVOR', 'flavor'), ('NODE', 'node_state'),
           ('SERVER', 'server'), ('PID', 'pid'))


def format_table(rows: list[dict]) -> str:
    """Rows as aligned columns under a header."""
    table = [[title for title, _ in COLUMNS]] + [
        [str(row[key]) for _, key in COLUMNS] for row in rows]
    widths = [max(len(line[i]) for line in table)
              for i in range(len(COLUMNS))]
    return '\n'.join('  '.join(cell.ljust(w) for cell, w in
                               zip(line, widths)).rstrip() for line in table)


# -- command line ----------------------------------------------------------------
def _open(conf) -> tuple[Any, local_driver.LocalDriver]:
    # no recovery: that is the actuator's job, and it would remove a server
    # a running actuator is creating at this moment
    driver = local_driver.LocalDriver(conf, recover=False)
    return em_store.Store.open(conf), driver


def _command(args: argparse.Namespace) -> int:
    from elastman.common import config
    conf = config.CONF
    try:
        if args.action == 'create':
            spec, policy = validate_create(conf, args.cluster, args.size,
                                           args.flavor, args.min_size,
                                           args.max_size, args.slo_ms)
        store, driver = _open(conf)
        try:
            tool = LocalClusters(conf, store, driver,
                                 echo=lambda m: print(m, flush=True))
            if args.action == 'create':
                return tool.create(args.cluster, spec, policy, args.project,
                                   args.exist_ok)
            if args.action == 'delete':
                return tool.delete(args.cluster)
            print(format_table(tool.rows()))
            return 0
        finally:
            store.close()
    except UsageError as exc:
        print('%s: %s' % (PROG, exc), file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        print('%s: interrupted; an unfinished action stays in the journal '
              'for elastman-actuator or a repeated command to finish'
              % PROG, file=sys.stderr)
        raise


def add_subparser(subparsers: Any) -> argparse.ArgumentParser:
    """``elastman-manage local-cluster create|list|delete``."""
    parser = subparsers.add_parser(
        'local-cluster', help='managed clusters of Cassandra processes on '
                              'this host (the local compute driver)')
    sub = parser.add_subparsers(dest='action')
    sub.required = True
    create = sub.add_parser(
        'create', help='create a cluster and wait until its nodes are UN')
    # not "name": oslo.config's sub-command namespace has that already
    create.add_argument('cluster', metavar='NAME')
    create.add_argument('--size', type=int, default=3,
                        help='nodes to start with (default: 3)')
    create.add_argument('--flavor', help='[local_cloud] flavour of the '
                                         'nodes (default: the first one)')
    create.add_argument('--min-size', type=int,
                        help='policy: fewest nodes (default: --size)')
    create.add_argument('--max-size', type=int,
                        help='policy: most nodes (default: the larger of '
                             '--size and %d)'
                             % schemas.POLICY_DEFAULTS['max_size'])
    create.add_argument('--slo-ms', type=float,
                        help='policy: p99 read latency SLO in ms (default: '
                             '%g)' % schemas.POLICY_DEFAULTS[
                                 'slo_threshold_ms'])
    create.add_argument('--project', default=auth.NOAUTH_PROJECT,
                        help='owning project (default: %(default)s, the '
                             'noauth API\'s)')
    create.add_argument('--exist-ok', action='store_true',
                        help='a cluster of that name is fine: finish its '
                             'unfinished actions, if any, and exit 0')
    create.set_defaults(func=_command)
    sub.add_parser('list', help='managed clusters and their nodes'
                   ).set_defaults(func=_command)
    delete = sub.add_parser(
        'delete', help='delete a managed cluster: its servers, nodes and row')
    delete.add_argument('cluster', help='name or id')
    delete.set_defaults(func=_command)
    return parser
