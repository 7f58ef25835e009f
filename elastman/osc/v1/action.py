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
"""openstack elastman action list|show."""
from __future__ import annotations

from osc_lib.command import command

from elastman.osc.v1 import common
from elastman.osc.v1 import constants
from elastman.osc.v1 import formatters as fmt


def _row(action: dict, columns: tuple[str, ...]) -> tuple:
    values = {
        'change': fmt.action_change(action),
        'created_at': fmt.when(action.get('created_at')),
        'updated_at': fmt.when(action.get('updated_at')),
        'reason': fmt.Text(action.get('reason')),
        'params': common.JSON(action.get('params')),
        'result': common.JSON(action.get('result')),
    }
    return common.row(action, columns, values)


class ListAction(common.ClusterCommand, command.Lister):
    """List the scaling actions of a cluster, newest first."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--kind', help='Only actions of this kind.')
        parser.add_argument('--state', help='Only actions in this state.')
        common.add_paging(parser)
        return parser

    def take_action(self, args):
        actions = self.on_cluster(args, 'list_actions', kind=args.kind,
                                  state=args.state, limit=args.limit,
                                  marker=args.marker)
        if common.machine(args):
            return common.whole(actions)
        columns = constants.ACTION_COLUMNS
        rows = [_row(a, columns) for a in actions]
        at = columns.index('reason')
        return columns, [row[:at] + (fmt.Narrow(row[at].machine_readable()),)
                         + row[at + 1:] for row in rows]


class ShowAction(common.ClusterCommand, command.ShowOne):
    """Show one action: what it changes, where it is, and how it ended."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('action', help='Action id.')
        return parser

    def take_action(self, args):
        action = self.on_cluster(args, 'get_action', args.action)
        return show_action(args, action)


def show_action(args, action: dict):
    if common.machine(args):
        return common.show(action, tuple(action))
    return constants.ACTION_ROWS, _row(action, constants.ACTION_ROWS)
