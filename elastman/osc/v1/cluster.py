"""openstack elastman cluster create|list|show|set|delete|scale, and
cluster credentials set|unset."""
from __future__ import annotations

from osc_lib.command import command
from osc_lib import exceptions

from elastman.osc.v1 import common

LIST_COLUMNS = ('id', 'name', 'state', 'mode', 'size', 'flavor')
SHOW_COLUMNS = ('id', 'name', 'project_id', 'state', 'status_reason', 'mode',
                'flavor', 'image', 'size', 'endpoints', 'nodes', 'policy',
                'security', 'created_at', 'updated_at')


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
    a node not UN since when and why."""
    line = '%s %s (%s' % (node['id'], node.get('address') or '-',
                          node.get('state'))
    if node.get('state') not in ('UN', None) and (
            node.get('state_changed_at') or node.get('state_reason')):
        line += ' since %s' % (node.get('state_changed_at') or '?')
        if node.get('state_reason'):
            line += ': %s' % node['state_reason']
    return line + ')'


def _show(cluster: dict):
    cluster = dict(cluster)
    cluster['nodes'] = [node_line(n) for n in cluster.get('nodes') or []]
    return common.show(cluster, SHOW_COLUMNS)


class CreateCluster(command.ShowOne):
    """Register an existing Cassandra cluster (--seed) or create one
    (--flavor, --image, --size)."""

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
        add_access_options(parser)
        common.add_wait(parser, 'the cluster is ACTIVE')
        return parser

    def take_action(self, args):
        client = common.client(self.app)
        cluster = common.call(
            client.create_cluster, args.name, seeds=args.seeds,
            flavor=args.flavor, image=args.image, size=args.size,
            cql_port=args.cql_port, jmx_port=args.jmx_port,
            **access_body(args))
        if args.wait:
            cluster = _wait_state(client, cluster['id'], args.timeout)
        return _show(cluster)


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
        parser.add_argument('--limit', type=int, help='At most this many.')
        parser.add_argument('--marker', help='Start after this page marker.')
        return parser

    def take_action(self, args):
        clusters = common.call(common.client(self.app).list_clusters,
                               all_projects=args.all_projects,
                               limit=args.limit, marker=args.marker)
        return LIST_COLUMNS, [tuple(c.get(k) for k in LIST_COLUMNS)
                              for c in clusters]


class ShowCluster(command.ShowOne):
    """Show a cluster with its nodes, state and policy."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('cluster', help='Cluster name or id.')
        return parser

    def take_action(self, args):
        return _show(common.find_cluster(self.app, args.cluster))


class SetCluster(command.ShowOne):
    """Rename a cluster."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('cluster', help='Cluster name or id.')
        parser.add_argument('--name', required=True, help='New name.')
        return parser

    def take_action(self, args):
        cluster = common.find_cluster(self.app, args.cluster)
        return _show(common.call(common.client(self.app).update_cluster,
                                 cluster['id'], name=args.name))


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


class ScaleCluster(command.ShowOne):
    """Resize a cluster to --count nodes (a journalled action)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('cluster', help='Cluster name or id.')
        parser.add_argument('--count', type=int, required=True,
                            help='Number of nodes wanted.')
        parser.add_argument('--flavor', help='Flavour of added nodes.')
        common.add_wait(parser, 'the action finished')
        return parser

    def take_action(self, args):
        client = common.client(self.app)
        cluster = common.find_cluster(self.app, args.cluster)
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
        from elastman.osc.v1 import action as action_cmd
        return common.show(action, action_cmd.SHOW_COLUMNS)


class SetCredentials(command.Command):
    """Replace the credentials and TLS settings elastman logs in to a
    cluster's nodes with (stored encrypted, never shown)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('cluster', help='Cluster name or id.')
        add_access_options(parser)
        return parser

    def take_action(self, args):
        body = access_body(args)
        if not body:
            raise exceptions.CommandError('give --username/--password or a '
                                          'TLS option')
        cluster = common.find_cluster(self.app, args.cluster)
        common.call(common.client(self.app).set_credentials, cluster['id'],
                    **body)


class UnsetCredentials(command.Command):
    """Forget the credentials and TLS settings of a cluster."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('cluster', help='Cluster name or id.')
        return parser

    def take_action(self, args):
        cluster = common.find_cluster(self.app, args.cluster)
        common.call(common.client(self.app).delete_credentials,
                    cluster['id'])
