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
"""Records of a live evaluation: per-minute series, decisions with their
forecasts and models, actions, the summary and the figure (OnlineElastMan,
Figs. 3.14/3.15).
"""
from __future__ import annotations

import csv
import datetime
import json
import math
from typing import Any, Mapping

from elastman.common.timestamps import epoch
from elastman.evaluation.live_scenario import MINUTE
from elastman.evaluation.live_scenario import Scenario
from elastman.evaluation.live_scenario import schedule

MINUTE_FIELDS = ('minute', 'phase', 'target_ops', 'client_ops',
                 'client_read_p99_ms', 'client_read_p99_max_ms',
                 'server_reads_per_s', 'server_writes_per_s',
                 'server_read_p99_ms', 'server_read_p99_max_ms', 'nodes',
                 'servers', 'violation', 'actions')
#: the first minutes of a run, when the nodes' JVMs are cold: a violation
#: there is not a loaded one
COLD_MINUTES = 2
DECISION_FIELDS = ('time', 'minute', 'kind', 'count', 'flavor',
                   'forecast_used', 'reads_forecast', 'reads_forecaster',
                   'writes_forecast', 'writes_forecaster', 'forecast_age_s',
                   'vm_models', 'flavor_models', 'bounds', 'vms', 'reason')


def write_csv(path: str, fields, rows) -> None:
    with open(path, 'w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=list(fields),
                                extrasaction='ignore')
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _fmt(row.get(k)) for k in fields})


def write_json(path: str, value: Any) -> None:
    """``value`` as indented JSON; datetimes as ISO 8601, NaN as null."""
    def plain(v: Any) -> Any:
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, (datetime.datetime, datetime.date)):
            return v.isoformat()
        return v
    with open(path, 'w') as f:
        json.dump(plain(value), f, indent=1, default=str)


def _fmt(value: Any) -> Any:
    if value is None:
        return ''
    if isinstance(value, float):
        return '' if not math.isfinite(value) else round(value, 2)
    return value


def weighted_p99(statuses: list[dict], op: str) -> float | None:
    """Count-weighted mean of the interval p99s of ``op``, in ms."""
    num = den = 0.0
    for s in statuses:
        o = s.get('ops', {}).get(op)
        if o and o.get('count') and o.get('p99_us') is not None:
            num += o['count'] * o['p99_us']
            den += o['count']
    return num / den / 1000.0 if den else None


def minute_rows(t0: float, scenario: Scenario, windows, intervals, polls,
                samples, actions) -> list[dict[str, Any]]:
    """One row per minute since ``t0``: workload, nodes, latency, actions."""
    plan = schedule(scenario)
    end = max([t0 + scenario.duration_s] + [b for _, b, _ in windows])
    if scenario.until and windows:
        # phases that end on an event: the run is as long as they were
        end = max(b for _, b, _ in windows)
    minutes = int(math.ceil((end - t0) / MINUTE - 1e-9))
    rows = []
    for m in range(minutes):
        a, b = t0 + m * MINUTE, t0 + (m + 1) * MINUTE
        mid = (m + 0.5) * MINUTE
        phase = next((p for s, e, p in plan if s <= mid < e), None)
        overlap = [(min(e, b) - max(s, a), p) for s, e, p in windows
                   if min(e, b) > max(s, a)]
        if overlap:   # the phase that really ran longest in this minute
            phase = max(overlap, key=lambda o: o[0])[1]
        stats = [s for w, s in intervals if a <= w < b]
        counted = sum(sum(o.get('count', 0) for o in s['ops'].values())
                      for s in stats)
        span = min(b, end) - a
        reads = [s for s in stats if s['ops'].get('READ')]
        client_max = max((s['ops']['READ'].get('p99_us', 0) for s in reads
                          if s['ops']['READ'].get('count')), default=None)
        node_states = [(n, t) for w, n, t in polls if a <= w < b]
        minute_samples = [s for s in samples
                          if a <= (epoch(s['ts']) or 0) < b
                          and s.get('up') is not False]
        srv = _server_latency(minute_samples)
        acts = []
        for act in actions:
            created = epoch(act['created_at'])
            if created is not None and a <= created < b:
                acts.append('%s %s' % (act['kind'], _act_size(act)))
        row = {'minute': m, 'phase': phase.name if phase else '',
               'target_ops': phase.target if phase else 0,
               'client_ops': counted / span if span > 0 else 0.0,
               'client_read_p99_ms': weighted_p99(stats, 'READ'),
               'client_read_p99_max_ms':
                   client_max / 1000.0 if client_max is not None else None,
               'nodes': node_states[-1][0] if node_states else
                   (rows[-1]['nodes'] if rows else None),
               'servers': max(t for _, t in node_states) if node_states
                   else (rows[-1]['servers'] if rows else None),
               'actions': '; '.join(acts)}
        row.update(srv)
        p99 = row['server_read_p99_ms']
        row['violation'] = int(p99 is not None and p99 > scenario.slo_ms)
        rows.append(row)
    return rows


def _server_latency(samples: list[dict]) -> dict[str, Any]:
    """Per-minute server view from node samples: the cluster's request
    rates (node rates averaged over the minute's samples and summed) and the
    read p99 (reads-weighted mean and max over the nodes' samples).
    """
    by_node: dict[str, list[dict]] = {}
    for s in samples:
        by_node.setdefault(s['node_id'], []).append(s)
    reads = sum(sum(x.get('reads_per_s') or 0 for x in v) / len(v)
                for v in by_node.values())
    writes = sum(sum(x.get('writes_per_s') or 0 for x in v) / len(v)
                 for v in by_node.values())
    num = den = 0.0
    peak = None
    for s in samples:
        p99 = s.get('read_p99_ms')
        if p99 is None or not math.isfinite(p99):
            continue
        weight = s.get('reads_per_s') or 0.0
        if weight <= 0:
            continue
        num += weight * p99
        den += weight
        peak = p99 if peak is None else max(peak, p99)
    return {'server_reads_per_s': reads if samples else None,
            'server_writes_per_s': writes if samples else None,
            'server_read_p99_ms': num / den if den else None,
            'server_read_p99_max_ms': peak}


def _act_size(act: dict) -> str:
    params = act.get('params') or {}
    if params.get('nodes'):
        return '-%d' % len(params['nodes'])
    if params.get('count') is not None:
        return ('+%d' if act['kind'] in ('scale_out', 'create') else '%d') \
            % params['count']
    return ''


def action_rows(t0: float, actions: list[dict]) -> list[dict[str, Any]]:
    rows = []
    for act in sorted(actions, key=lambda a: a['created_at']):
        created, updated = epoch(act['created_at']), epoch(act['updated_at'])
        done = act['state'] in ('SUCCEEDED', 'FAILED', 'ROLLED_BACK')
        rows.append({'created_minute': round((created - t0) / MINUTE, 2),
                     'done_minute': round((updated - t0) / MINUTE, 2)
                     if done else None,
                     'kind': act['kind'], 'state': act['state'],
                     'step': act['step'], 'size': _act_size(act),
                     'params': json.dumps(act.get('params') or {},
                                          sort_keys=True),
                     'reason': act.get('reason') or ''})
    return rows


def decision_rows(t0: float, decisions: list[dict]) -> list[dict[str, Any]]:
    """Each decision with the forecast and the models it used."""
    rows = []
    for d in sorted(decisions, key=lambda r: r['ts']):
        rec = d.get('record') or {}
        inputs = rec.get('inputs') or {}
        fc = inputs.get('forecast') or {}
        at = epoch(d['ts'])
        ages = []
        clock = datetime.datetime.fromtimestamp(at, datetime.timezone.utc)
        row = {'time': clock.strftime('%H:%M:%S'),
               'minute': round((at - t0) / MINUTE, 2),
               'kind': rec.get('kind') or d.get('action'),
               'count': rec.get('count'), 'flavor': rec.get('flavor'),
               'forecast_used': bool(inputs.get('forecast_used')),
               'reason': rec.get('reason') or ''}
        for metric, short in (('reads_per_s', 'reads'),
                              ('writes_per_s', 'writes')):
            info = fc.get(metric) or {}
            row['%s_forecast' % short] = info.get('value')
            row['%s_forecaster' % short] = info.get('forecaster') or \
                info.get('ignored') or ''
            made = info.get('made_at')
            if made:
                try:
                    ages.append(at - datetime.datetime.fromisoformat(
                        made).replace(tzinfo=datetime.timezone.utc
                                      ).timestamp())
                except ValueError:
                    pass
        row['forecast_age_s'] = max(ages) if ages else None
        versions = inputs.get('model_versions') or {}
        row['vm_models'] = _versions(versions.get('vm'))
        row['flavor_models'] = _versions(versions.get('flavor'))
        bounds: dict[str, int] = {}
        for vm in rec.get('vms') or []:
            bounds[vm.get('bound') or '?'] = bounds.get(
                vm.get('bound') or '?', 0) + 1
        row['bounds'] = ' '.join('%s:%d' % kv for kv in sorted(bounds.items()))
        row['vms'] = ' '.join(_vm_numbers(vm) for vm in rec.get('vms') or [])
        rows.append(row)
    return rows


def _vm_numbers(vm: Mapping[str, Any]) -> str:
    """``node:load/target/capacity`` of one VM in a decision (req/s; the
    target is the capacity less the headroom, what the load is held to).
    """
    def number(key: str) -> str:
        value = vm.get(key)
        if value is None or not math.isfinite(float(value)):
            return '?'
        return '%.0f' % float(value)
    return '%s:%s/%s/%s' % (str(vm.get('node_id') or '?')[:8], number('load'),
                            number('target'), number('capacity'))


def _versions(mapping: Mapping[str, int] | None) -> str:
    if not mapping:
        return ''
    return ' '.join('%s=v%s' % (str(k)[:8], v)
                    for k, v in sorted(mapping.items()))


def summarise(scenario: Scenario, rows, actions, decisions) -> dict[str, Any]:
    measured = [r for r in rows if r['server_read_p99_ms'] is not None]
    node_minutes = sum(r['servers'] or 0 for r in rows)
    acted = [d for d in decisions if d['kind'] in ('scale_out', 'scale_in')]
    return {
        'scenario': scenario.name, 'slo_ms': scenario.slo_ms,
        'minutes': len(rows),
        'violation_minutes': sum(r['violation'] for r in rows),
        'violation_pct': (100.0 * sum(r['violation'] for r in rows)
                          / max(len(measured), 1)),
        'client_violation_minutes': sum(
            1 for r in rows
            if (r['client_read_p99_ms'] or 0) > scenario.slo_ms),
        'vm_hours': node_minutes / 60.0,
        'min_nodes': min((r['nodes'] for r in rows
                          if r['nodes'] is not None), default=None),
        'max_nodes': max((r['nodes'] or 0 for r in rows), default=0),
        'final_nodes': rows[-1]['nodes'] if rows else None,
        'scale_actions': [
            '%s %s at %.1f min (%s)' % (a['kind'], a['size'],
                                        a['created_minute'], a['state'])
            for a in actions if a['kind'] != 'create'],
        'decisions': len(decisions),
        'loaded_violation_minutes': sum(
            1 for r in rows if r['violation'] and r['minute'] >= COLD_MINUTES),
        'acting_decisions': [
            {'minute': d['minute'], 'kind': d['kind'], 'count': d['count'],
             'forecast_used': d['forecast_used'],
             'reads_forecast': d['reads_forecast'],
             'reads_forecaster': d['reads_forecaster'],
             'writes_forecast': d['writes_forecast'],
             'writes_forecaster': d['writes_forecaster'],
             'vm_models': d['vm_models'],
             'flavor_models': d['flavor_models'], 'bounds': d['bounds']}
            for d in acted],
    }


# -- figure -----------------------------------------------------------------

def plot(path: str, scenario: Scenario, rows, actions) -> None:
    """Workload, nodes and p99 against time with the SLO line (like
    OnlineElastMan, Figs. 3.14 and 3.15).
    """
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    t = [r['minute'] + 0.5 for r in rows]
    fig, ax = plt.subplots(3, 1, figsize=(10, 9), sharex=True,
                           gridspec_kw={'height_ratios': [1.2, 1, 1.6]})
    ax[0].step(t, [r['target_ops'] for r in rows], where='mid', color='grey',
               ls='--', lw=1, label='YCSB target')
    ax[0].plot(t, [r['client_ops'] for r in rows], color='black', lw=1.2,
               label='client ops/s')
    ax[0].plot(t, [(r['server_reads_per_s'] or 0)
                   + (r['server_writes_per_s'] or 0) for r in rows],
               color='tab:blue', lw=0.9, label='served (monitor)')
    ax[0].set_ylabel('ops/s')
    ax[0].legend(fontsize=8, loc='upper left')
    ax[0].set_title('%s: elastman on a live local Cassandra cluster'
                    % scenario.name)
    ax[1].step(t, [r['nodes'] or 0 for r in rows], where='mid',
               color='tab:green', lw=1.6, label='serving nodes (UN)')
    ax[1].step(t, [r['servers'] or 0 for r in rows], where='mid',
               color='tab:olive', lw=0.8, ls=':', label='servers')
    for a in actions:
        if a['kind'] in ('scale_out', 'scale_in'):
            ax[1].axvline(a['created_minute'], color='tab:red' if
                          a['kind'] == 'scale_out' else 'tab:purple',
                          lw=0.8, alpha=0.6)
    ax[1].set_ylabel('VMs')
    top = max([r['servers'] or 0 for r in rows] + [scenario.size]) + 1
    ax[1].set_ylim(0, top)
    ax[1].legend(fontsize=8, loc='upper left')
    ax[2].plot(t, [r['server_read_p99_ms'] for r in rows], color='tab:blue',
               lw=1.2, marker='.', label='server p99 read (monitor)')
    ax[2].plot(t, [r['client_read_p99_ms'] for r in rows],
               color='tab:orange', lw=1, marker='.', alpha=0.8,
               label='client p99 read (YCSB)')
    ax[2].axhline(scenario.slo_ms, color='red', ls='--', lw=1,
                  label='SLO %g ms' % scenario.slo_ms)
    ax[2].set_yscale('log')
    ax[2].set_ylabel('p99 read latency (ms)')
    ax[2].set_xlabel('minutes')
    ax[2].legend(fontsize=8, loc='upper left')
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def format_summary(summary: Mapping[str, Any]) -> str:
    lines = ['%-26s %s' % (k, v) for k, v in summary.items()
             if k not in ('acting_decisions', 'scale_actions')]
    for a in summary.get('scale_actions', []):
        lines.append('action: %s' % a)
    for d in summary.get('acting_decisions', []):
        lines.append('decision at %.1f min: %s %s; forecast used: %s '
                     '(reads %s by %s, writes %s by %s); models: vm %s, '
                     'flavor %s; bounds %s' % (
                         d['minute'], d['kind'], d['count'],
                         d['forecast_used'], _num(d['reads_forecast']),
                         d['reads_forecaster'], _num(d['writes_forecast']),
                         d['writes_forecaster'], d['vm_models'] or '-',
                         d['flavor_models'] or '-', d['bounds']))
    return '\n'.join(lines)


def compare(elastic: Mapping[str, Any], static: Mapping[str, Any]
            ) -> dict[str, Any]:
    """The elastic run against the static one: the live line of the
    SLO-first issue is no loaded violation minute, fewer than static, at
    most 1.3x static's VM-hours.
    """
    out: dict[str, Any] = {}
    for name, s in (('elastic', elastic), ('static', static)):
        out[name] = {'violation_minutes': s.get('violation_minutes'),
                     'loaded_violation_minutes': s.get('loaded_violation_minutes'),
                     'vm_hours': s.get('vm_hours')}
    e, st = out['elastic'], out['static']
    if e['vm_hours'] and st['vm_hours']:
        out['vm_hours_ratio'] = e['vm_hours'] / st['vm_hours']
    if None not in (e['loaded_violation_minutes'], st['loaded_violation_minutes']) \
            and 'vm_hours_ratio' in out:
        out['met'] = (e['loaded_violation_minutes'] == 0
                      and st['loaded_violation_minutes'] > 0
                      and out['vm_hours_ratio'] <= 1.3)
    return out


def format_comparison(c: Mapping[str, Any]) -> str:
    lines = []
    for name in ('elastic', 'static'):
        r = c.get(name, {})
        lines.append('%-8s violation minutes %s (loaded %s), VM-hours %s' % (
            name, r.get('violation_minutes'), r.get('loaded_violation_minutes'),
            '%.2f' % r['vm_hours'] if r.get('vm_hours') is not None else '-'))
    if 'vm_hours_ratio' in c:
        lines.append('elastic / static VM-hours %.2f' % c['vm_hours_ratio'])
    if 'met' in c:
        lines.append('no loaded violation elastic, fewer than static, at most '
                     '1.3x its VM-hours: %s' % ('met' if c['met'] else 'not met'))
    return '\n'.join(lines)


def _num(value: Any) -> str:
    return '%.0f' % value if isinstance(value, (int, float)) else '-'
