"""[trainer] options of elastman-trainer (defaults of the capacity model)."""
from oslo_config import cfg

trainer_group = cfg.OptGroup('trainer', title='Capacity model trainer',
                             help='Defaults of the online SVM capacity '
                                  'model; a scaling policy may override them.')

trainer_opts = [
    cfg.IntOpt('update_period', default=300, min=1,
               help='Seconds between two refits of the capacity models.'),
]


def register_opts(conf):
    conf.register_group(trainer_group)
    conf.register_opts(trainer_opts, group=trainer_group)


def list_opts():
    return [(trainer_group, trainer_opts)]
