"""[hostagent] options of elastman-hostagent."""
from oslo_config import cfg

hostagent_group = cfg.OptGroup('hostagent', title='Compute host agent',
                               help='NUMA and memory-bandwidth protection of '
                                    'latency-critical VMs.')

hostagent_opts = [
    cfg.FloatOpt('poll_interval', default=0.02, min=0.001,
                 help='Seconds between two polls of the bandwidth '
                      'controller (20 ms in BALM).'),
]


def register_opts(conf):
    conf.register_group(hostagent_group)
    conf.register_opts(hostagent_opts, group=hostagent_group)


def list_opts():
    return [(hostagent_group, hostagent_opts)]
