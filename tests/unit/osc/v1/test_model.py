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
"""openstack elastman model list|show and forecast show."""
from unittest import mock

import numpy as np

from elastman.capacity import model as model_mod
from elastman.capacity import params as params_mod
from elastman.capacity import serialization
from elastman.osc.v1 import model
from tests.unit.osc.v1 import fakes


def _model_doc():
    """A flavour model fitted on cells labelled by r/4000 + w/2000 <= 1
    at a 1 KiB record size, as the API returns it.
    """
    rng = np.random.default_rng(5)
    x = np.c_[rng.uniform(0, 6000, 600), rng.uniform(0, 3000, 600),
              rng.uniform(900, 1100, 600)]
    y = np.where(x[:, 0] / 4000 + x[:, 1] / 2000 <= 1, 1, -1)
    p = params_mod.ModelParams(granularity={'read_rate': 100,
                                            'write_rate': 100,
                                            'data_size': 512})
    fitted = model_mod.fit(x, y, p, [True, True, False])
    fitted.slo_metric, fitted.slo_threshold_ms = 'read_p99_ms', 35.0
    return {'scope': 'flavor', 'key': 'm1.small', 'version': 7,
            'params': p.to_dict(),
            'summary': {'kind': 'svm', 'n_cells': fitted.n_cells,
                        'registry_version': 3},
            'created_at': '2026-11-24T10:00:00.000Z',
            'document': serialization.model_to_dict(fitted)}


def _client(doc):
    client = mock.Mock()
    client.find_cluster.return_value = fakes.cluster_doc()
    client.get_model.return_value = doc
    client.list_models.return_value = [
        {k: v for k, v in doc.items() if k != 'document'}]
    return client


def test_show_gives_capacity_along_each_ray_and_its_bound():
    doc = _model_doc()
    out = fakes.run(model.ShowModel, _client(doc), 'orders', '--flavor',
                    'm1.small')
    text = fakes.column_text(out, 2)
    reads = next(line for line in out.splitlines() if 'read_rate only' in line)
    writes = next(line for line in out.splitlines()
                  if 'write_rate only' in line)
    # the fitted boundary crosses the read ray near 4,000 ops/s and the
    # write ray near 2,000
    assert 3600 < float(reads.split(': ')[1].split()[0].replace(',', '')) < 4400
    assert 1800 < float(writes.split(': ')[1].split()[0].replace(',', '')) < 2200
    assert 'the SLO boundary' in reads
    assert 'even mix:' in text and 'at data_size' in text
    assert 'read_p99_ms <= 35 ms' in text
    assert 'read_rate, write_rate, data_size' in text
    assert max(len(line) for line in out.splitlines()) <= 120


def test_list_is_short_and_show_json_is_the_whole_record():
    doc = _model_doc()
    out = fakes.run(model.ListModel, _client(doc), 'orders')
    assert out.splitlines()[1].split() == [
        '|', 'scope', '|', 'key', '|', 'version', '|', 'kind', '|', 'cells',
        '|', 'trained_at', '|']
    assert 'm1.small' in out and 'svm' in out
    assert fakes.run_json(model.ShowModel, _client(doc), 'orders',
                          '--flavor', 'm1.small') == doc


def test_forecast_show_summarises_the_steps_and_weights():
    client = mock.Mock()
    client.find_cluster.return_value = fakes.cluster_doc()
    forecast = {'cluster_id': fakes.CLUSTER_ID, 'metric': 'reads_per_s',
                'ts': '2026-11-24T10:00:00.000Z',
                'starts_at': '2026-11-24T09:59:00.000Z', 'horizon_s': 1440,
                'step_s': 60, 'predicted': [1000.0 + 10 * i
                                            for i in range(24)],
                'forecaster': 'arima_110',
                'weights': {'arima_110': 1.0, 'regression_tree': 0.25}}
    client.list_forecasts.return_value = [forecast]
    out = fakes.run(model.ShowForecast, client, 'orders')
    text = fakes.column_text(out, 2)
    assert '24 steps of 60 s: min 1,000, max 1,230; first 1,000, 1,010' in text
    assert 'arima_110 1, regression_tree 0.25' in text
    fields = {line.split('|')[1].strip(): line.split('|')[2].strip()
              for line in out.splitlines() if line.startswith('| ')}
    assert fields['made_at'] == '2026-11-24 10:00:00'
    assert fields['starts_at'] == '2026-11-24 09:59:00'
    assert fakes.run_json(model.ShowForecast, client, 'orders') == forecast
