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
"""The frontier sweep on a small trace: settings, knobs and files."""
import csv
import os

import pytest

from elastman.actuator.policy import ScalingPolicy
from elastman.evaluation import frontier as fr
from elastman.evaluation import policies as pol
from elastman.evaluation import simulator as sm
from elastman.evaluation import sweep
from elastman.evaluation import traces as tr


def test_each_policy_declares_its_knob():
    by = {p.name: p for p in pol.make(pol.ALL)}
    assert by['target'].knob == 'target' and by['target'].knob_value() == 60.0
    assert 60.0 in by['target'].sweep
    assert by['reactive'].knob_value() == 70.0 and 70.0 in by['reactive'].sweep
    assert by['static'].knob is None and by['oracle'].knob is None
    assert by['elastman'].knob == pol.Elastman.knob and pol.Elastman.sweep


def test_set_knob():
    r = pol.Reactive()
    r.set_knob(80.0)
    assert (r.high, r.low) == (80.0, 40.0)
    el = pol.make(['elastman'])[0]
    default = el.knob_value()
    el.set_knob(0.35)
    assert el.knob_value() == 0.35
    assert pol.make(['elastman'])[0].knob_value() == default   # others untouched
    # the value reaches the scaling policy the simulated controller runs
    cfg = sm.SimConfig()
    trace = tr.load('ramp', 6, 0.02, 1, cfg.hardware)
    el.start(sm.SimCluster(trace, cfg, [sm.Flavor('m1.medium')], {'m1.medium': 6}, 1,
                           el.name))
    assert getattr(el.policy, el.knob) == 0.35


def test_settings_add_the_oracle_and_take_values():
    got = sweep.knob_settings(['static', 'target'], {'target': [50, 70]})
    assert got == [('static', None, None), ('target', 50.0, None), ('target', 70.0, None),
                   ('oracle', None, None)]
    assert len(sweep.knob_settings(['reactive'])) == len(pol.Reactive.sweep) + 1
    with pytest.raises(ValueError, match='no knob'):
        sweep.knob_settings(['static'], {'static': [1]})
    with pytest.raises(ValueError, match='not swept'):
        sweep.knob_settings(['target'], {'reactive': [1]})


def test_each_baseline_and_elastman_declare_a_second_knob():
    by = {p.name: p for p in pol.make(pol.ALL)}
    assert by['reactive'].hysteresis_value() == pytest.approx(0.5)
    assert by['target'].hysteresis_value() == 300.0
    assert by['elastman'].hysteresis_value() == ScalingPolicy().scale_in_headroom
    assert by['static'].hysteresis is None and by['oracle'].hysteresis is None
    for p in (by['reactive'], by['target'], by['elastman']):
        assert p.hysteresis_value() in p.hysteresis_sweep


def test_set_hysteresis():
    r = pol.Reactive()
    r.set_hysteresis(0.33)
    r.set_knob(90.0)            # the scale-in threshold keeps its fraction
    assert (r.high, r.low) == (90.0, pytest.approx(29.7))
    t = pol.TargetTracking()
    t.set_hysteresis(900.0)
    assert t.stabilisation_s == 900.0
    el = pol.make(['elastman'])[0]
    el.set_knob(0.2)
    el.set_hysteresis(0.65)
    cfg = sm.SimConfig()
    trace = tr.load('ramp', 6, 0.02, 1, cfg.hardware)
    el.start(sm.SimCluster(trace, cfg, [sm.Flavor('m1.medium')], {'m1.medium': 6}, 1,
                           el.name))
    assert (el.policy.headroom, el.policy.scale_in_headroom) == (0.2, 0.65)


def test_hysteresis_crosses_the_knob_with_the_second_one():
    got = sweep.knob_settings(['reactive', 'target'], {'reactive': [60, 80]},
                              {'reactive': [0.33, 0.5]})
    assert got[:4] == [('reactive', 60.0, 0.33), ('reactive', 60.0, 0.5),
                       ('reactive', 80.0, 0.33), ('reactive', 80.0, 0.5)]
    assert {w for name, _, w in got if name == 'target'} == {None}
    own = sweep.knob_settings(['target'], {'target': [60]}, {'target': None})
    assert own[:-1] == [('target', 60.0, w) for w in pol.TargetTracking.hysteresis_sweep]
    with pytest.raises(ValueError, match='no second knob'):
        sweep.knob_settings(['oracle', 'target'], None, {'oracle': None})
    with pytest.raises(ValueError, match='--hysteresis for policies not swept'):
        sweep.knob_settings(['target'], None, {'reactive': None})
    assert sweep.parse_hysteresis(['elastman', 'reactive=0.4,0.6']) == {
        'elastman': None, 'reactive': [0.4, 0.6]}
    for bad in ('=1', 'target=', 'target=a'):
        with pytest.raises(ValueError, match='--hysteresis'):
            sweep.parse_hysteresis([bad])


def test_a_second_knob_is_a_setting_of_its_own_in_the_rows_and_the_means(tmp_path):
    rows = sweep.run(['flash'], [12], ['target'], days=0.15, seed=[1, 2],
                     values={'target': [60]}, hysteresis={'target': [300, 1800]})
    assert [(r['seed'], r['value'], r['value2'], r['default']) for r in rows
            if r['policy'] == 'target'] == [
        ('1', 60.0, 300.0, True), ('1', 60.0, 1800.0, False),
        ('2', 60.0, 300.0, True), ('2', 60.0, 1800.0, False)]
    mean = [r for r in sweep.means(rows) if r['policy'] == 'target']
    assert [(r['value2'], sweep.setting(r)) for r in mean] == [
        (300.0, '60/300'), (1800.0, '60/1800')]
    # the longer window keeps the VMs of a fall longer: more VM-hours
    assert mean[1]['vm_hours'] > mean[0]['vm_hours']
    sweep.write(str(tmp_path), rows, png=False)
    with open(tmp_path / 'sweep-flash-12.csv') as f:
        got = [r for r in csv.DictReader(f) if r['policy'] == 'target']
    assert [(r['hysteresis'], r['value2']) for r in got] == [
        ('stabilisation_s', '300.000'), ('stabilisation_s', '1800.000')]
    assert 'target' in sweep.format_table(mean) and '60/1800' in sweep.format_table(mean)


@pytest.mark.parametrize('name,value', [('target', 0.6), ('target', 101),
                                        ('reactive', 0.7), ('reactive', 0)])
def test_a_percentage_knob_given_as_a_fraction_is_refused(name, value):
    # target tracking at 0.6% asks for a hundred times the VMs
    with pytest.raises(ValueError, match=r"--values %s=%g: policy %s's .* "
                       r"is a CPU percentage, from 1 to 100"
                       % (name, value, name)):
        sweep.knob_settings([name], {name: [60, value]})
    assert len(sweep.knob_settings([name], {name: [1, 100]})) == 3


def test_parse_values_and_sizes():
    assert sweep.parse_values(['target=40,60', 'reactive=80']) == {
        'target': [40.0, 60.0], 'reactive': [80.0]}
    for bad in ('target', 'target=', 'target=a', '=1'):
        with pytest.raises(ValueError):
            sweep.parse_values([bad])
    assert sweep.sizes('50,1000') == [50, 1000]
    for bad in ('', 'x', '2'):
        with pytest.raises(ValueError):
            sweep.sizes(bad)
    assert sweep.trace_names('all')[:2] == ['paper', 'weekly']
    with pytest.raises(ValueError):
        sweep.trace_names('nosuchtrace')


def test_parse_settings_checks_each_field_as_the_api_does():
    assert pol.parse_settings(['alpha_fraction=0.1', 'beyond_lower=over',
                               'guard=false', 'flavor_costs={"m1.medium": 2}']) == {
        'alpha_fraction': 0.1, 'beyond_lower': 'over', 'guard': False,
        'flavor_costs': {'m1.medium': 2}}
    assert pol.parse_settings([]) == {}
    for bad, match in (('headroom', 'FIELD=VALUE'), ('=0.1', 'FIELD=VALUE'),
                       ('headroom=', 'FIELD=VALUE'),
                       ('no_such_field=1', 'no_such_field: not a scaling policy field'),
                       ('max_size=10', 'max_size: the simulator sets it'),
                       ('headroom=2', 'headroom'), ('guard=maybe', 'guard'),
                       ('extrapolation=upward', 'extrapolation')):
        with pytest.raises(ValueError, match=match):
            pol.parse_settings([bad])


def test_settings_take_the_policy_documents_model_parameters():
    settings = pol.parse_settings(['model={"monotone": "drop"}', 'headroom=0.2'])
    assert settings == {'headroom': 0.2, 'model': {'monotone': 'drop'}}
    el = pol.make(['elastman'], options=settings)[0]
    assert el.params.monotone == 'drop' and el.params.slo_metric == 'read_p99_ms'
    assert 'model' not in el.options and settings['model'] == {'monotone': 'drop'}
    for bad, match in (('model=3', 'not an object'),
                       ('model={"monotone": "x"}', 'monotone must be one of'),
                       ('model={"nope": 1}', 'unknown model parameters: nope')):
        with pytest.raises(ValueError, match=match):
            pol.parse_settings([bad])


def test_settings_take_the_predictors_options():
    settings = pol.parse_settings(['predictor={"selection": "switch", '
                                   '"switch_discount": 0.95}'])
    assert settings == {'predictor': {'selection': 'switch', 'switch_discount': 0.95}}
    el = pol.make(['elastman'], options=settings)[0]
    assert el.ensemble_kwargs['mode'] == 'switch'
    assert el.ensemble_kwargs['combination_options'] == {'switch_discount': 0.95}
    assert 'predictor' not in el.options
    assert 'forecast (switch)' in _described(el).describe()
    for bad, match in (('predictor=3', 'not an object'),
                       ('predictor={"selection": "best"}', 'selection .best. is not one of'),
                       ('predictor={"nope": 1}', "unknown option 'nope'"),
                       ('predictor={"quantile": 1.5}', 'quantile must be in')):
        with pytest.raises(ValueError, match=match):
            pol.parse_settings([bad])


def _described(el):
    """``el`` with the policy its description reads, as after start()."""
    el.base_policy = ScalingPolicy()
    return el


def test_settings_reach_the_simulated_controller_and_its_description():
    cfg = sm.SimConfig()
    trace = tr.load('ramp', 6, 0.02, 1, cfg.hardware)
    got = {}
    for p in pol.make(['elastman', 'elastman-quantile', 'elastman-paper', 'target'],
                      options={'alpha_fraction': 0.1}):
        p.start(sm.SimCluster(trace, cfg, [sm.Flavor('m1.medium')], {'m1.medium': 6},
                              1, p.name))
        got[p.name] = p
    assert got['elastman'].policy.alpha_fraction == 0.1
    assert 'alpha_fraction=0.1' in got['elastman'].describe()
    assert got['elastman-quantile'].policy.alpha_fraction == 0.1
    assert got['elastman-quantile'].policy.plan_on == 'quantile'
    # the paper's rule as published
    assert got['elastman-paper'].policy.alpha_fraction == 0.0
    assert got['elastman-paper'].policy.headroom == 0.0


def test_the_quantile_level_is_the_margin_of_its_policy():
    """elastman-quantile-level plans on the bound with no headroom, and its
    knob is the level the forecasts' bound is made at.
    """
    cfg = sm.SimConfig()
    trace = tr.load('ramp', 6, 0.02, 1, cfg.hardware)
    p = pol.make(['elastman-quantile-level'], options={'alpha_fraction': 0.1})[0]
    assert (p.knob, p.knob_value()) == ('quantile', 0.9)
    p.set_knob(0.7)
    p.start(sm.SimCluster(trace, cfg, [sm.Flavor('m1.medium')], {'m1.medium': 6},
                          1, p.name))
    assert p.knob_value() == 0.7 and p.ensemble.quantile == 0.7
    assert p.policy.plan_on == 'quantile' and p.policy.headroom == 0.0
    assert p.policy.alpha_fraction == 0.1
    assert sweep.knob_settings(['elastman-quantile-level'])[:2] == [
        ('elastman-quantile-level', 0.5, None), ('elastman-quantile-level', 0.6, None)]


@pytest.fixture(scope='module')
def flash(tmp_path_factory):
    out = str(tmp_path_factory.mktemp('sweep'))
    rows = sweep.run(['flash'], [12], ['static', 'reactive', 'target'], days=0.15,
                     values={'target': [40, 60, 80], 'reactive': [60, 80]})
    return rows, out, sweep.write(out, rows)


def test_rows_per_setting_with_the_oracle_as_unit(flash):
    rows, _, _ = flash
    assert [(r['policy'], r['value']) for r in rows] == [
        ('static', None), ('reactive', 60.0), ('reactive', 80.0), ('target', 40.0),
        ('target', 60.0), ('target', 80.0), ('oracle', None)]
    oracle = rows[-1]
    assert oracle['vm_hours_vs_oracle'] == 1.0 and oracle['violation_minutes'] == 0
    assert [r['default'] for r in rows if r['policy'] == 'target'] == [False, True, False]
    # the knob was applied: a lower CPU target holds more VMs
    target = [r['vm_hours'] for r in rows if r['policy'] == 'target']
    assert target[0] > target[1] > target[2]


def test_files_and_their_numbers(flash):
    rows, out, paths = flash
    assert sorted(os.path.basename(p) for p in paths) == [
        'between.csv', 'frontier-flash-12.png', 'sweep-flash-12.csv', 'sweep.csv']
    with open(os.path.join(out, 'sweep-flash-12.csv')) as f:
        got = list(csv.DictReader(f))
    assert len(got) == len(rows)
    assert float(got[4]['vm_hours']) == pytest.approx(rows[4]['vm_hours'], abs=1e-3)
    assert got[4]['default'] == 'yes' and got[0]['value'] == ''
    with open(os.path.join(out, 'between.csv')) as f:
        between = [r for r in csv.DictReader(f) if r['policy'] == 'target']
    assert len(between) == fr.LEVELS
    pts = sweep.curves(rows)['target']
    assert float(between[0]['violation_pct']) == pytest.approx(
        fr.interpolate(pts, [fr.LOW])[0], abs=1e-3)


def test_cli(simulate_cli, tmp_path, capsys):
    ap = simulate_cli
    args = ap.parse_args(['simulate', '--sweep', '--trace', 'ramp', '--nodes', '8',
                          '--days', '0.05', '--policies', 'target',
                          '--values', 'target=50,70', '--out', str(tmp_path), '--no-png'])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert 'target' in out and 'oracle' in out
    assert (tmp_path / 'sweep-ramp-8.csv').exists()
    args = ap.parse_args(['simulate', '--sweep', '--trace', 'ramp', '--nodes', '8',
                          '--values', 'static=1', '--policies', 'static',
                          '--out', str(tmp_path)])
    with pytest.raises(SystemExit, match='no knob'):
        args.func(args)
    args = ap.parse_args(['simulate', '--sweep', '--trace', 'ramp', '--nodes', '8',
                          '--days', '0.05', '--policies', 'reactive',
                          '--values', 'reactive=60', '--hysteresis', 'reactive=0.33,0.67',
                          '--out', str(tmp_path / 'two'), '--no-png'])
    assert args.func(args) == 0
    assert '60/0.33' in capsys.readouterr().out
    with open(tmp_path / 'two' / 'sweep.csv') as f:
        assert [r['value2'] for r in csv.DictReader(f) if r['policy'] == 'reactive'] == [
            '0.330', '0.670']
    args = ap.parse_args(['simulate', '--sweep', '--trace', 'ramp', '--nodes', '8',
                          '--hysteresis', 'static', '--policies', 'static',
                          '--out', str(tmp_path)])
    with pytest.raises(SystemExit, match='no second knob'):
        args.func(args)
    args = ap.parse_args(['simulate', '--trace', 'ramp', '--nodes', '8,9',
                          '--out', str(tmp_path)])
    with pytest.raises(SystemExit, match='one integer'):
        args.func(args)
    args = ap.parse_args(['simulate', '--trace', 'ramp', '--nodes', '8',
                          '--set', 'headroom=-1', '--out', str(tmp_path)])
    with pytest.raises(SystemExit, match='simulate: --set headroom'):
        args.func(args)


def test_cli_settings_change_the_run(simulate_cli, tmp_path, capsys):
    ap = simulate_cli
    base = ['simulate', '--trace', 'flash', '--nodes', '12', '--days', '0.1',
            '--policies', 'elastman', '--no-png']
    rows = {}
    for name, extra in (('default', []), ('roomy', ['--set', 'headroom=0.5'])):
        out = tmp_path / name
        args = ap.parse_args(base + extra + ['--out', str(out)])
        assert args.func(args) == 0
        with open(out / 'summary.csv') as f:
            rows[name] = next(r for r in csv.DictReader(f) if r['policy'] == 'elastman')
        described = (out / 'policies.txt').read_text()
        assert ('headroom=0.5' in described) == (name == 'roomy')
    capsys.readouterr()
    # more headroom holds more VMs
    assert float(rows['roomy']['vm_hours']) > float(rows['default']['vm_hours'])


def test_seeds_each_against_its_own_oracle_and_frontiers_through_the_means(tmp_path):
    rows = sweep.run(['flash'], [12], ['target'], days=0.15, seed=[1, 2],
                     values={'target': [50, 70]})
    assert [(r['seed'], r['policy'], r['value']) for r in rows] == [
        ('1', 'target', 50.0), ('1', 'target', 70.0), ('1', 'oracle', None),
        ('2', 'target', 50.0), ('2', 'target', 70.0), ('2', 'oracle', None)]
    oracles = {r['seed']: r['vm_hours'] for r in rows if r['policy'] == 'oracle'}
    assert oracles['1'] != oracles['2']     # another seed is another cluster
    for r in rows:
        assert r['vm_hours_vs_oracle'] == pytest.approx(r['vm_hours'] / oracles[r['seed']])
    mean = sweep.means(rows)
    assert [(r['policy'], r['value'], r['seed']) for r in mean] == [
        ('target', 50.0, 'mean of seeds 1 2'), ('target', 70.0, 'mean of seeds 1 2'),
        ('oracle', None, 'mean of seeds 1 2')]
    for m in mean:
        runs = [r for r in rows if (r['policy'], r['value']) == (m['policy'], m['value'])]
        for k in sweep.MEAN_FIELDS:
            assert m[k] == pytest.approx(sum(r[k] for r in runs) / 2)
        assert m['max_vms'] == max(r['max_vms'] for r in runs)
    assert sweep.means(rows[:3]) == rows[:3]    # one seed: the rows themselves
    sweep.write(str(tmp_path), rows, png=False)
    with open(tmp_path / 'sweep.csv') as f:
        assert [r['seed'] for r in csv.DictReader(f)] == ['1', '1', '1', '2', '2', '2']
    with open(tmp_path / 'between.csv') as f:
        between = [r for r in csv.DictReader(f) if r['policy'] == 'target']
    assert float(between[-1]['violation_pct']) == pytest.approx(
        fr.interpolate(sweep.curves(mean)['target'], [fr.HIGH])[0], abs=1e-3)


def test_cli_seed_list_only_with_sweep(simulate_cli, tmp_path, capsys):
    ap = simulate_cli
    args = ap.parse_args(['simulate', '--sweep', '--trace', 'ramp', '--nodes', '8',
                          '--days', '0.05', '--policies', 'target', '--seed', '1,2',
                          '--values', 'target=60', '--out', str(tmp_path), '--no-png'])
    assert args.func(args) == 0
    assert 'target' in capsys.readouterr().out
    with open(tmp_path / 'sweep.csv') as f:
        assert {r['seed'] for r in csv.DictReader(f)} == {'1', '2'}
    for spec, match in (('1,x', 'comma-separated integers'), ('2,2', 'a seed twice')):
        args = ap.parse_args(['simulate', '--sweep', '--trace', 'ramp', '--nodes', '8',
                              '--seed', spec, '--out', str(tmp_path)])
        with pytest.raises(SystemExit, match=match):
            args.func(args)
    args = ap.parse_args(['simulate', '--trace', 'ramp', '--nodes', '8', '--seed', '1,2',
                          '--out', str(tmp_path)])
    with pytest.raises(SystemExit, match='one integer'):
        args.func(args)
