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
"""``scale_in_headroom_s``: the controller reads when the last scale-out
was decided from the action journal, and the scale-in band holds that long;
before its first scale-out the cluster's creation starts it.
"""
import datetime

import pytest

from elastman.actuator import controller as controller_mod
from elastman.store import model_state as persistence
from tests.unit.actuator import test_controller_seen as seen


class JournalStore(seen.FakeStore):
    """The journal's newest actions first, as the store lists them."""

    def __init__(self, actions):
        super().__init__()
        self.journal = actions

    def list(self, cluster_id, limit=None):
        return super().list(cluster_id) if limit is None else self.journal


def _at(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)


@pytest.mark.parametrize('journal, created, band', [
    # a scale-out decided 10 minutes ago holds the band
    ([{'kind': 'scale_out', 'state': 'SUCCEEDED', 'created_at': _at(seen.NOW - 600),
       'updated_at': _at(seen.NOW - 300), 'result': {}, 'params': {}}], None, 0.5),
    # one that failed does not; the one before it is two hours old
    ([{'kind': 'scale_out', 'state': 'FAILED', 'created_at': _at(seen.NOW - 600),
       'updated_at': _at(seen.NOW - 300), 'result': {}, 'params': {}},
      {'kind': 'scale_out', 'state': 'SUCCEEDED', 'created_at': _at(seen.NOW - 7200),
       'updated_at': _at(seen.NOW - 6900), 'result': {}, 'params': {}}], None, 0.0),
    ([], None, 0.0),
    # a cluster created 10 minutes ago, which has not grown yet
    ([], _at(seen.NOW - 600), 0.5),
    ([], _at(seen.NOW - 7200), 0.0),
    # a scale-out newer than the creation counts from itself
    ([{'kind': 'scale_out', 'state': 'SUCCEEDED', 'created_at': _at(seen.NOW - 1800),
       'updated_at': _at(seen.NOW - 1500), 'result': {}, 'params': {}}],
     _at(seen.NOW - 5400), 0.5),
])
def test_the_scale_in_band_follows_the_clusters_last_growth(conf, journal, created,
                                                            band):
    store = JournalStore(journal)
    persistence.save_state(store, seen._registry())
    cluster = {'id': 'c1', 'created_at': created,
               'policy': {'min_size': 1, 'max_size': 3, 'warmup_s': 0,
                          'scale_in_headroom': 0.5, 'scale_in_headroom_s': 3600}}
    decision = controller_mod.Controller(conf, store).decide(cluster, now=seen.NOW,
                                                             record=False)
    assert decision.inputs['scale_in_headroom'] == band
