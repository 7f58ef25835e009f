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
"""openstack elastman policy set|show|unset."""
from __future__ import annotations

import json

from osc_lib.command import command
from osc_lib import exceptions

from elastman.client import client as em_client
from elastman.common import assignments
from elastman.osc.v1 import common

# option -> (policy field, type)
_OPTIONS = (('--slo-metric', 'slo_metric', str),
            ('--slo-threshold', 'slo_threshold_ms', float),
            ('--min-size', 'min_size', int),
            ('--max-size', 'max_size', int),
            ('--alpha', 'alpha', float),
            ('--beta', 'beta', float),
            ('--control-period', 'control_period_s', int),
            ('--cooldown', 'cooldown_s', int),
            ('--heal-grace', 'heal_grace_s', int))


def _show(policy: dict):
    """Every field of the policy, structures as JSON."""
    return tuple(policy), tuple(
        common.JSON(v) if isinstance(v, (dict, list)) else v
        for v in policy.values())


class ShowPolicy(common.ClusterCommand, command.ShowOne):
    """Show the scaling policy of a cluster."""

    def take_action(self, args):
        return _show(self.on_cluster(args, 'get_policy'))


class SetPolicy(common.ClusterCommand, command.ShowOne):
    """Set scaling policy fields (others keep their current value)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        for option, field, kind in _OPTIONS:
            parser.add_argument(option, dest=field, type=kind,
                                help='Policy field %s.' % field)
        parser.add_argument('--flavor', action='append', dest='flavors',
                            help='Flavour scaling may use (repeat).')
        dry = parser.add_mutually_exclusive_group()
        dry.add_argument('--dry-run', dest='dry_run', action='store_true',
                         default=None, help='Decide but do not act.')
        dry.add_argument('--no-dry-run', dest='dry_run',
                         action='store_false', help='Decide and act.')
        heal = parser.add_mutually_exclusive_group()
        heal.add_argument('--auto-heal', dest='auto_heal',
                          action='store_true', default=None,
                          help='Replace a DEAD node once --heal-grace '
                               'seconds passed.')
        heal.add_argument('--no-auto-heal', dest='auto_heal',
                          action='store_false',
                          help='Only recommend replacing a DEAD node.')
        parser.add_argument('--set', action='append', default=[],
                            dest='fields', metavar='<field>=<value>',
                            help='Any policy field, e.g. headroom=0.3 or '
                                 'guard=false (the value is JSON; a bare '
                                 'word is a string); repeat for several. '
                                 'The API checks the field and its range.')
        parser.add_argument('--model', metavar='<json>',
                            help='Capacity model parameters as JSON, e.g. '
                                 '\'{"confidence": 0.5}\'.')
        return parser

    def take_action(self, args):
        client = common.client(self.app)
        cluster = self.cluster(args)
        try:
            policy = client.get_policy(cluster['id'])
        except em_client.ClientError as exc:
            if exc.code != 404:
                raise exceptions.CommandError(str(exc))
            policy = {}
        for _option, field, _kind in _OPTIONS:
            if getattr(args, field) is not None:
                policy[field] = getattr(args, field)
        if args.flavors is not None:
            policy['flavors'] = args.flavors
        if args.dry_run is not None:
            policy['dry_run'] = args.dry_run
        if args.auto_heal is not None:
            policy['auto_heal'] = args.auto_heal
        try:
            policy.update(assignments.parse(args.fields, '<field>=<value>'))
        except ValueError as exc:
            raise exceptions.CommandError(str(exc))
        if args.model is not None:
            try:
                policy['model'] = json.loads(args.model)
            except ValueError as exc:
                raise exceptions.CommandError('--model: %s' % exc)
        policy = common.call(client.set_policy, cluster['id'], policy)
        return _show(policy)


class UnsetPolicy(common.ClusterCommand, command.Command):
    """Remove the scaling policy (the cluster is no longer scaled)."""

    def take_action(self, args):
        self.on_cluster(args, 'delete_policy')
