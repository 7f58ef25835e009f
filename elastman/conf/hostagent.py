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
"""[hostagent] options of elastman-hostagent."""
from oslo_config import cfg

from elastman.conf import opts

hostagent_group = cfg.OptGroup('hostagent', title='Compute host agent',
                               help='NUMA and memory-bandwidth protection of '
                                    'latency-critical VMs.')

hostagent_opts = [
    # controller timing (BALM)
    cfg.FloatOpt('poll_interval', default=0.02, min=0.001,
                 help='Seconds between two polls of the bandwidth '
                      'controller (20 ms in BALM).'),
    cfg.FloatOpt('window', default=3.0, min=0.02,
                 help='Seconds of latency samples over which the SLO colour '
                      'is evaluated (3 s in BALM). Samples older than the '
                      'last reconfiguration are dropped, so that a step is '
                      'judged by what happened after it.'),
    cfg.FloatOpt('window_percentile', default=95.0, min=1, max=100,
                 help='Percentile of the per-poll latency samples in the '
                      'window compared with the SLO.'),
    cfg.FloatOpt('settle_time', default=0.1, min=0.0,
                 help='Seconds to wait after an MBA step or a page batch '
                      'before judging its effect.'),
    cfg.IntOpt('min_samples', default=3, min=1,
               help='Samples needed in the window before a colour is '
                    'trusted.'),
    cfg.FloatOpt('yellow_threshold', default=0.05, min=0.0, max=1.0,
                 help='Yellow when the latency is within this fraction '
                      'below the SLO (5% in BALM).'),
    cfg.FloatOpt('green_threshold', default=0.20, min=0.0, max=1.0,
                 help='Green when the latency is at least this fraction '
                      'below the SLO (20% in BALM); grey in between.'),
    cfg.FloatOpt('default_slo_ms', default=35.0, min=0.001,
                 help='SLO (p99 read latency, ms) of a latency-critical VM '
                      'whose flavour does not set elastman:slo_ms.'),
    # actuation
    cfg.StrOpt('mode', default='ladder',
               choices=[('ladder', 'every rung of the escalation ladder in '
                         'cost order: MBA, CPU quota, vCPU re-pin, page '
                         'migration, a live-migration recommendation'),
                        ('balm', 'BALM as published: MBA and page migration'),
                        ('mba', 'MBA only (BALM\'s baseline)'),
                        ('pgm', 'page migration only (BALM\'s baseline)'),
                        ('off', 'no controller actions')],
               help='What the bandwidth controller may do to best-effort '
                    'VMs when a latency-critical VM is in danger.'),
    cfg.ListOpt('ladder', default=['mba', 'cpu_quota', 'vcpu_pin',
                                   'page_migration', 'live_migration'],
                help='With mode = ladder: the rungs the controller may use '
                     '(they are always tried cheapest first; a rung the '
                     'host lacks, such as MBA without resctrl, is skipped).'),
    cfg.FloatOpt('cpu_quota_min', default=0.1, min=0.01, max=1.0,
                 help='Lowest CPU quota of a best-effort VM, as a fraction '
                      'of the quota it was placed with.'),
    cfg.FloatOpt('cpu_quota_step', default=0.1, min=0.01, max=1.0,
                 help='CPU quota increment of one hill-climbing step (a '
                      'fraction of the placement quota).'),
    cfg.FloatOpt('page_reclaim_holdoff', default=60.0, min=0.0,
                 help='Seconds of uninterrupted green before pages moved '
                      'off a victim node go back towards their BWAP weights '
                      '(the ladder waits longer for its most expensive '
                      'undo than for releasing a throttle; mode balm uses '
                      'reclaim_holdoff for both).'),
    # adaptive CPU allocation (Guo's thesis, Table 4.2 defaults)
    cfg.StrOpt('cpu_allocation', default='adaptive',
               choices=[('adaptive', 'best-effort VMs get, every '
                         'cpu_interval, the cores the latency-critical VMs '
                         'of their NUMA node do not need (priority policy); '
                         'each VM\'s request comes from its UIPT (best '
                         'effort) or its SLO colour (latency critical)'),
                        ('fixed', 'the quotas set at placement stay')],
               help='How CPU is shared between latency-critical and '
                    'best-effort VMs.'),
    cfg.StrOpt('cpu_algorithm', default='hill_climbing',
               choices=['hill_climbing', 'fuzzy'],
               help='Inner controller of a best-effort VM\'s CPU request.'),
    cfg.FloatOpt('cpu_interval', default=1.0, min=0.1,
                 help='Measurement interval of the CPU allocation, seconds '
                      '(1 s in Table 4.2).'),
    cfg.IntOpt('mba_min', default=10, min=1, max=100,
               help='Most restrictive MBA level (percent) of phase 1; '
                    'raised to the hardware minimum when resctrl reports '
                    'a higher one.'),
    cfg.IntOpt('mba_step', default=10, min=1, max=100,
               help='MBA increment of one hill-climbing step (percent); '
                    'rounded up to the hardware granularity.'),
    cfg.IntOpt('max_retries', default=3, min=0,
               help='Rounds that end red before the controller escalates '
                    '(MAXRETRIES in BALM).'),
    cfg.IntOpt('migration_batch_mb', default=256, min=1,
               help='MiB of guest memory moved by one page-migration batch; '
                    'the colour is checked between batches.'),
    cfg.FloatOpt('reclaim_holdoff', default=10.0, min=0.0,
                 help='Seconds of uninterrupted green before pages of a '
                      'best-effort VM are moved back towards its BWAP '
                      'weights, or MBA is raised again.'),
    cfg.FloatOpt('escalation_interval', default=30.0, min=0.0,
                 help='Minimum seconds between two escalations to the '
                      'actuator for the same host.'),
    cfg.FloatOpt('request_percentile', default=99.0, min=1, max=100,
                 help='With the jmx probe: percentile of all the reads that '
                      'completed in the window compared with the SLO (the '
                      'SLO metric is a p99).'),
    cfg.StrOpt('probe', default='jmx',
               choices=[('jmx', 'the guest\'s Cassandra read-latency '
                         'histogram over JMX every poll_interval, for VMs '
                         'whose JMX endpoint is known (pushed by the monitor, '
                         'in the domain metadata or in jmx_endpoints); the '
                         'monitor\'s pushed p99 for the others'),
                        ('bus', 'only the p99 the monitor casts once per '
                         'sampling interval (too slow for a 3 s window)'),
                        ('local', 'local_probe_command per VM and poll'),
                        ('none', 'no samples: the controller stays idle')],
               help='Where the latency samples of latency-critical VMs come '
                    'from.'),
    cfg.DictOpt('jmx_endpoints', default={},
                help='JMX endpoint (host:port) of the Cassandra node in a '
                     'latency-critical domain, by domain UUID or name, for '
                     'domains whose endpoint neither the monitor nor the '
                     'domain metadata gives.'),
    cfg.StrOpt('jmx_user', default=None,
               help='JMX user of the guests\' Cassandra nodes (when JMX '
                    'authentication is on).'),
    cfg.StrOpt('jmx_password', default=None, secret=True,
               help='Password of jmx_user.'),
    cfg.StrOpt('java', default='java',
               help='Java runtime (17 or newer) that runs the JMX latency '
                    'poller.'),
    cfg.StrOpt('local_probe_command', default=None,
               help='For probe=local: command run per latency-critical VM '
                    'with {uuid} and {name} substituted; it prints a p99 '
                    'latency in ms.'),
    # host integration
    cfg.StrOpt('state_dir', default='/var/lib/elastman/hostagent',
               help='The only directory, besides resctrl, the agent writes '
                    'to: socket, logs, domain cache.'),
    cfg.StrOpt('socket_path', default=None,
               help='Unix datagram socket the libvirt hook sends events to '
                    '(default: <state_dir>/hook.sock). The hook is '
                    'installed with the same path.'),
    cfg.StrOpt('libvirt_uri', default='qemu:///system',
               help='libvirt connection URI.'),
    cfg.StrOpt('resctrl_root', default='/sys/fs/resctrl',
               help='Mount point of the resctrl file system.'),
    cfg.StrOpt('sysfs_root', default='/sys',
               help='Root of sysfs (for the NUMA topology).'),
    cfg.BoolOpt('apply_placement', default=True,
                help='Pin and place domains when they start.'),
    cfg.BoolOpt('controller_enabled', default=True,
                help='Run the BALM bandwidth controller.'),
    cfg.IntOpt('lc_vcpu_quota', default=-1,
               help='vcpu_quota (microseconds per vcpu_period) for '
                    'latency-critical VMs; -1 leaves it unlimited.'),
    cfg.IntOpt('be_vcpu_quota', default=50000,
               help='vcpu_quota for best-effort VMs (per 100 ms period); '
                    '-1 for unlimited.'),
    cfg.FloatOpt('report_interval', default=10.0, min=0.1,
                 help='Seconds between two interference reports.'),
]


def register_opts(conf):
    opts.register_group(conf, hostagent_group, hostagent_opts)


def list_opts():
    return [(hostagent_group, hostagent_opts)]
