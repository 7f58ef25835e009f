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
"""The controller raises the headroom by the cluster's violated minutes,
read from its monitor rounds (``cluster_workload``) once each.
"""
import datetime
import math

import pytest

from elastman.actuator import controller as controller_mod
from tests.unit.actuator import test_controller_guard as guarded

NOW = guarded.NOW


class ViolatedSamples(guarded.Samples):
    """Green nodes; the cluster's own p99 above the SLO in ``violated``
    one-minute rounds, the newest an hour before ``NOW``; ``since`` of each
    read is kept.
    """

    def __init__(self, violated):
        super().__init__([10.0] * 3)
        self.rounds = [(NOW - 3600.0 - 60.0 * k, 50.0) for k in range(violated)]
        self.since = []

    def cluster_workload(self, cluster_id, since):
        self.since.append(since)
        rows = [{'ts': datetime.datetime.fromtimestamp(at, datetime.timezone.utc
                                                       ).replace(tzinfo=None),
                 'reads_per_s': 2475.0, 'read_with_queue_p99_ms': p99}
                for at, p99 in sorted(self.rounds)]
        return [r for r in rows if r['ts'] >= since.replace(tzinfo=None)]


POLICY = {'min_size': 3, 'max_size': 9, 'warmup_s': 0,
          'slo_metric': 'read_with_queue_p99_ms', 'slo_threshold_ms': 35.0,
          'headroom': 0.2, 'headroom_per_violation': 0.01,
          'headroom_memory_s': 3600.0}


def _decide(conf, samples, controller=None, now=NOW, **policy):
    conf.set_override('sampling_interval', 60, group='monitor')
    store = guarded.Store([10.0] * 3)
    store.samples = samples
    controller = controller or controller_mod.Controller(conf, store)
    cluster = {'id': 'c1', 'created_at': None, 'policy': dict(POLICY, **policy)}
    return controller, controller.decide(cluster, now=now, record=False)


def test_violated_minutes_raise_the_headroom_the_decision_uses(conf):
    _, d = _decide(conf, ViolatedSamples(10))
    # ten minutes, the newest an hour (one time constant) old
    minutes = sum(math.exp(-(3600.0 + 60.0 * k) / 3600.0) for k in range(10))
    assert d.inputs['headroom']['policy'] == 0.2
    assert d.inputs['headroom']['used'] == pytest.approx(0.2 + 0.01 * minutes)
    assert d.inputs['headroom']['violated_minutes'] == pytest.approx(minutes, abs=1e-3)
    assert d.inputs['policy']['headroom'] == pytest.approx(0.2 + 0.01 * minutes)


def test_a_fixed_headroom_reads_no_history(conf):
    samples = ViolatedSamples(10)
    _, d = _decide(conf, samples, headroom_per_violation=0.0)
    assert d.inputs['headroom'] == {'policy': 0.2, 'used': 0.2,
                                    'violated_minutes': 0.0}
    # only the planning loop's own window: the trend's 600 s
    oldest = min(samples.since).replace(tzinfo=datetime.timezone.utc)
    assert NOW - oldest.timestamp() == pytest.approx(600.0)


def test_each_round_is_read_once(conf):
    samples = ViolatedSamples(10)
    controller, first = _decide(conf, samples)
    # the memory: 1% of a violation's weight is 4.6 time constants back
    memory_reads = [s for s in samples.since
                    if NOW - s.replace(tzinfo=datetime.timezone.utc).timestamp() > 3600]
    assert len(memory_reads) == 1
    samples.since.clear()
    _, again = _decide(conf, samples, controller, now=NOW + 600.0)
    # from the newest round read, not the whole memory; the same minutes,
    # ten minutes older
    newest = NOW - 3600.0
    assert any(s.replace(tzinfo=datetime.timezone.utc).timestamp() == newest
               for s in samples.since)
    assert again.inputs['headroom']['violated_minutes'] == pytest.approx(
        first.inputs['headroom']['violated_minutes'] * math.exp(-600.0 / 3600.0),
        abs=1e-3)
