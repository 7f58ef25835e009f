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
"""openstack elastman model list|show and forecast show."""
from __future__ import annotations

from osc_lib.command import command
from osc_lib import exceptions

from elastman.osc.v1 import common
from elastman.osc.v1 import constants
from elastman.osc.v1 import formatters as fmt


def _model_row(model: dict, columns: tuple[str, ...]) -> tuple:
    summary = model.get('summary') or {}
    doc = (model.get('document') or {}).get('model') or {}
    values = {
        'kind': doc.get('kind') or summary.get('kind'),
        'cells': fmt.model_cells(model),
        'trained_at': fmt.when(model.get('created_at')),
    }
    if 'capacities' in columns:
        values.update({
            'capacities': fmt.Summary(model.get('document'),
                                      fmt.model_capacities(model)),
            'slo': fmt.model_slo(doc),
            'features': ', '.join(doc.get('features') or ()),
            'train_accuracy': fmt.num(doc.get('train_accuracy')),
            'params': fmt.Summary(model.get('params'), fmt.model_params(
                model.get('params') or {})),
        })
    return common.row(model, columns, values)


class ListModel(common.ClusterCommand, command.Lister):
    """List the latest capacity model of each flavour and VM."""

    def take_action(self, args):
        models = self.on_cluster(args, 'list_models')
        if common.machine(args):
            return common.whole(models)
        columns = constants.MODEL_COLUMNS
        return columns, [_model_row(m, columns) for m in models]


class ShowModel(common.ClusterCommand, command.ShowOne):
    """Show a capacity model, per flavour (--flavor) or per VM (--node):
    its capacity along the read-only, write-only and even rays, and how
    well each is known.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument('--flavor', help='The flavour model.')
        which.add_argument('--node', help='The model of one VM (node id).')
        parser.add_argument('--version', type=int,
                            help='A version (default: latest).')
        return parser

    def take_action(self, args):
        scope, key = (('flavor', args.flavor) if args.flavor
                      else ('vm', args.node))
        model = self.on_cluster(args, 'get_model', scope, key, args.version)
        if common.machine(args):
            return common.show(model, tuple(model))
        return constants.MODEL_ROWS, _model_row(model, constants.MODEL_ROWS)


class ShowForecast(common.ClusterCommand, command.ShowOne):
    """Show the latest forecast of a workload metric, with weights."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--metric', default='reads_per_s',
                            help='Metric (default reads_per_s).')
        return parser

    def take_action(self, args):
        found = self.on_cluster(args, 'list_forecasts', args.metric, limit=1)
        if not found:
            raise exceptions.CommandError('no forecast of %s yet'
                                          % args.metric)
        forecast = found[0]
        if common.machine(args):
            return common.show(forecast, tuple(forecast))
        predicted = forecast.get('predicted') or []
        steps = ('%d steps of %s s: min %s, max %s; first %s' % (
            len(predicted), forecast.get('step_s'),
            fmt.num(min(predicted)), fmt.num(max(predicted)),
            ', '.join(fmt.num(v) for v in predicted[:6]))
            if predicted else 'none')
        weights = sorted((forecast.get('weights') or {}).items(),
                         key=lambda kv: -kv[1])
        values = {
            'made_at': fmt.when(forecast.get('ts')),
            'starts_at': fmt.when(forecast.get('starts_at')),
            'predicted': fmt.Summary(predicted, fmt.Text(steps)
                                     .human_readable()),
            'weights': fmt.Summary(forecast.get('weights'), ', '.join(
                '%s %s' % (name, fmt.num(w)) for name, w in weights)),
        }
        rows = constants.FORECAST_ROWS
        return rows, common.row(forecast, rows, values)
