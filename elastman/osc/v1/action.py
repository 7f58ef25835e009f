"""openstack elastman action list|show and decision list."""
from __future__ import annotations

from osc_lib.command import command

from elastman.osc.v1 import common

LIST_COLUMNS = ('id', 'kind', 'state', 'step', 'reason', 'created_at')
SHOW_COLUMNS = ('id', 'cluster_id', 'kind', 'state', 'step', 'params',
                'result', 'reason', 'created_at', 'updated_at')
DECISION_COLUMNS = ('ts', 'action', 'record')


def _paging(parser):
    parser.add_argument('--limit', type=int, help='At most this many.')
    parser.add_argument('--marker', help='Start after this page marker.')


class ListAction(command.Lister):
    """List the scaling actions of a cluster, newest first."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('cluster', help='Cluster name or id.')
        parser.add_argument('--kind', help='Only actions of this kind.')
        parser.add_argument('--state', help='Only actions in this state.')
        _paging(parser)
        return parser

    def take_action(self, args):
        cluster = common.find_cluster(self.app, args.cluster)
        actions = common.call(common.client(self.app).list_actions,
                              cluster['id'], kind=args.kind,
                              state=args.state, limit=args.limit,
                              marker=args.marker)
        return LIST_COLUMNS, [tuple(a.get(c) for c in LIST_COLUMNS)
                              for a in actions]


class ShowAction(command.ShowOne):
    """Show one action."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('cluster', help='Cluster name or id.')
        parser.add_argument('action', help='Action id.')
        return parser

    def take_action(self, args):
        cluster = common.find_cluster(self.app, args.cluster)
        action = common.call(common.client(self.app).get_action,
                             cluster['id'], args.action)
        return common.show(action, SHOW_COLUMNS)


class ListDecision(command.Lister):
    """List the control loop's decision records of a cluster."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('cluster', help='Cluster name or id.')
        _paging(parser)
        return parser

    def take_action(self, args):
        cluster = common.find_cluster(self.app, args.cluster)
        decisions = common.call(common.client(self.app).list_decisions,
                                cluster['id'], limit=args.limit,
                                marker=args.marker)
        return DECISION_COLUMNS, [tuple(d.get(c) for c in DECISION_COLUMNS)
                                  for d in decisions]
