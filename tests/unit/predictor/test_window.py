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
import math

from elastman.predictor import window as window_mod


def _rows(stamps, base=0.0):
    return [{'reads_per_s': base + t, 'writes_per_s': None} for t in stamps]


def test_a_window_reads_from_its_newest_row_less_the_overlap():
    w = window_mod.WorkloadWindow(('reads_per_s', 'writes_per_s'))
    assert w.read_from(start=100.0, overlap=180.0) == 100.0     # empty
    w.merge(100.0, [100.0, 160.0, 220.0], _rows([100.0, 160.0, 220.0]), 100.0)
    assert w.read_from(start=100.0, overlap=60.0) == 160.0
    assert w.read_from(start=100.0, overlap=600.0) == 100.0     # window start
    assert math.isnan(w.values['writes_per_s'][0])


def test_rows_read_again_replace_those_kept_and_late_rows_fill_in():
    w = window_mod.WorkloadWindow(('reads_per_s',))
    w.merge(0.0, [0.0, 60.0, 180.0], _rows([0.0, 60.0, 180.0]), 0.0)
    # the next read from 60 s: 60 s again (a new value), the late row at
    # 120 s, 180 s again and a new one at 240 s
    w.merge(60.0, [60.0, 120.0, 180.0, 240.0],
            _rows([60.0, 120.0, 180.0, 240.0], base=1000.0), 0.0)
    assert w.ts.tolist() == [0.0, 60.0, 120.0, 180.0, 240.0]
    assert w.values['reads_per_s'].tolist() == [0.0, 1060.0, 1120.0, 1180.0,
                                                1240.0]


def test_rows_before_the_window_start_are_dropped():
    w = window_mod.WorkloadWindow(('reads_per_s',))
    w.merge(0.0, [0.0, 60.0, 120.0], _rows([0.0, 60.0, 120.0]), 0.0)
    w.merge(120.0, [120.0, 180.0], _rows([120.0, 180.0]), 100.0)
    assert w.ts.tolist() == [120.0, 180.0]
    assert len(w) == 2
