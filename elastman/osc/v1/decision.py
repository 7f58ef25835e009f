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
"""openstack elastman decision list|show: what the control loop decided,
and why.
"""
from __future__ import annotations

from osc_lib.command import command
from osc_lib import exceptions

from elastman.client import client as em_client
from elastman.osc.v1 import common
from elastman.osc.v1 import constants
from elastman.osc.v1 import formatters as fmt

#: Decisions read at most when ``decision show`` looks for a time.
SEARCH_LIMIT = 5000


def _row(decision: dict, columns: tuple[str, ...]) -> tuple:
    record = decision.get('record') or {}
    inputs = record.get('inputs') or {}
    values = {
        'time': fmt.when(decision.get('ts')),
        'decision': decision.get('action'),
        'nodes': fmt.decision_nodes(decision),
        'reason': fmt.Reason(fmt.decision_reason(decision)),
    }
    if len(columns) > len(constants.DECISION_COLUMNS):
        values.update({
            'reason': fmt.Text(fmt.decision_reason(decision)),
            'change': fmt.decision_change(record),
            'nodes': fmt.decision_bounds(record),
            'workload': fmt.Summary(inputs.get('predicted_cluster'),
                                    fmt.decision_workload(record)),
            'capacities': fmt.Summary(record.get('vms'),
                                      fmt.decision_capacities(record)),
            'flavors': fmt.Summary(record.get('flavors'),
                                   fmt.decision_flavors(record)),
            'blocked_by': record.get('blocked_by') or '',
            'notes': fmt.Summary(record.get('notes'),
                                 record.get('notes') or ()),
            'model_versions': common.JSON(inputs.get('model_versions')),
        })
    return tuple(values[c] for c in columns)


class ListDecision(common.ClusterCommand, command.Lister):
    """List the control loop's decisions on a cluster, newest first."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        common.add_paging(parser, default_limit=20)
        return parser

    def take_action(self, args):
        decisions = self.on_cluster(args, 'list_decisions', limit=args.limit,
                                    marker=args.marker)
        if common.machine(args):
            return common.whole(decisions)
        columns = constants.DECISION_COLUMNS
        return columns, [_row(d, columns) for d in decisions]


class ShowDecision(common.ClusterCommand, command.ShowOne):
    """Show one decision (the latest by default): the reason, the bounds,
    the workload planned for and each VM's capacity.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('time', nargs='?',
                            help='Its time as decision list shows it, or a '
                                 'prefix of it (default: the latest).')
        return parser

    def take_action(self, args):
        decision = find_decision(common.client(self.app),
                                 self.cluster(args)['id'], args.time)
        if common.machine(args):
            return common.show(decision, tuple(decision))
        return constants.DECISION_ROWS, _row(decision,
                                             constants.DECISION_ROWS)


def find_decision(client, cluster_id: str, when: str | None) -> dict:
    """The latest decision, or the newest whose time starts with ``when``
    among the latest ``SEARCH_LIMIT``.
    """
    wanted = None if when is None else when.replace('T', ' ')
    try:
        for i, decision in enumerate(client.iter_decisions(cluster_id)):
            if wanted is None or fmt.when(decision.get('ts')).startswith(
                    wanted):
                return decision
            if i + 1 >= SEARCH_LIMIT:
                break
    except em_client.ClientError as exc:
        raise exceptions.CommandError(str(exc))
    raise exceptions.CommandError(
        'no decision %sin cluster %s' % ('at %s ' % when if when else '',
                                         cluster_id))
