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
"""Two trainer processes split the clusters through leases, and when one is
killed the other holds its clusters within one lease TTL."""
import shutil
import signal
import time

from tests.functional import services
from tests.functional import test_processes

CLUSTERS = 12
PERIOD = 2            # [trainer] update_period = [monitor] sampling_interval
TTL = 3 * PERIOD      # the trainer's lease TTL at these periods


def _config(config_file, tmp_path, host):
    path = config_file(DEFAULT={'host': host, 'transport_url': 'fake://'},
                       trainer={'update_period': PERIOD},
                       monitor={'sampling_interval': PERIOD})
    mine = str(tmp_path / ('%s.conf' % host))
    shutil.copy(path, mine)
    return mine


def _holders(store, ids):
    return {c: store.leases.holder('trainer/%s' % c) for c in ids}


def test_a_killed_trainer_s_clusters_move_to_the_other_within_a_ttl(
        store, config_file, tmp_path):
    ids = [str(store.clusters.create('p', 'c%d' % i, spec={})['id'])
           for i in range(CLUSTERS)]
    procs = [test_processes._Process('elastman.cmd.trainer', '--config-file',
                                     _config(config_file, tmp_path, host))
             for host in ('trainer-a', 'trainer-b')]
    try:
        for proc in procs:
            proc.wait_for_line('trainer worker started', timeout=120)

        def split():
            held = _holders(store, ids)
            return set(held.values()) == {'trainer-a', 'trainer-b'} and held
        held = services.wait_for(split, timeout=60, interval=0.5)
        theirs = [c for c, h in held.items() if h == 'trainer-b']
        assert 0 < len(theirs) < CLUSTERS
        assert sorted(store.members.members('trainer')) == ['trainer-a',
                                                            'trainer-b']

        procs[1].popen.send_signal(signal.SIGKILL)
        killed = time.monotonic()

        def moved():
            return all(h == 'trainer-a'
                       for h in _holders(store, theirs).values())
        services.wait_for(moved, timeout=TTL * 4, interval=0.2)
        took = time.monotonic() - killed
        # the leases expire at most one TTL after trainer-b last renewed
        # them, and expiry is counted in whole seconds
        assert took <= TTL + 1.5, took
        assert set(_holders(store, ids).values()) == {'trainer-a'}
        assert store.members.members('trainer') == ['trainer-a']
        procs[0].wait_for_line('took over cluster', timeout=10)
        assert procs[0].terminate() == 0, procs[0].output
        # a copy that stops leaves and frees its leases at once
        assert store.members.members('trainer') == []
        assert set(_holders(store, ids).values()) == {None}
    finally:
        for proc in procs:
            proc.kill()
