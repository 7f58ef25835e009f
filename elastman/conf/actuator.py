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
"""[actuator] options of elastman-actuator."""
from oslo_config import cfg

from elastman.conf import opts

actuator_group = cfg.OptGroup('actuator', title='Elasticity controller',
                              help='Scaling decisions and their execution.')

actuator_opts = [
    cfg.IntOpt('control_period', default=300, min=1,
               help='Seconds between two scaling decisions for a cluster '
                    '(a scaling policy may set its own).'),
    cfg.StrOpt('compute_driver', default='local',
               help='Compute driver that creates and deletes servers: '
                    '"local" (Cassandra processes on this host) or "nova". '
                    'Loaded from the elastman.compute_drivers namespace.'),
    cfg.IntOpt('boot_timeout', default=600, min=10,
               help='Seconds a new server may take to become ACTIVE.'),
    cfg.IntOpt('join_timeout', default=900, min=1,
               help='Seconds a new Cassandra node may take to bootstrap '
                    'and show as UN.'),
    cfg.IntOpt('concurrent_joins', default=1, min=1,
               help='How many new servers of a scale-out bootstrap at '
                    'once. 1 (Cassandra\'s own rule): each server is '
                    'created once the one before it is UN, so a +k takes '
                    'k joins in a row. Above 1: up to this many are '
                    'created together, each given its tokens '
                    '(initial_token: Cassandra\'s token allocation would '
                    'give concurrent nodes the same ones) and started with '
                    'cassandra.consistent.rangemovement=false, so a +k '
                    'takes about one join; a node may then stream a range '
                    'from a replica other than the one giving it up, so a '
                    'write that replica missed is missing on the new node '
                    'until a repair. Needs a compute driver that passes '
                    'the tokens on (local; nova with ${initial_tokens} in '
                    '[nova] user_data_file); otherwise 1 is used and the '
                    'action says why.'),
    cfg.IntOpt('credentials_grace', default=60, min=0,
               help='Seconds a new node may refuse its cluster\'s '
                    'credentials before they count as wrong and the action '
                    'fails (a starting node sets up its roles only after it '
                    'answers).'),
    cfg.IntOpt('decommission_timeout', default=3600, min=10,
               help='Seconds a decommission may take before the action '
                    'fails (the node then stays in the cluster).'),
    cfg.IntOpt('cleanup_timeout', default=3600, min=10,
               help='Seconds "nodetool cleanup" may take on one node.'),
    cfg.IntOpt('delete_timeout', default=300, min=10,
               help='Seconds a deleted server may take to disappear.'),
    cfg.IntOpt('forecast_max_age', default=900, min=10,
               help='Seconds after which a stored forecast is too old to '
                    'act on; the decision then uses the current workload.'),
    cfg.IntOpt('sample_max_age', default=180, min=1,
               help='Seconds after which a node\'s newest sample is too old '
                    'to decide on: the node then counts as unknown (it does '
                    'not block a scale-out, it blocks a scale-in) and the '
                    'latency guard leaves it out. About three monitor '
                    'sampling intervals.'),
    cfg.IntOpt('interference_max_age', default=120, min=1,
               help='Seconds after which a compute host agent\'s '
                    'interference report of a VM is too old to use; the '
                    'VM then counts as free of interference when the '
                    'decision picks which node to remove.'),
    cfg.BoolOpt('live_migrate_on_escalation', default=False,
                help='Carry out the live migration a host agent recommends '
                     'when its escalation ladder runs out (the server it '
                     'names, to a host Nova\'s scheduler picks). Off, the '
                     'recommendation is only recorded with the host\'s '
                     'details, where the hosts API shows it.'),
    opts.round_budget_opt('the control period, at most 30 s', 'actuator',
                          'handled'),
    cfg.IntOpt('workers', default=4, min=1,
               help='Actions (of different clusters) carried out at once.'),
    cfg.IntOpt('backoff_base', default=300, min=0,
               help='Seconds a cluster waits after a failed action before '
                    'the next action of that kind; doubled for each further '
                    'failure in a row with the same failure code '
                    '(no_valid_host, quota, join_timeout, ...), up to '
                    'backoff_max. 0 disables the back-off.'),
    cfg.IntOpt('backoff_max', default=7200, min=0,
               help='Longest back-off after failed actions, in seconds.'),
]


def register_opts(conf):
    opts.register_group(conf, actuator_group, actuator_opts)


def list_opts():
    return [(actuator_group, actuator_opts)]
