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
"""openstack elastman cluster create|list|show|set|delete|scale, and
cluster credentials set|unset.
"""
from __future__ import annotations

from osc_lib.command import command
from osc_lib import exceptions

from elastman.osc.v1 import action as action_cmd
from elastman.osc.v1 import common
from elastman.osc.v1 import constants
from elastman.osc.v1 import formatters as fmt

#: Recent decisions read to find the one behind an action in flight.
RECENT_DECISIONS = 30


def add_access_options(parser) -> None:
    """Credentials and TLS of the cluster's nodes."""
    parser.add_argument('--username', help='CQL (and JMX) user elastman '
                                           'logs in as.')
    parser.add_argument('--password', help='Password of --username.')
    parser.add_argument('--jmx-username', help='JMX user, when not the CQL '
                                               'one.')
    parser.add_argument('--jmx-password', help='Password of --jmx-username.')
    parser.add_argument('--cql-tls', action='store_true',
                        help='CQL connections use TLS.')
    parser.add_argument('--jmx-tls', action='store_true',
                        help='JMX connections use TLS.')
    parser.add_argument('--ca-cert', metavar='<file>',
                        help='PEM file of the CA the nodes\' certificates '
                             'chain to (default: the system\'s CAs).')
    parser.add_argument('--no-verify-hostname', action='store_true',
                        help='Do not check the nodes\' host names (CQL).')


def access_body(args) -> dict:
    """The ``credentials`` and ``tls`` of a request, from the options."""
    body: dict = {}
    if args.username or args.password:
        if not (args.username and args.password):
            raise exceptions.CommandError('--username and --password go '
                                          'together')
        creds = {'username': args.username, 'password': args.password}
        if args.jmx_username or args.jmx_password:
            creds.update(jmx_username=args.jmx_username,
                         jmx_password=args.jmx_password)
        body['credentials'] = {k: v for k, v in creds.items() if v}
    tls: dict = {}
    if args.cql_tls:
        tls['cql'] = True
    if args.jmx_tls:
        tls['jmx'] = True
    if args.ca_cert:
        try:
            with open(args.ca_cert) as f:
                tls['ca_certificate'] = f.read()
        except OSError as exc:
            raise exceptions.CommandError('--ca-cert: %s' % exc)
    if args.no_verify_hostname:
        tls['verify_hostname'] = False
    if tls:
        body['tls'] = tls
    return body


def node_line(node: dict) -> str:
    """One node as ``cluster show`` lists it: id, address, state, and for
    a node not UN since when and why.
    """
    line = '%s %s (%s' % (node['id'], node.get('address') or '-',
                          node.get('state'))
    if node.get('state') not in ('UN', None) and (
            node.get('state_changed_at') or node.get('state_reason')):
        line += ' since %s' % (node.get('state_changed_at') or '?')
        if node.get('state_reason'):
            line += ': %s' % node['state_reason']
    return line + ')'


def _show(app, args, cluster: dict):
    """The cluster, and what elastman is doing with it now and why: the
    action in flight, the last decision, the health of its nodes and of
    the control loop.
    """
    client = common.client(app)
    in_flight = [a for a in common.call(client.list_actions, cluster['id'],
                                        limit=20)
                 if a.get('state') not in ('SUCCEEDED', 'FAILED',
                                           'ROLLED_BACK')]
    decisions = common.call(client.list_decisions, cluster['id'],
                            limit=RECENT_DECISIONS if in_flight else 1)
    last = decisions[0] if decisions else None
    if common.machine(args):
        doc = dict(cluster, actions_in_flight=in_flight, last_decision=last)
        return common.show(doc, tuple(doc))
    last_text = 'none yet'
    if last is not None:
        last_text = '%s %s: %s' % (fmt.when(last.get('ts')),
                                   last.get('action'),
                                   fmt.decision_reason(last))
    values = {
        'endpoints': fmt.Summary(cluster.get('endpoints'),
                                 cluster.get('endpoints') or ()),
        'nodes': fmt.Summary(cluster.get('nodes'),
                             [node_line(n) for n in cluster.get('nodes')
                              or ()]),
        'policy': fmt.Summary(cluster.get('policy'),
                              fmt.policy_summary(cluster.get('policy'))),
        'security': common.JSON(cluster.get('security')),
        'doing': fmt.Summary(in_flight, fmt.doing(in_flight, decisions)),
        'last_decision': fmt.Text(last_text),
        'health': fmt.Summary(
            {'status_reason': cluster.get('status_reason')},
            fmt.health(cluster, last)),
        'created_at': fmt.when(cluster.get('created_at')),
        'updated_at': fmt.when(cluster.get('updated_at')),
    }
    rows = constants.CLUSTER_ROWS
    return rows, common.row(cluster, rows, values)


class CreateCluster(command.ShowOne):
    """Register an existing Cassandra cluster (--seed) or create one
    (--flavor, --image, --size).
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', help='Cluster name.')
        parser.add_argument('--seed', action='append', dest='seeds',
                            metavar='<host[:port]>',
                            help='Seed node of an existing cluster '
                                 '(repeat for several).')
        parser.add_argument('--flavor', help='Flavour of the nodes.')
        parser.add_argument('--image', help='Image of new nodes.')
        parser.add_argument('--size', type=int,
                            help='Number of nodes of a new cluster.')
        parser.add_argument('--cql-port', type=int, help='CQL port.')
        parser.add_argument('--jmx-port', type=int, help='JMX port.')
        parser.add_argument('--network', action='append', dest='networks',
                            metavar='<network>',
                            help='Network (name or ID) of new servers '
                                 '(repeat for several).')
        parser.add_argument('--security-group', action='append',
                            dest='security_groups', metavar='<group>',
                            help='Security group of new servers (repeat '
                                 'for several).')
        parser.add_argument('--availability-zone',
                            help='Availability zone of new servers.')
        group = parser.add_mutually_exclusive_group()
        group.add_argument('--server-group',
                           help='An existing server group new servers '
                                'boot into.')
        group.add_argument('--server-group-policy',
                           choices=['anti-affinity', 'soft-anti-affinity',
                                    'affinity', 'soft-affinity'],
                           help='A server group of the cluster\'s own with '
                                'this policy.')
        parser.add_argument('--key-name', help='Key pair of new servers.')
        add_access_options(parser)
        common.add_wait(parser, 'the cluster is ACTIVE')
        return parser

    def take_action(self, args):
        client = common.client(self.app)
        cluster = common.call(
            client.create_cluster, args.name, seeds=args.seeds,
            flavor=args.flavor, image=args.image, size=args.size,
            cql_port=args.cql_port, jmx_port=args.jmx_port,
            networks=args.networks, security_groups=args.security_groups,
            availability_zone=args.availability_zone,
            server_group=args.server_group,
            server_group_policy=args.server_group_policy,
            key_name=args.key_name,
            **access_body(args))
        if args.wait:
            cluster = _wait_state(client, cluster['id'], args.timeout)
        return _show(self.app, args, cluster)


def _wait_state(client, cluster_id: str, timeout: int) -> dict:
    cluster = common.call(
        client.wait_for, lambda: client.get_cluster(cluster_id),
        lambda c: c is None or c['state'] in ('ACTIVE', 'ERROR'),
        timeout=timeout, progress=common.progress())
    if cluster is None:
        raise exceptions.CommandError('cluster %s disappeared' % cluster_id)
    if cluster['state'] == 'ERROR':
        raise exceptions.CommandError('cluster %s: ERROR %s' % (
            cluster_id, cluster.get('status_reason') or ''))
    return cluster


class ListCluster(command.Lister):
    """List clusters."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--all-projects', action='store_true',
                            help='Clusters of every project (admin).')
        common.add_paging(parser)
        return parser

    def take_action(self, args):
        clusters = common.call(common.client(self.app).list_clusters,
                               all_projects=args.all_projects,
                               limit=args.limit, marker=args.marker)
        if common.machine(args):
            return common.whole(clusters)
        columns = constants.CLUSTER_COLUMNS
        return columns, [tuple(c.get(k) for k in columns) for c in clusters]


class ShowCluster(common.ClusterCommand, command.ShowOne):
    """Show a cluster and what elastman is doing with it: the action in
    flight, the last decision and why, the health of its nodes and of the
    control loop.
    """

    def take_action(self, args):
        return _show(self.app, args, self.cluster(args))


class SetCluster(common.ClusterCommand, command.ShowOne):
    """Rename a cluster."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--name', required=True, help='New name.')
        return parser

    def take_action(self, args):
        return _show(self.app, args,
                     self.on_cluster(args, 'update_cluster', name=args.name))


class DeleteCluster(command.Command):
    """Delete (managed) or unregister (registered) clusters."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('clusters', nargs='+', metavar='<cluster>',
                            help='Cluster names or ids.')
        common.add_wait(parser, 'the clusters are gone')
        return parser

    def take_action(self, args):
        client = common.client(self.app)
        for name in args.clusters:
            cluster = common.find_cluster(self.app, name)
            common.call(client.delete_cluster, cluster['id'])
            if args.wait:
                common.call(client.wait_for,
                            lambda: client.get_cluster(cluster['id']),
                            lambda c: c is None, timeout=args.timeout,
                            progress=common.progress())


class ScaleCluster(common.ClusterCommand, command.ShowOne):
    """Resize a cluster to --count nodes (a journalled action)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--count', type=int, required=True,
                            help='Number of nodes wanted.')
        parser.add_argument('--flavor', help='Flavour of added nodes.')
        common.add_wait(parser, 'the action finished')
        return parser

    def take_action(self, args):
        client = common.client(self.app)
        cluster = self.cluster(args)
        action = common.call(client.scale_cluster, cluster['id'], args.count,
                             args.flavor)
        if args.wait:
            action = common.call(
                client.wait_for,
                lambda: client.get_action(cluster['id'], action['id']),
                lambda a: a is None or a['state'] in (
                    'SUCCEEDED', 'FAILED', 'ROLLED_BACK'),
                timeout=args.timeout, progress=common.progress())
            if action is None or action['state'] != 'SUCCEEDED':
                raise exceptions.CommandError('scaling did not succeed: %s'
                                              % (action or {}).get('reason'))
        return action_cmd.show_action(args, action)


class SetCredentials(common.ClusterCommand, command.Command):
    """Replace the credentials and TLS settings elastman logs in to a
    cluster's nodes with (stored encrypted, never shown).
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_access_options(parser)
        return parser

    def take_action(self, args):
        body = access_body(args)
        if not body:
            raise exceptions.CommandError('give --username/--password or a '
                                          'TLS option')
        self.on_cluster(args, 'set_credentials', **body)


class UnsetCredentials(common.ClusterCommand, command.Command):
    """Forget the credentials and TLS settings of a cluster."""

    def take_action(self, args):
        self.on_cluster(args, 'delete_credentials')
