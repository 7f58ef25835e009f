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
"""Two processes of a worker split the clusters through leases, and when one
is killed the other holds its clusters within one lease TTL: the trainer,
the predictor, the monitor and the actuator, each with short periods."""
import shutil
import signal
import time

import pytest

from tests.functional import services

CLUSTERS = 12
PERIOD = 2            # each worker's period, seconds

# worker -> (its options at PERIOD, its lease TTL at those options)
WORKERS = {
    'trainer': ({'trainer': {'update_period': PERIOD},
                 'monitor': {'sampling_interval': PERIOD}}, 3 * PERIOD),
    'predictor': ({'predictor': {'period': PERIOD}}, 3 * PERIOD + 1),
    # the monitor's TTL has a floor of 30 s
    'monitor': ({'monitor': {'sampling_interval': PERIOD}}, 30),
    # a round every control period (at most 30 s); the clusters have no
    # node, so it decides and starts nothing
    'actuator': ({'actuator': {'control_period': PERIOD}}, 3 * PERIOD + 1),
}


def _config(config_file, tmp_path, host, options):
    path = config_file(DEFAULT={'host': host, 'transport_url': 'fake://'},
                       **options)
    mine = str(tmp_path / ('%s.conf' % host))
    shutil.copy(path, mine)
    return mine


def _holders(store, worker, ids):
    return {c: store.leases.holder('%s/%s' % (worker, c)) for c in ids}


@pytest.mark.parametrize('worker', sorted(WORKERS))
def test_a_killed_copy_s_clusters_move_to_the_other_within_a_ttl(
        worker, store, config_file, tmp_path):
    options, ttl = WORKERS[worker]
    ids = [str(store.clusters.create('p', '%s-%d' % (worker, i),
                                     spec={})['id'])
           for i in range(CLUSTERS)]
    hosts = ('%s-a' % worker, '%s-b' % worker)
    procs = [services.Process('-m', 'elastman.cmd.%s' % worker,
                              '--config-file',
                              _config(config_file, tmp_path, host, options))
             for host in hosts]
    try:
        for proc in procs:
            proc.wait_for_line('%s worker started' % worker, timeout=120)

        def split():
            held = _holders(store, worker, ids)
            return set(held.values()) == set(hosts) and held
        held = services.wait_for(split, timeout=60 + ttl, interval=0.5)
        theirs = [c for c, h in held.items() if h == hosts[1]]
        assert 0 < len(theirs) < CLUSTERS
        assert sorted(store.members.members(worker)) == list(hosts)

        procs[1].popen.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        # what the killed copy held expires within one TTL by the store's
        # own clock, whatever this machine's scheduling does to the wait
        left = [store.leases.remaining('%s/%s' % (worker, c))
                for c in theirs]
        for holder, remaining in left:
            # still the killed copy's, with a TTL; or expired already
            assert holder in (hosts[1], None), left
            assert holder is None or 0 < remaining <= ttl, left

        def moved():
            return all(h == hosts[0]
                       for h in _holders(store, worker, theirs).values())
        services.wait_for(moved, timeout=ttl * 4, interval=0.2)
        took = time.monotonic() - killed
        print('%s: %d clusters taken over in %.1f s (lease TTL %d s)'
              % (worker, len(theirs), took, ttl))
        assert set(_holders(store, worker, ids).values()) == {hosts[0]}
        assert store.members.members(worker) == [hosts[0]]
        procs[0].wait_for_line('took over cluster', timeout=10)
        assert procs[0].terminate() == 0, procs[0].output
        # a copy that stops leaves and frees its leases at once
        assert store.members.members(worker) == []
        assert set(_holders(store, worker, ids).values()) == {None}
    finally:
        for proc in procs:
            proc.kill()
