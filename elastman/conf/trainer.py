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
"""[trainer] options of elastman-trainer (defaults of the capacity model)."""
from oslo_config import cfg

from elastman.conf import opts

trainer_group = cfg.OptGroup('trainer', title='Capacity model trainer',
                             help='Defaults of the online SVM capacity '
                                  'model; a scaling policy may override them.')

trainer_opts = [
    cfg.IntOpt('update_period', default=300, min=1,
               help='Seconds between two refits of the capacity models. '
                    'Each cluster refits at its own phase of the period '
                    '(a hash of its id), so that a trainer\'s clusters do '
                    'not all refit in the same round.'),
    opts.round_budget_opt('the update period, at most the monitor\'s '
                          'sampling interval', 'trainer', 'trained'),
    cfg.StrOpt('slo_metric', default='read_p99_ms',
               choices=['read_p50_ms', 'read_p95_ms', 'read_p99_ms',
                        'write_p50_ms', 'write_p95_ms', 'write_p99_ms',
                        'read_with_queue_p99_ms'],
               help='Sample field whose value the SLO bounds. '
                    'read_with_queue_p99_ms adds the wait in the '
                    "node's native-transport queue to the coordinator's "
                    'read latency (Cassandra 4.1+).'),
    cfg.FloatOpt('slo_threshold_ms', default=35.0, min=0.001,
                 help='SLO threshold in milliseconds: a sample meets the SLO '
                      'when its SLO metric is at most this.'),
    cfg.IntOpt('node_warmup', default=0, min=0,
               help='Seconds after a node is registered (its row created) '
                    'during which its samples are not learnt from. A new '
                    "node's first minutes (boot, join, a cold JIT) are slow "
                    'at any load; learnt, they would mark low loads as SLO '
                    'violations until those cells are visited again. '
                    '0: learn from every sample.'),
    cfg.IntOpt('action_settle', default=0, min=0,
               help='Samples taken while a scaling action of the cluster '
                    'runs, and for this many seconds after it ends, are not '
                    'learnt from: data streaming to a joining node, cleanup '
                    'and decommission load every node for a while, and '
                    'learnt, that overhead reads as a lower capacity. '
                    '0: learn from every sample.'),
    cfg.ListOpt('features', default=['read_rate', 'write_rate', 'data_size'],
                help='Feature plug-ins (namespace elastman.features) that '
                     'span the model space, in order.'),
    cfg.StrOpt('interference_feature', default='scale',
               choices=[('scale', 'the index scales the load: a VM under '
                         'index i is learnt as serving (1 + i) times its '
                         'load, and its capacity is 1 / (1 + i) of its '
                         'capacity alone'),
                        ('dimension', 'add interference_index to the '
                         'features of a cluster once its samples carry it '
                         '(Hubbub-Scale\'s third dimension)'),
                        ('never', 'the index is not used')],
               help='How the host agents\' interference index (reported '
                    'for the nodes on their compute hosts) enters the '
                    'capacity model. With scale, every cell is learnt in '
                    'the loads of a VM alone, so the model needs no cells '
                    'taken under interference to answer for it. With '
                    'dimension, the first sample of a cluster that carries '
                    'interference_index adds the feature for good: the '
                    'cluster\'s cells restart once, and from then on a '
                    'sample without the index is not learnt from.'),
    cfg.DictOpt('granularity',
                default={'read_rate': '100', 'write_rate': '100',
                         'data_size': '512', 'interference_index': '0.1'},
                help='Grid cell width per feature, in the feature unit '
                     '(requests/s, bytes, index). Smaller is more precise and '
                     'uses more cells.'),
    cfg.IntOpt('buffer_size', default=10, min=1, max=10000,
               help='Historical buffer: how many recent SLO-metric samples '
                    'a grid cell keeps.'),
    cfg.FloatOpt('confidence', default=0.5, min=0.01, max=1.0,
                 help='A cell is labelled SLO-met when at least this share '
                      'of its buffered samples meets the SLO.'),
    cfg.StrOpt('svm_kernel', default='linear',
               choices=['linear', 'rbf', 'poly'],
               help='SVM kernel; linear is the hyperplane of the original '
                    'design, rbf follows curved boundaries.'),
    cfg.FloatOpt('svm_c', default=10.0, min=1e-6,
                 help='SVM penalty C on misclassified cells. Large enough '
                      'that a few separable cells get the hard-margin '
                      'boundary (midway between the classes); at 1 a '
                      'handful of cells puts it inside the smaller class.'),
    cfg.StrOpt('svm_solver', default='auto',
               choices=['auto', 'libsvm', 'liblinear'],
               help='auto uses liblinear (LinearSVC) for the linear kernel '
                    'and libsvm (SVC) otherwise.'),
    cfg.IntOpt('min_cells', default=20, min=2,
               help='A VM uses its own model once it has this many labelled '
                    'cells of both labels; until then its flavour model.'),
    cfg.FloatOpt('recency_half_life', default=300.0, min=0.0,
                 help='Seconds after which a sample or cell counts half as '
                      'much as a new one (0: all count alike). Lets a model '
                      'follow a capacity change such as a new neighbour.'),
    cfg.FloatOpt('recency_floor', default=0.03, min=0.0, max=1.0,
                 help='The least weight an old met cell keeps in a fit '
                      '(0: it fades like its samples). Violated cells keep '
                      'weight 1 (keep_violated).'),
    cfg.BoolOpt('prune_conflicts', default=True,
                help='Drop a cell that a newer cell contradicts (met at more '
                     'load than a violated cell, or the reverse).'),
    cfg.FloatOpt('cell_max_age', default=0.0, min=0.0,
                 help='Ignore samples older than this many seconds (0: keep '
                      'until the buffer turns over).'),
]


def register_opts(conf):
    opts.register_group(conf, trainer_group, trainer_opts)


def list_opts():
    return [(trainer_group, trainer_opts)]
