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
"""openstack elastman decision list|show: readable in 120 columns, whole
records with -f json.
"""
from unittest import mock

from osc_lib import exceptions
import pytest

from elastman.osc.v1 import decision
from tests.unit.osc.v1 import fakes


def _client(*decisions):
    client = mock.Mock()
    client.find_cluster.return_value = fakes.cluster_doc()
    client.list_decisions.return_value = list(decisions)
    client.iter_decisions.side_effect = lambda cid: iter(decisions)
    return client


def test_list_fits_120_columns_and_every_reason_word_is_shown():
    decisions = [fakes.decision_doc(),
                 fakes.decision_doc('2026-11-24T10:14:00.000Z', 'none',
                                    'no action: every VM under capacity, '
                                    'spare 0.40 VMs within beta=0.5'),
                 fakes.decision_doc('2026-11-24T10:13:00.000Z', 'scale_in',
                                    'scale in by 1 of m1.small: no VM over '
                                    'capacity', dry_run=True)]
    out = fakes.run(decision.ListDecision, _client(*decisions), 'orders')
    assert max(len(line) for line in out.splitlines()) <= 120, out
    assert out.splitlines()[1].split() == ['|', 'time', '|', 'decision', '|',
                                           'nodes', '|', 'reason', '|']
    reasons = fakes.column_text(out, 4)
    for reason in (fakes.LONG_REASON, 'spare 0.40 VMs within beta=0.5',
                   '[dry run, not carried out] scale in by 1'):
        assert reasons.count(' '.join(reason.split())) == 1, reasons
    assert fakes.column_text(out, 3).split() == ['3->4', '3', '3->2']


def test_list_json_is_the_whole_record():
    doc = fakes.decision_doc()
    out = fakes.run_json(decision.ListDecision, _client(doc), 'orders')
    assert out == [doc]


def test_show_summarises_capacities_bounds_and_the_reason():
    out = fakes.run(decision.ShowDecision, _client(fakes.decision_doc()),
                    'orders')
    text = fakes.column_text(out, 2)
    assert 'add 1 node(s) of flavour m1.small' in text
    assert '3 serving; bounds 3..4; alpha 1.0, beta 0.5, headroom 0.2' in text
    assert ('node-a (m1.small): load 1,840 of capacity 1,900 [exact] '
            '(target 1,520), over, (w-t)/t +0.21') in text
    assert ('node-c (m1.small): load 900 of capacity 1,300 [lower] '
            '(target 1,040), ok') in text
    assert ('reads_per_s: planned for 3,300, observed 3,100 (forecast '
            '3,300 by arima_110)') in text
    assert 'm1.small: 3 VMs, 2 over, 0 uncertain, 0 unknown; sum of ' \
           'terms +0.33; wants +1 / -0' in text
    assert 'forecast of writes_per_s is 900 s old' in text
    assert ' '.join(fakes.LONG_REASON.split()) in text
    assert max(len(line) for line in out.splitlines()) <= 120


def test_show_by_time_prefix_and_json():
    older = fakes.decision_doc('2026-11-24T10:13:00.000Z', 'none',
                               'no action: cool-down')
    client = _client(fakes.decision_doc(), older)
    out = fakes.run_json(decision.ShowDecision, client, 'orders',
                         '2026-11-24 10:13')
    assert out == older
    with pytest.raises(exceptions.CommandError, match='no decision at 2025'):
        fakes.run(decision.ShowDecision, client, 'orders', '2025')


@pytest.mark.parametrize('field, kind, words', [
    ('trim_of', 'trim', 'create 1 node(s) of flavour m1.small fewer in the '
                        'scale-out in flight a1'),
    ('top_up_of', 'scale_out', 'add 1 node(s) of flavour m1.small to the '
                               'scale-out in flight a1'),
])
def test_show_names_the_scale_out_in_flight_a_change_is_for(field, kind, words):
    doc = fakes.decision_doc(kind=kind)
    doc['record'].update({field: 'a1', 'count': 1})
    out = fakes.run(decision.ShowDecision, _client(doc), 'orders')
    assert words in ' '.join(fakes.column_text(out, 2).split())


def test_show_names_the_nodes_a_scale_in_in_flight_keeps():
    doc = fakes.decision_doc(kind='trim')
    doc['record'].update({'trim_of': 'a1', 'count': 2, 'keep_nodes': ['n8', 'n9']})
    out = fakes.run(decision.ShowDecision, _client(doc), 'orders')
    assert 'keep n8, n9, which the scale-in in flight a1 has not begun to remove' in \
        ' '.join(fakes.column_text(out, 2).split())


def test_show_names_the_scale_in_band_while_it_holds():
    doc = fakes.decision_doc()
    doc['record']['inputs']['scale_in_headroom'] = 0.5
    text = fakes.column_text(fakes.run(decision.ShowDecision, _client(doc),
                                       'orders'), 2)
    assert 'headroom 0.2; scale-in band 0.5' in text
    doc['record']['inputs']['scale_in_headroom'] = 0.0    # lapsed: not shown
    text = fakes.column_text(fakes.run(decision.ShowDecision, _client(doc),
                                       'orders'), 2)
    assert 'scale-in band' not in text
