"""openstack elastman model show|list and forecast show."""
from __future__ import annotations

from osc_lib.command import command

from elastman.osc.v1 import common

MODEL_COLUMNS = ('scope', 'key', 'version', 'params', 'summary',
                 'created_at', 'document')
FORECAST_COLUMNS = ('metric', 'ts', 'step_s', 'horizon_s', 'predicted',
                    'peak', 'upper', 'quantile', 'forecaster', 'weights')


class ListModel(command.Lister):
    """List the latest capacity model of each flavour and VM."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('cluster', help='Cluster name or id.')
        return parser

    def take_action(self, args):
        cluster = common.find_cluster(self.app, args.cluster)
        models = common.call(common.client(self.app).list_models,
                             cluster['id'])
        cols = MODEL_COLUMNS[:-1]
        return cols, [tuple(m.get(c) for c in cols) for m in models]


class ShowModel(command.ShowOne):
    """Show a capacity model: per flavour (--flavor) or per VM (--node)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('cluster', help='Cluster name or id.')
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument('--flavor', help='The flavour model.')
        which.add_argument('--node', help='The model of one VM (node id).')
        parser.add_argument('--version', type=int,
                            help='A version (default: latest).')
        return parser

    def take_action(self, args):
        cluster = common.find_cluster(self.app, args.cluster)
        scope, key = (('flavor', args.flavor) if args.flavor
                      else ('vm', args.node))
        model = common.call(common.client(self.app).get_model, cluster['id'],
                            scope, key, args.version)
        return common.show(model, MODEL_COLUMNS)


class ShowForecast(command.ShowOne):
    """Show the latest forecast of a workload metric, with weights."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('cluster', help='Cluster name or id.')
        parser.add_argument('--metric', default='reads_per_s',
                            help='Metric (default reads_per_s).')
        return parser

    def take_action(self, args):
        cluster = common.find_cluster(self.app, args.cluster)
        found = common.call(common.client(self.app).list_forecasts,
                            cluster['id'], args.metric, limit=1)
        if not found:
            from osc_lib import exceptions
            raise exceptions.CommandError('no forecast of %s yet'
                                          % args.metric)
        return common.show(found[0], FORECAST_COLUMNS)
