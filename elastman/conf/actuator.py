"""[actuator] options of elastman-actuator."""
from oslo_config import cfg

actuator_group = cfg.OptGroup('actuator', title='Elasticity controller',
                              help='Scaling decisions and their execution.')

actuator_opts = [
    cfg.IntOpt('control_period', default=300, min=1,
               help='Seconds between two scaling decisions for a cluster.'),
]


def register_opts(conf):
    conf.register_group(actuator_group)
    conf.register_opts(actuator_opts, group=actuator_group)


def list_opts():
    return [(actuator_group, actuator_opts)]
