"""[monitor] options of elastman-monitor."""
from oslo_config import cfg

monitor_group = cfg.OptGroup('monitor', title='Monitor options',
                             help='How elastman samples managed Cassandra '
                                  'nodes.')

monitor_opts = [
    cfg.IntOpt('sampling_interval', default=60, min=1,
               help='Seconds between two workload/latency samples of a node.'),
]


def register_opts(conf):
    conf.register_group(monitor_group)
    conf.register_opts(monitor_opts, group=monitor_group)


def list_opts():
    return [(monitor_group, monitor_opts)]
