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
"""[predictor] options of elastman-predictor."""

from oslo_config import cfg

from elastman.conf import opts

predictor_group = cfg.OptGroup(
    'predictor',
    title='Workload predictor',
    help='Forecasting of cluster workload.',
)

FORECASTERS = [
    'regression_tree',
    'arima_100',
    'arima_110',
    'arima_011',
    'arima_200',
    'arima_010',
    'holt_winters',
]
#: The combination a new deployment uses: the one that measured best
#: (doc/source/prediction.rst, "Measured accuracy").
DEFAULT_SELECTION = 'switch'

predictor_opts = [
    cfg.IntOpt(
        'period',
        default=60,
        min=1,
        help='Seconds between two forecasting rounds.  A round forecasts '
        'each cluster whose newest bucket of [predictor] step seconds '
        'has closed since its last forecast.',
    ),
    cfg.IntOpt(
        'step',
        default=300,
        min=0,
        help='Seconds of load each point of a forecast series averages: '
        'the length of one forecast step.  The default is the actuator\'s '
        'default control period: each cluster\'s buckets end one '
        '[predictor] period before its planning phase of the control '
        'period, so the planning loop plans on a forecast of '
        'control-period means at most a round or two old, which the '
        'simulator measured better than a forecast of one-minute points '
        '(doc/source/slo-first.rst, "The same code in the simulator").  '
        'It should equal the clusters\' control_period_s.  0: one point '
        'per round ([predictor] period), each bucket ending at the round.',
    ),
    opts.round_budget_opt('the period', 'predictor', 'forecast'),
    cfg.ListOpt(
        'forecasters',
        default=FORECASTERS,
        help='Forecaster plug-ins (entry points of the '
        'elastman.forecasters namespace) in the ensemble, in '
        'tie-break order.',
    ),
    cfg.StrOpt(
        'selection',
        default=DEFAULT_SELECTION,
        choices=['majority', 'average', 'mean', 'median', 'select', 'hedge',
                 'switch'],
        help='How the ensemble combines its forecasters: "majority" returns '
        'the forecast of the forecaster with the highest weight '
        '(OnlineElastMan\'s weighted majority), "average" the '
        'weight-averaged forecast; "mean" and "median" those of all '
        'forecasters; "select" follows, per lead, the forecaster or '
        'combination with the lowest recent error; "hedge" weights them by '
        'exp(-eta x recent error); "switch" follows, per lead, hedge or the '
        'forecaster or combination with the lowest long-run error.',
    ),
    cfg.FloatOpt(
        'discount',
        default=0.8,
        min=0.01,
        max=1.0,
        help='"select", "hedge" and the hedge inside "switch": factor '
        'applied to the recent errors '
        'at each new point (a memory of about 1 / (1 - discount) points).',
    ),
    cfg.FloatOpt(
        'eta',
        default=20.0,
        min=0.0,
        help='"hedge" (and the hedge inside "switch"): learning rate, per '
        'unit of discounted relative error.',
    ),
    cfg.FloatOpt(
        'relative_eta',
        default=0.0,
        min=0.0,
        help='"hedge" (and the hedge inside "switch"): when above 0, the '
        'learning rate per unit of a '
        'candidate\'s excess error over the best candidate\'s, relative to '
        'the best\'s: weights exp(-relative_eta x (error - best) / best), '
        'which do not depend on how large the errors of a series are. It '
        'replaces eta; 0 keeps eta.',
    ),
    cfg.FloatOpt(
        'switch_discount',
        default=0.99,
        min=0.01,
        max=1.0,
        help='"switch": factor applied at each new point to the long-run '
        'errors by which it chooses between hedge and each single '
        'forecaster (a memory of about 1 / (1 - switch_discount) points).',
    ),
    cfg.FloatOpt(
        'switch_min_rounds',
        default=30.0,
        min=0.0,
        help='"switch": the (discounted) number of rounds a candidate\'s '
        'point forecast must have been scored at a lead before it may '
        'replace hedge\'s there; until then hedge answers. The peak has '
        'no such minimum.',
    ),
    cfg.FloatOpt(
        'tolerance',
        default=0.05,
        min=0.0,
        help='Relative error (|predicted - actual| / actual) above '
        'which a forecaster is penalised, unless its error is also within '
        'this fraction of the best forecaster\'s error of the round.',
    ),
    cfg.FloatOpt(
        'penalty',
        default=0.3,
        min=0.0,
        max=0.999999,
        help='Factor m (0 <= m < 1) by which the weight of a '
        'forecaster that missed by more than the tolerance is '
        'multiplied.',
    ),
    cfg.FloatOpt(
        'weight_floor',
        default=0.05,
        min=0.0,
        max=1.0,
        help='Smallest weight a forecaster keeps, relative to the '
        'heaviest one after renormalisation, so it can be chosen '
        'again soon after the workload changes shape.',
    ),
    cfg.FloatOpt(
        'quantile',
        default=0.9,
        min=0.5,
        max=0.999,
        help='Level of the upper bound each forecast carries: the bound '
        'on the highest value within each lead is learnt online so that '
        'the actual peak stays below it in this fraction of the rounds.  '
        'A scaling policy with plan_on=quantile plans on it.',
    ),
    cfg.FloatOpt(
        'quantile_gamma',
        default=0.02,
        min=0.0,
        max=0.5,
        help='Step of the online adaptation of the upper bound\'s level '
        '(Adaptive Conformal Inference): after each matured forecast the '
        'level rises by quantile_gamma x quantile when the actual peak '
        'exceeded the bound given with the forecast, and falls by '
        'quantile_gamma x (1 - quantile) otherwise.  0 keeps the level at '
        'quantile.  Larger values correct a bias within fewer rounds and '
        'make the bound noisier.',
    ),
    cfg.IntOpt(
        'history_window',
        default=4032,
        min=10,
        help='Points of history kept per cluster and metric (a sliding '
        'window: the cost of a round does not grow with the age of '
        'the cluster).  Two weeks at the default step of 300 s; 2.8 '
        'days at one of 60 s.',
    ),
    cfg.IntOpt(
        'horizon',
        default=10,
        min=1,
        help='Least number of steps a forecast has.  The predictor '
        'forecasts more steps when the next control period, '
        '[actuator] join_timeout, one step and one period need them: '
        'the actuator plans on a forecast up to a step and a round '
        'after its newest bucket closed.',
    ),
    cfg.IntOpt(
        'refit_interval',
        default=10,
        min=1,
        help='Rounds between two full re-estimations of a forecaster\'s '
        'parameters; in between it only re-filters the new '
        'window with the parameters it has.',
    ),
    cfg.IntOpt(
        'blas_threads',
        default=1,
        min=0,
        help='Threads of the BLAS library (OpenBLAS, MKL) in the process '
        'that runs the predictor (every worker of it, when one process '
        'runs several), set when the predictor starts (threadpoolctl); 0 '
        'leaves the library\'s default, one per core.  The forecasters\' '
        'matrices are small: more threads only spin, which more than '
        'doubled the CPU time of full estimations on a 2-core machine.',
    ),
    cfg.ListOpt(
        'seasonal_periods',
        item_type=cfg.types.Integer(min=1),
        default=[86400, 604800],
        help='Season lengths in seconds (daily, weekly) seasonal '
        'forecasters look for; a season is used once the history '
        'holds two full cycles of it.',
    ),
]


def register_opts(conf):
    opts.register_group(conf, predictor_group, predictor_opts)


def list_opts():
    return [(predictor_group, predictor_opts)]
