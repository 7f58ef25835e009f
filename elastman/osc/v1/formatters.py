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
"""Columns and summaries of the OSC commands.

Each column is a cliff ``FormattableColumn``: a table shows its
``human_readable`` text (short, wrapped, summarised) and ``-f json`` or
``-f yaml`` its ``machine_readable`` value, the API's own data.
"""
from __future__ import annotations

import datetime
import textwrap
from typing import Any, Iterable, Mapping

from cliff import columns

#: Width of a decision's reason in ``decision list``: with the time, the
#: decision and the node count the table fits a 120-column terminal.
REASON_WIDTH = 64
TEXT_WIDTH = 72

_BOUNDS = {
    'exact': 'the SLO boundary',
    'lower': 'at least: no SLO violation seen this far',
    'upper': 'below: every sample that far violated the SLO',
    'unknown': 'no data yet',
}


class Text(columns.FormattableColumn):
    """Text wrapped to ``width`` columns in a table, raw in JSON."""

    width = TEXT_WIDTH

    def human_readable(self) -> str:
        if self._value is None:
            return ''
        return '\n'.join(textwrap.fill(part, self.width) or ''
                         for part in str(self._value).split('\n'))


class Reason(Text):
    width = REASON_WIDTH


class Narrow(Text):
    """A failure reason in ``action list``."""

    width = 28


class Summary(columns.FormattableColumn):
    """A summary line (or lines) for people, the whole value for machines."""

    def __init__(self, value: Any, text: str | Iterable[str]) -> None:
        super().__init__(value)
        self._text = text if isinstance(text, str) else '\n'.join(text)

    def human_readable(self) -> str:
        return self._text


def when(value: str | None) -> str:
    """An API timestamp as ``YYYY-MM-DD HH:MM:SS`` (UTC)."""
    if not value:
        return ''
    return value.replace('T', ' ')[:19]


def age(value: str | None, now: datetime.datetime | None = None) -> str:
    """How long ago an API timestamp was, e.g. ``42 s ago``."""
    if not value:
        return 'never'
    stamp = datetime.datetime.fromisoformat(value.rstrip('Z'))
    now = now or datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None)
    seconds = max(0, int((now - stamp).total_seconds()))
    if seconds < 120:
        return '%d s ago' % seconds
    if seconds < 7200:
        return '%d min ago' % (seconds // 60)
    return '%.1f h ago' % (seconds / 3600)


def num(value: Any) -> str:
    """A number for people: thousands separated, three significant digits
    below 100; '?' when unknown.
    """
    if value is None:
        return '?'
    try:
        value = float(value)
    except (TypeError, ValueError):
        return str(value)
    if abs(value) >= 100:
        return '{:,.0f}'.format(value)
    return '{:.3g}'.format(value)


def signed(value: Any) -> str:
    return '?' if value is None else '%+.2f' % float(value)


# -- decisions ----------------------------------------------------------------

def decision_nodes(decision: Mapping[str, Any]) -> str:
    """``3`` or ``3->4``: the serving nodes, and after the change."""
    record = decision.get('record') or {}
    size = record.get('size')
    if size is None:
        return '?'
    change = decision_change_count(decision)
    return '%d->%d' % (size, size + change) if change else '%d' % size


def decision_change_count(decision: Mapping[str, Any]) -> int:
    record = decision.get('record') or {}
    kind = decision.get('action') or record.get('kind')
    if kind == 'scale_out':
        return int(record.get('count') or 0)
    if kind == 'scale_in':
        removed = len(record.get('remove_nodes') or ())
        return -(removed or int(record.get('count') or 0))
    return 0


def decision_reason(decision: Mapping[str, Any]) -> str:
    record = decision.get('record') or {}
    reason = record.get('reason') or ''
    if record.get('dry_run') and decision_change_count(decision):
        reason = '[dry run, not carried out] ' + reason
    return reason


def decision_change(record: Mapping[str, Any]) -> str:
    kind = record.get('kind')
    if kind == 'scale_out':
        into = (' to the scale-out in flight %s' % record['top_up_of']
                if record.get('top_up_of') else '')
        return 'add %s node(s) of flavour %s%s' % (record.get('count'),
                                                   record.get('flavor'), into)
    if kind == 'trim' and record.get('keep_nodes'):
        return 'keep %s, which the scale-in in flight %s has not begun to remove' % (
            ', '.join(record['keep_nodes']), record.get('trim_of'))
    if kind == 'trim':
        return ('create %s node(s) of flavour %s fewer in the scale-out in '
                'flight %s' % (record.get('count'), record.get('flavor'),
                               record.get('trim_of')))
    if kind == 'scale_in':
        return 'remove %s' % ', '.join(record.get('remove_nodes') or ()) \
            if record.get('remove_nodes') else \
            'remove %s node(s)' % record.get('count')
    return 'none'


def decision_bounds(record: Mapping[str, Any]) -> str:
    parts = ['%s serving' % record.get('size', '?')]
    if record.get('floor') is not None or record.get('max_size'):
        parts.append('bounds %s..%s' % (record.get('floor', '?'),
                                        record.get('max_size', '?')))
    policy = (record.get('inputs') or {}).get('policy') or {}
    if policy:
        parts.append('alpha %s, beta %s, headroom %s' % (
            policy.get('alpha', record.get('alpha')),
            policy.get('beta', record.get('beta')),
            policy.get('headroom', 0)))
    elif 'alpha' in record:
        parts.append('alpha %s, beta %s' % (record.get('alpha'),
                                            record.get('beta')))
    band = (record.get('inputs') or {}).get('scale_in_headroom')
    if band:
        parts.append('scale-in band %s' % band)
    return '; '.join(parts)


def decision_workload(record: Mapping[str, Any]) -> list[str]:
    inputs = record.get('inputs') or {}
    predicted = inputs.get('predicted_cluster') or {}
    observed = inputs.get('observed_cluster') or {}
    forecast = inputs.get('forecast') or {}
    lines = []
    for metric in sorted(set(predicted) | set(observed)):
        line = '%s: planned for %s, observed %s' % (
            metric, num(predicted.get(metric)), num(observed.get(metric)))
        info = forecast.get(metric) or {}
        if info.get('forecaster'):
            line += ' (forecast %s by %s)' % (num(info.get('value')),
                                              info['forecaster'])
        elif info.get('ignored'):
            line += ' (forecast ignored: %s)' % info['ignored']
        lines.append(line)
    if inputs and not inputs.get('forecast_used', True):
        lines.append('no usable forecast: planned for the observed load')
    return lines


def decision_capacities(record: Mapping[str, Any]) -> list[str]:
    """One line per VM: its load, its capacity and how well it is known."""
    lines = []
    for vm in record.get('vms') or ():
        bound = vm.get('bound') or 'unknown'
        line = '%s (%s): load %s of capacity %s [%s]' % (
            vm.get('node_id'), vm.get('flavor') or '?', num(vm.get('load')),
            num(vm.get('capacity')), bound)
        target = vm.get('target')
        if target is not None and vm.get('capacity') is not None and \
                abs(target - vm['capacity']) > 1e-6 * abs(vm['capacity']):
            line += ' (target %s)' % num(target)
        line += ', %s' % vm.get('status')
        if vm.get('term') not in (None, 0, 0.0):
            line += ', (w-t)/t %s' % signed(vm.get('term'))
        lines.append(line)
    return lines


def decision_flavors(record: Mapping[str, Any]) -> list[str]:
    lines = []
    for name, f in sorted((record.get('flavors') or {}).items()):
        lines.append(
            '%s: %s VMs, %s over, %s uncertain, %s unknown; sum of terms %s; '
            'wants %+d / -%d' % (
                name, f.get('vms', 0), f.get('violators', 0),
                f.get('uncertain', 0), f.get('unknown', 0),
                signed(f.get('excess_sum')), f.get('out_bounded') or 0,
                f.get('in_bounded') or 0))
    return lines


# -- models ---------------------------------------------------------------

def model_cells(model: Mapping[str, Any]) -> str:
    doc = ((model.get('document') or {}).get('model') or {})
    cells = doc.get('n_cells', (model.get('summary') or {}).get('n_cells'))
    if cells is None:
        return '?'
    met = doc.get('n_met')
    return '%s (%s SLO-met)' % (cells, met) if met is not None else str(cells)


def model_slo(doc: Mapping[str, Any]) -> str:
    if not doc.get('slo_metric'):
        return ''
    return '%s <= %s ms' % (doc['slo_metric'], num(doc.get('slo_threshold_ms')))


def _ray_point(fitted, loads: Mapping[int, float]) -> list[float]:
    """A workload point: the given load coordinates, the others at the
    middle of the model's data.
    """
    import numpy as np
    point = []
    for i, is_load in enumerate(fitted.load_mask):
        if is_load:
            point.append(loads.get(i, 0.0))
        elif fitted.mean is not None:
            point.append(float(fitted.mean[i]))
        elif fitted.points is not None and len(fitted.points):
            point.append(float(np.mean(fitted.points[:, i])))
        else:
            point.append(0.0)
    return point


def model_capacities(model: Mapping[str, Any]) -> list[str]:
    """The capacity along a read-only, a write-only and an even ray, with
    how well each is known; empty when the document cannot be read.
    """
    from elastman.capacity import capacity as capacity_mod
    from elastman.capacity import serialization
    try:
        fitted, _meta = serialization.model_from_dict(model['document'])
    except (KeyError, TypeError, ValueError):
        return []
    load_idx = [i for i, m in enumerate(fitted.load_mask) if m]
    names = fitted.features
    rays = [('%s only' % names[i], {i: 1.0}) for i in load_idx]
    if len(load_idx) > 1:
        rays.append(('even mix', {i: 1.0 / len(load_idx) for i in load_idx}))
    others = ['%s %s' % (names[i], num(v))
              for i, v in enumerate(_ray_point(fitted, {}))
              if not fitted.load_mask[i]]
    lines = []
    for label, loads in rays:
        try:
            est = capacity_mod.capacity(fitted, _ray_point(fitted, loads))
        except ValueError as exc:
            lines.append('%s: %s' % (label, exc))
            continue
        line = '%s: %s ops/s, %s' % (label, num(est.capacity),
                                     _BOUNDS.get(est.bound, est.bound))
        if est.seen is not None and est.seen == est.seen:
            line += ' (data up to %s)' % num(est.seen)
        lines.append(line)
    if others and lines:
        lines.append('at %s' % ', '.join(others))
    return lines


def model_params(params: Mapping[str, Any]) -> str:
    keys = ('confidence', 'buffer_size', 'update_period', 'kernel', 'C')
    shown = ['%s %s' % (k, params[k]) for k in keys if k in params]
    return ', '.join(shown)


# -- clusters and actions -----------------------------------------------------

def action_change(action: Mapping[str, Any]) -> str:
    params = action.get('params') or {}
    if params.get('nodes'):
        return 'remove %s' % ', '.join(params['nodes'])
    if params.get('count') is not None:
        change = '%s node(s)' % params['count']
        if action.get('kind') == 'scale_out':
            change = 'add ' + change
        if params.get('flavor'):
            change += ' of %s' % params['flavor']
        return change
    return ''


def policy_summary(policy: Mapping[str, Any] | None) -> str:
    if not policy:
        return 'none: elastman does not scale this cluster'
    lines = ['%s <= %s ms; %s..%s nodes' % (
        policy.get('slo_metric', '?'), num(policy.get('slo_threshold_ms')),
        policy.get('min_size', '?'), policy.get('max_size', '?')),
        'every %s s, cool-down %s s' % (policy.get('control_period_s', '?'),
                                        policy.get('cooldown_s', '?'))]
    if policy.get('dry_run'):
        lines.append('dry run (decides, does not act)')
    return '\n'.join(lines)


def node_lines(nodes: Iterable[Mapping[str, Any]]) -> list[str]:
    return ['%s %s %s%s' % (n.get('id'), n.get('address') or '-',
                            n.get('state'), ' seed' if n.get('seed') else '')
            for n in nodes]


def health(cluster: Mapping[str, Any], last: Mapping[str, Any] | None,
           now: datetime.datetime | None = None) -> list[str]:
    """The nodes' states and whether the control loop is deciding."""
    states: dict[str, int] = {}
    for node in cluster.get('nodes') or ():
        states[node.get('state')] = states.get(node.get('state'), 0) + 1
    lines = ['nodes: %s' % (', '.join('%d %s' % (n, s) for s, n in
                                      sorted(states.items())) or 'none')]
    policy = cluster.get('policy')
    if not policy:
        lines.append('control loop: off (no scaling policy)')
    elif last is None:
        lines.append('control loop: no decision yet')
    else:
        period = policy.get('control_period_s') or 0
        text = 'control loop: last decision %s' % age(last.get('ts'), now)
        stamp = datetime.datetime.fromisoformat(last['ts'].rstrip('Z'))
        now = now or datetime.datetime.now(datetime.timezone.utc).replace(
            tzinfo=None)
        if period and (now - stamp).total_seconds() > 3 * period:
            lines.append(text)
            lines.append('more than 3 control periods (%s s) without a '
                         'decision: is the actuator running?' % period)
        else:
            lines.append(text + ' (every %s s)' % period)
    if cluster.get('status_reason'):
        lines.append('status: %s' % cluster['status_reason'])
    return lines


def _epoch(value: str | None) -> float | None:
    if not value:
        return None
    stamp = datetime.datetime.fromisoformat(value.rstrip('Z'))
    return stamp.replace(tzinfo=datetime.timezone.utc).timestamp()


def requested_by(action: Mapping[str, Any],
                 decisions: Iterable[Mapping[str, Any]]
                 ) -> Mapping[str, Any] | None:
    """The decision that journalled ``action`` (its ``decided_at``)."""
    decided = (action.get('params') or {}).get('decided_at')
    if decided is None:
        return None
    for decision in decisions:
        at = _epoch(decision.get('ts'))
        if at is not None and abs(at - float(decided)) < 1.0:
            return decision
    return None


def doing(actions: list[Mapping[str, Any]],
          decisions: list[Mapping[str, Any]]) -> str:
    """The action in flight and why it was asked for, or idle."""
    if not actions:
        return 'idle: no action in flight'
    lines = []
    for action in actions:
        line = '%s: %s, %s at step %s since %s' % (
            action.get('kind'), action_change(action) or '-',
            action.get('state'), action.get('step'),
            when(action.get('created_at')))
        decision = requested_by(action, decisions)
        if decision is not None:
            line += '; decided because: %s' % decision_reason(decision)
        elif (action.get('params') or {}).get('decided_at') is None:
            line += '; requested through the API'
        lines.append(textwrap.fill(line, TEXT_WIDTH))
    return '\n'.join(lines)
