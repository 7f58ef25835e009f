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
"""Policies side by side on a small ramp: orderings and reproducibility.

Ramp trace (flat 30% for an hour, linear to 100% at 4 h, flat to 6 h), sized
for 10 VMs at the peak, seed 1. Measured when written (violation minutes /
VM-hours): static 0 / 60.0, reactive 0 / 50.6, target 0 / 57.5, oracle 0 /
46.0; with OnlineElastMan's rule elastman-noprediction 126 / 39.0, elastman 146 /
73.9; with ``policies.TUNED`` 81 / 39.6 and 27 / 42.3.
elastman's self-trained model learns the boundary only from violations, so
both elastman variants violate during the ramp; which of the two violates
less depends on the seed, so it is not asserted.
"""
import csv
import os

import pytest

from elastman.evaluation import report as rep
from elastman.evaluation import traces as tr


@pytest.fixture(scope='module')
def rows(tmp_path_factory):
    out = str(tmp_path_factory.mktemp('ramp1'))
    rows = rep.report('ramp', 10, None, 1, out)
    return {r['policy']: r for r in rows}, out


def test_all_policies_and_files(rows):
    by, out = rows
    assert list(by) == ['static', 'reactive', 'target', 'elastman-noprediction',
                        'elastman', 'oracle']
    for f in ('summary.csv', 'utility.csv', 'timeseries.csv', 'actions.csv', 'report.png'):
        assert os.path.getsize(os.path.join(out, f)) > 0


def test_the_timeseries_says_what_each_minute_was_like(rows):
    by, out = rows
    with open(os.path.join(out, 'timeseries.csv')) as f:
        series = list(csv.DictReader(f))
    el = [r for r in series if r['policy'] == 'elastman']
    assert len(el) == 360
    actions = [a for a in csv.DictReader(open(os.path.join(out, 'actions.csv')))
               if a['policy'] == 'elastman']
    # elastman's actions run one at a time: a minute is in flight from the
    # decision until the action is done (joins and cleanup included)
    busy = {m for a in actions for m in range(int(a['minute']) + 1, int(a['done_minute']))}
    assert busy and busy <= {int(r['minute']) for r in el if r['in_flight'] == '1'}
    scale_out = next(a for a in actions if a['kind'] == 'scale_out')
    after = int(scale_out['minute']) + 1
    assert int(el[after]['joining']) == int(scale_out['count'])
    for r in series:
        assert int(r['over_interfered']) <= int(r['vms_over'])
        assert int(r['over_streaming']) <= int(r['vms_over']) <= int(r['serving'])
    # target tracking's actions do not hold a slot
    assert {r['in_flight'] for r in series if r['policy'] == 'target'} == {'0'}
    assert by['elastman']['violation_minutes_in_flight'] <= \
        by['elastman']['violation_minutes']


def test_orderings_on_a_ramp(rows):
    by, _ = rows
    static, oracle = by['static'], by['oracle']
    assert static['violation_minutes'] == 0
    assert oracle['violation_minutes'] == 0
    for name in ('reactive', 'target', 'oracle'):
        assert by[name]['vm_hours'] < static['vm_hours']
    # the oracle is the cheapest of the policies without violations
    assert oracle['vm_hours'] == min(r['vm_hours'] for r in by.values()
                                     if r['violation_minutes'] == 0)
    # the SLO-first bar where target tracking keeps the SLO: at most 1% of
    # the run in violation (its VM-hours bar is not met yet:
    # doc/source/slo-first.rst)
    assert by['target']['violation_pct'] <= 1.0
    assert by['elastman']['violation_pct'] <= 1.0
    assert by['oracle']['vm_hours_vs_oracle'] == pytest.approx(1.0)


def test_utility_grows_with_the_penalty(rows):
    by, out = rows
    lines = open(os.path.join(out, 'utility.csv')).read().splitlines()[1:]
    for name, row in by.items():
        utility = [float(x.split(',')[2]) for x in lines
                   if x.startswith(name + ',')]
        assert utility == sorted(utility)
        assert utility[0] == pytest.approx(row['vm_hours'], abs=0.001)
        # the penalty weighs violation minutes and nothing else
        assert (utility[-1] > utility[0]) == (row['violation_minutes'] > 0)


def test_same_seed_same_bytes(rows, tmp_path):
    _, first = rows
    rep.report('ramp', 10, None, 1, str(tmp_path))
    for f in ('summary.csv', 'utility.csv', 'timeseries.csv', 'actions.csv', 'report.png'):
        with open(os.path.join(first, f), 'rb') as a, open(tmp_path / f, 'rb') as b:
            assert a.read() == b.read(), f


def test_policies_run_in_processes_give_the_same_bytes(rows, tmp_path):
    _, first = rows
    rep.report('ramp', 10, None, 1, str(tmp_path), png=False, jobs=2)
    for f in ('summary.csv', 'utility.csv', 'timeseries.csv', 'actions.csv',
              'policies.txt'):
        with open(os.path.join(first, f), 'rb') as a, open(tmp_path / f, 'rb') as b:
            assert a.read() == b.read(), f


def test_another_seed_differs(rows, tmp_path):
    _, first = rows
    rep.report('ramp', 10, None, 2, str(tmp_path), names=['static', 'oracle'], png=False)
    assert open(tmp_path / 'timeseries.csv').read() != \
        open(os.path.join(first, 'timeseries.csv')).read()


def test_cli_and_subparser(simulate_cli, tmp_path, capsys):
    args = simulate_cli.parse_args(['simulate', '--trace', 'ramp', '--nodes', '6',
                                    '--days', '0.1', '--policies', 'static,target',
                                    '--out', str(tmp_path), '--no-png'])
    assert args.func(args) == 0
    assert 'static' in capsys.readouterr().out
    assert tr.shape('paper').load.max() == pytest.approx(1.0, abs=1e-3)


def _interfered_minutes(cli, out, rate: str, routing: str = 'token') -> float:
    """VM-minutes a static cluster spent over its capacity in an episode."""
    args = cli.parse_args(['simulate', '--trace', 'flash', '--nodes', '12', '--days',
                           '0.1', '--policies', 'static', '--no-png',
                           '--interference-per-day', rate, '--read-routing', routing,
                           '--out', str(out)])
    assert args.func(args) == 0
    with open(out / 'timeseries.csv') as f:
        return sum(float(r['over_interfered']) for r in csv.DictReader(f))


def test_cli_interference_rate(simulate_cli, tmp_path, capsys):
    # without episodes no VM is ever over its capacity for interference
    assert _interfered_minutes(simulate_cli, tmp_path / 'none', '0') == 0
    assert _interfered_minutes(simulate_cli, tmp_path / 'many', '24') > 0
    capsys.readouterr()
    args = simulate_cli.parse_args(['simulate', '--trace', 'flash', '--nodes', '12',
                                    '--interference-per-day', '-1', '--out', str(tmp_path)])
    with pytest.raises(SystemExit, match='--interference-per-day -1: 0 or more'):
        args.func(args)


def test_cli_reads_that_follow_capacity_spare_the_interfered_vms(simulate_cli, tmp_path):
    token = _interfered_minutes(simulate_cli, tmp_path / 'token', '24')
    capacity = _interfered_minutes(simulate_cli, tmp_path / 'capacity', '24', 'capacity')
    assert capacity < token


@pytest.mark.parametrize('extra, message', [
    (['--trace', 'nosuch'], "unknown trace 'nosuch'"),
    (['--policies', 'static,nosuch'], 'unknown policies: nosuch'),
    (['--nodes', '-5'], "--nodes '-5': at least 3 VMs"),
    (['--seed', '-1'], "--seed '-1': 0 or more"),
    (['--seed', '1,2'], "--seed '1,2': one integer (a list only with --sweep)"),
    (['--trace', 'all'], "--trace 'all': one trace (a list or all only with --sweep)"),
    (['--penalties', '1,x'], "--penalties '1,x': comma-separated numbers"),
    (['--days', '0'], '--days 0: more than 0'),
])
def test_cli_bad_input_is_named_before_anything_runs(simulate_cli, tmp_path, extra,
                                                     message):
    out = tmp_path / 'out'
    args = simulate_cli.parse_args(['simulate', '--trace', 'ramp', '--nodes', '6',
                                    '--policies', 'static', '--out', str(out)] + extra)
    with pytest.raises(SystemExit) as exc:
        args.func(args)
    assert str(exc.value).startswith('simulate: ')
    assert message in str(exc.value)
    assert not out.exists()
