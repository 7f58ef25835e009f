"""[predictor] options of elastman-predictor."""
from oslo_config import cfg

predictor_group = cfg.OptGroup('predictor', title='Workload predictor',
                               help='Forecasting of cluster workload.')

predictor_opts = [
    cfg.IntOpt('period', default=60, min=1,
               help='Seconds between two forecasting rounds.'),
]


def register_opts(conf):
    conf.register_group(predictor_group)
    conf.register_opts(predictor_opts, group=predictor_group)


def list_opts():
    return [(predictor_group, predictor_opts)]
