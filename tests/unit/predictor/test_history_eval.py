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
"""History cleaning, the forecast-eval command and its plot."""

import argparse
import csv
import json

import numpy as np
import pytest

from elastman.conf import predictor as pconf
from elastman.predictor import ensemble as ens
from elastman.predictor import evaluate
from elastman.predictor import history


def test_clean_interpolates_and_trims():
    out = history.clean(
        [None, np.nan, 1.0, np.nan, 3.0, float('inf'), -2.0, np.nan]
    )
    assert out.tolist() == [
        1.0,
        2.0,
        3.0,
        0.5,
        0.0,
        0.0,
    ]  # interpolated, then clipped


def test_regularise_buckets_and_marks_gaps():
    out = history.regularise(
        [0, 10, 20, 130, 190], [1.0, 3.0, 5.0, 7.0, np.nan], step=60
    )
    assert out[0] == 3.0 and np.isnan(out[1]) and out[2] == 7.0
    assert np.isnan(out[3])


def test_regularise_to_an_end_buckets_on_its_grid_and_leaves_later_out():
    stamps = [0, 60, 110, 250, 290, 310]
    out = history.regularise(stamps, [1.0, 2.0, 3.0, 4.0, 6.0, 99.0],
                             step=100, end=290)
    # (-10, 90], (90, 190], (190, 290]; 310 is after the end
    assert out.tolist() == [1.5, 3.0, 5.0]
    # a sample on a bucket's end belongs to that bucket
    assert history.regularise([90, 190], [1.0, 2.0], step=100,
                              end=190).tolist() == [1.0, 2.0]
    assert history.regularise([300], [1.0], step=100, end=290).size == 0


def test_block_means_start_at_the_first_value_and_drop_a_partial_end():
    assert history.block_means([1.0, 3.0, 5.0, 7.0, 9.0], 2).tolist() == [
        2.0, 6.0]
    assert history.block_means([1.0, 2.0], 1).tolist() == [1.0, 2.0]
    assert history.block_means([1.0, 2.0], 5).size == 0
    # a missing value leaves its block the mean of the others
    out = history.block_means([1.0, np.nan, np.nan, np.nan, 4.0, 8.0], 2)
    assert out[0] == 1.0 and np.isnan(out[1]) and out[2] == 6.0


def test_history_window_is_bounded():
    h = history.History(maxlen=5, values=range(10))
    h.append(None)
    assert len(h) == 5 and h.array().tolist() == [6.0, 7.0, 8.0, 9.0, 9.0]


def test_mape_and_smape():
    assert evaluate.mape([100, 200], [110, 180]) == pytest.approx(10.0)
    assert evaluate.smape([100, 100], [100, 300]) == pytest.approx(50.0)
    assert evaluate.mape([0, 100], [5, 100]) == 0.0  # zero actuals skipped


def test_upper_excess_is_the_bound_s_mean_gap_over_the_actual_peak():
    # 20% above the first peak, 5% below the second (a miss)
    assert evaluate.upper_excess([100, 200], [120, 190]) == pytest.approx(7.5)
    assert evaluate.upper_excess([0, 100], [5, 110]) == pytest.approx(10.0)
    assert np.isnan(evaluate.upper_excess([], []))


def test_a_higher_upper_quantile_covers_more_at_a_wider_bound():
    rng = np.random.default_rng(5)
    y = 1000 + 50 * np.sin(np.arange(160) / 8.0) + rng.normal(0, 40, 160)
    names = ['arima_010', 'arima_100']
    paths = evaluate.replay(y, 6, names=names)
    out = {}
    for level in (0.5, 0.95):
        e = ens.Ensemble(names=names, quantile=level, quantile_gamma=0.0)
        res = evaluate.evaluate_series(y, horizon=6, ensemble=e, paths=paths,
                                       rules=[e.mode])
        out[level] = res['combinations'][e.mode]
    assert out[0.95]['coverage'] > out[0.5]['coverage']
    assert out[0.95]['upper_excess'] > out[0.5]['upper_excess'] + 1.0
    assert 0.0 <= out[0.5]['coverage'] <= 100.0


def _write_trace(path, n=120):
    rng = np.random.default_rng(3)
    read = 1000 + 10 * np.arange(n) + rng.normal(0, 10, n)
    write = 300 + rng.normal(0, 5, n)
    with open(path, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['timestamp', 'read', 'write'])
        for i in range(n):
            w.writerow(
                [
                    60 * i,
                    '%.2f' % read[i],
                    '' if i == 50 else '%.2f' % write[i],
                ]
            )


def test_run_reports_every_forecaster_and_plots(tmp_path):
    trace = tmp_path / 'trace.csv'
    _write_trace(trace)
    png = tmp_path / 'out.png'
    res = evaluate.run(
        str(trace),
        plot_path=str(png),
        names=['arima_010', 'arima_100', 'regression_tree'],
    )
    assert set(res) == {'read', 'write'}
    r = res['read']
    assert set(r['forecasters']) == {
        'arima_010',
        'arima_100',
        'regression_tree',
    }
    # every combination, at one step and at the actuator's horizon
    assert set(r['combinations']) == set(ens.MODES)
    # a control period, the action in flight and a join: 300 + 900 + 900 s
    assert r['horizon'] == evaluate.default_horizon() == 35
    for name, e in list(r['forecasters'].items()) + list(
            r['combinations'].items()):
        assert e['mape'] < 2.0 and e['smape'] < 2.0, name
        assert e['peak_mape'] == pytest.approx(
            e['peak_under'] + e['peak_over'])
    # a ramp: the peak of the next 35 points is its last one, which a
    # forecaster that follows the trend gets within a few percent
    assert r['forecasters']['arima_010']['peak_mape'] < 5.0
    assert 0.0 <= r['combinations'][r['default']]['coverage'] <= 100.0
    # the bound is never below the peak forecast, which is within a few
    # percent of the actual peak here
    assert r['combinations'][r['default']]['upper_excess'] > -5.0
    assert all('upper_excess' not in e for e in r['forecasters'].values())
    # Too short for any forecaster at first: the last value is repeated.
    assert r['timeline'][0] == (1, 'last_value')
    assert r['timeline'][1][1] in list(r['forecasters']) + ['mean', 'median']
    assert (tmp_path / 'out-read.png').stat().st_size > 10000
    assert (tmp_path / 'out-write.png').exists()


def test_cli_main_and_subparser(tmp_path, capsys):
    trace = tmp_path / 'trace.csv'
    _write_trace(trace, n=80)
    assert (
        evaluate.main(
            [
                str(trace),
                '--column',
                'read',
                '--forecasters',
                'arima_010,arima_011',
                '--horizon',
                '2',
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert 'horizon 2 steps' in out and 'arima_011' in out
    assert ens.DEFAULT_MODE + '*' in out and 'majority' in out and 'peak' in out
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    evaluate.add_subparser(sub)
    args = parser.parse_args(
        [
            'forecast-eval',
            str(trace),
            '--json',
            '--column',
            'write',
            '--forecasters',
            'arima_010',
            '--horizon',
            '5',
        ]
    )
    assert args.func(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc['write']['combinations']) == set(ens.MODES)
    assert doc['write']['forecasters']['arima_010']['peak_under'] >= 0
    # only some combinations, and another default
    args = parser.parse_args(['forecast-eval', str(trace), '--json',
                              '--column', 'read', '--forecasters',
                              'arima_010,arima_100', '--selection', 'mean',
                              '--combinations', 'median', '--horizon', '3'])
    assert args.func(args) == 0
    doc = json.loads(capsys.readouterr().out)['read']
    assert doc['default'] == 'mean' and doc['horizon'] == 3
    assert set(doc['combinations']) == {'mean', 'median'}
    args = parser.parse_args(['forecast-eval', str(trace), '--combinations',
                              'nonsense'])
    assert args.func(args) == 2


def test_predictor_options_listed_with_help():
    ((group, opts),) = pconf.list_opts()
    names = {o.name for o in opts}
    assert {
        'period',
        'tolerance',
        'penalty',
        'selection',
        'history_window',
        'horizon',
        'forecasters',
        'seasonal_periods',
        'refit_interval',
        'weight_floor',
        'quantile',
        'discount',
        'eta',
    } <= names
    assert all(o.help for o in opts)


def test_manage_style_call_without_args(tmp_path, capsys, monkeypatch):
    """elastman-manage calls CONF.command.func() with no arguments."""
    import types

    import elastman.conf

    trace = tmp_path / 'trace.csv'
    _write_trace(trace, n=60)
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    evaluate.add_subparser(sub)
    ns = parser.parse_args(
        ['forecast-eval', str(trace), '--forecasters', 'arima_010']
    )
    fake = types.SimpleNamespace(command=ns,
                                 predictor=elastman.conf.CONF.predictor,
                                 actuator=elastman.conf.CONF.actuator)
    monkeypatch.setattr(elastman.conf, 'CONF', fake)
    assert ns.func() == 0
    assert ens.DEFAULT_MODE + '*' in capsys.readouterr().out


def test_read_trace_trims_uneven_columns(tmp_path):
    path = tmp_path / 't.csv'
    path.write_text('minute,a,b\n0,1,5\n1,2,\n2,,\n3,4,\n')
    trace = evaluate.read_trace(str(path))
    assert trace['b'].tolist() == [5.0]
    assert trace['a'][:2].tolist() == [1.0, 2.0] and np.isnan(trace['a'][2])
    assert trace['a'].size == 4


def test_every_scores_means_of_the_trace_s_points(tmp_path, capsys):
    trace = tmp_path / 'trace.csv'
    _write_trace(trace, n=200)
    argv = [str(trace), '--json', '--column', 'read', '--forecasters',
            'arima_010', '--combinations', 'mean']
    assert evaluate.main(argv + ['--every', '5', '--step', '60']) == 0
    doc = json.loads(capsys.readouterr().out)['read']
    # 40 five-minute means; the default horizon in 300-s steps
    assert doc['points'] == 40
    assert doc['horizon'] == evaluate.default_horizon(300.0)
    assert evaluate.main(argv + ['--horizon', '2']) == 0
    assert json.loads(capsys.readouterr().out)['read']['points'] == 200


def test_the_trace_is_read_once(tmp_path, capsys, monkeypatch):
    """The command checks and replays the trace it read, not a second copy."""
    trace = tmp_path / 'trace.csv'
    _write_trace(trace, n=60)
    reads = []
    read_trace = evaluate.read_trace
    monkeypatch.setattr(evaluate, 'read_trace',
                        lambda path: reads.append(path) or read_trace(path))
    assert evaluate.main([str(trace), '--json', '--column', 'read', '--forecasters',
                          'arima_010', '--combinations', 'mean']) == 0
    assert json.loads(capsys.readouterr().out)['read']['points'] == 60
    assert reads == [str(trace)]


@pytest.mark.parametrize('bad', ['0', '-2', 'five'])
def test_every_must_be_a_whole_number_of_at_least_one(tmp_path, capsys, bad):
    trace = tmp_path / 'trace.csv'
    _write_trace(trace, n=40)
    with pytest.raises(SystemExit) as raised:
        evaluate.main([str(trace), '--every', bad])
    assert raised.value.code == 2
    assert '--every' in capsys.readouterr().err


@pytest.mark.parametrize('argv, message', [
    (['--column', 'nope'], 'has no column nope (its columns: read, write)'),
    (['--forecasters', 'nosuch'], "'nosuch' cannot be loaded"),
])
def test_a_trace_or_option_it_cannot_use_is_named_before_any_replay(
        tmp_path, capsys, monkeypatch, argv, message):
    trace = tmp_path / 'trace.csv'
    _write_trace(trace, n=40)
    monkeypatch.setattr(evaluate, 'run_series', lambda *a, **k: pytest.fail('it ran'))
    assert evaluate.main([str(trace)] + argv) == 2
    err = capsys.readouterr().err
    assert err.startswith('forecast-eval: ') and message in err


def test_a_missing_trace_is_named(tmp_path, capsys):
    assert evaluate.main([str(tmp_path / 'absent.csv')]) == 2
    assert 'cannot read the trace %s' % (tmp_path / 'absent.csv') \
        in capsys.readouterr().err


@pytest.mark.parametrize('option, bad', [
    ('--horizon', '-3'), ('--warmup', '-1'), ('--tolerance', '-0.1'),
    ('--penalty', '1'), ('--quantile', '1.5'), ('--refit-interval', '0'),
])
def test_numeric_options_out_of_range_are_refused(tmp_path, capsys, option, bad):
    trace = tmp_path / 'trace.csv'
    _write_trace(trace, n=40)
    with pytest.raises(SystemExit) as raised:
        evaluate.main([str(trace), option, bad])
    assert raised.value.code == 2
    assert option in capsys.readouterr().err
