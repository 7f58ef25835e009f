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
"""The columns each OSC command shows: short ones in lists, everything
that matters to a person in ``show`` (``-f json`` gives the whole record).
"""

CLUSTER_COLUMNS = ('id', 'name', 'state', 'mode', 'size', 'flavor')
CLUSTER_ROWS = ('id', 'name', 'project_id', 'state', 'mode', 'flavor',
                'image', 'size', 'endpoints', 'nodes', 'policy', 'security',
                'doing', 'last_decision', 'health', 'created_at',
                'updated_at')

ACTION_COLUMNS = ('id', 'kind', 'state', 'change', 'reason', 'created_at')
ACTION_ROWS = ('id', 'cluster_id', 'kind', 'state', 'step', 'change',
               'params', 'result', 'reason', 'created_at', 'updated_at')

DECISION_COLUMNS = ('time', 'decision', 'nodes', 'reason')
DECISION_ROWS = ('time', 'decision', 'reason', 'change', 'nodes',
                 'workload', 'capacities', 'flavors', 'blocked_by', 'notes',
                 'model_versions')

MODEL_COLUMNS = ('scope', 'key', 'version', 'kind', 'cells', 'trained_at')
MODEL_ROWS = ('scope', 'key', 'version', 'kind', 'cells', 'capacities',
              'slo', 'features', 'train_accuracy', 'params', 'trained_at')

FORECAST_ROWS = ('metric', 'made_at', 'starts_at', 'step_s', 'horizon_s',
                 'predicted', 'peak', 'upper', 'quantile',
                 'forecaster', 'weights')
