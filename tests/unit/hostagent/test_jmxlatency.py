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
"""The JMX latency signal's Python side against a stand-in for the poller
JVM (the real JVM and a real Cassandra node: the functional tests).
"""
from __future__ import annotations

import stat
import sys
import time

from elastman.hostagent import domains
from elastman.hostagent import jmxlatency
from elastman.hostagent import manager
from elastman.hostagent import probes
from tests.unit.hostagent import helpers

# Speaks LatencyPoller's protocol: for each WATCH it prints two polls of
# its node, the second with two reads in bucket 60; a node on port 1 fails.
FAKE_JVM = r'''#!%s
import json, sys
print(json.dumps({"id": "ready", "ok": True}), flush=True)
for line in sys.stdin:
    f = line.rstrip("\n").split("\t")
    if f[0] == "WATCH" and f[3] == "1":
        print(json.dumps({"id": f[1], "ok": False,
                          "error": "ConnectException: refused"}), flush=True)
    elif f[0] == "WATCH":
        print(json.dumps({"id": f[1], "ok": True, "n": 0, "d": []}),
              flush=True)
        print(json.dumps({"id": f[1], "ok": True, "n": 2, "d": [[60, 2]]}),
              flush=True)
'''


def _fake_java(tmp_path):
    path = tmp_path / 'java'
    path.write_text(FAKE_JVM % sys.executable)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def _drain(poller, want, timeout=10.0):
    got = []
    end = time.monotonic() + timeout
    while time.monotonic() < end and len(got) < want:
        got.extend(poller.drain())
        time.sleep(0.02)
    return got


def test_poller_turns_lines_into_timed_histograms(tmp_path):
    poller = jmxlatency.JmxLatencyPoller(_fake_java(tmp_path), 0.02)
    try:
        before = time.monotonic()
        poller.watch('vm-1', '10.0.0.5', 7199)
        poller.watch('vm-2', '10.0.0.6', 1)
        assert poller.wait_ready(10)
        got = _drain(poller, 2)
        assert [(vm, counts) for vm, _, counts in got] == [
            ('vm-1', {}), ('vm-1', {60: 2})]
        assert all(t >= before for _, t, _ in got)
        assert 'refused' in _drain_errors(poller, 'vm-2')
        assert poller.watched == {'vm-1': ('10.0.0.5', 7199),
                                  'vm-2': ('10.0.0.6', 1)}
        poller.unwatch('vm-2')
        assert set(poller.watched) == {'vm-1'}
    finally:
        poller.close()


def _drain_errors(poller, vm, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end and vm not in poller.errors:
        time.sleep(0.02)
    return poller.errors.get(vm, '')


def test_poller_restarts_a_dead_jvm_with_its_watches(tmp_path):
    poller = jmxlatency.JmxLatencyPoller(_fake_java(tmp_path), 0.02)
    try:
        poller.watch('vm-1', '10.0.0.5', 7199)
        assert len(_drain(poller, 2)) == 2
        poller._proc.kill()
        poller._proc.wait()
        got = _drain(poller, 2)          # drain() restarts it
        assert [vm for vm, _, _ in got] == ['vm-1', 'vm-1']
    finally:
        poller.close()


def test_missing_java_is_logged_not_raised(tmp_path):
    poller = jmxlatency.JmxLatencyPoller(str(tmp_path / 'no-java'), 0.02)
    poller.watch('vm-1', '10.0.0.5', 7199)
    assert poller.drain() == []
    poller.close()


class RecordingProbe(probes.BusProbe):
    def __init__(self):
        super().__init__()
        self.watches = []

    def watch(self, vm, host, port):
        self.watches.append((vm, host, port))


def test_agent_watches_each_lc_vm_at_the_endpoint_it_learns(tmp_path):
    conf = helpers.agent_conf(tmp_path, jmx_endpoints={'by-config': '10.0.0.9:7299'})
    agent = manager.HostAgentManager(conf)
    assert isinstance(agent.probe, probes.JmxProbe)     # the default
    agent.probe = RecordingProbe()
    lc = domains.Domain('u-1', 'inst-1', domains.LATENCY_CRITICAL, 35.0)
    agent.registry._domains[lc.uuid] = lc
    agent._lc_nodes[lc.uuid] = 0
    # the monitor's cast names the node's JMX endpoint (API 1.1)
    agent.push_latency(None, 'u-1', 12.0, jmx_host='10.0.0.5', jmx_port=7199)
    agent.push_latency(None, 'u-1', 13.0, jmx_host='10.0.0.5', jmx_port=7199)
    assert agent.probe.watches == [('u-1', '10.0.0.5', 7199)]
    assert [v for _, _, v in agent.probe.collect({'u-1'})] == [12.0, 13.0]
    # an endpoint in the domain metadata wins; then the configured one
    lc.jmx = '10.0.0.7:7399'
    assert agent._jmx_endpoint(lc) == ('10.0.0.7', 7399)
    other = domains.Domain('u-2', 'by-config', domains.LATENCY_CRITICAL)
    assert agent._jmx_endpoint(other) == ('10.0.0.9', 7299)
    # a BE VM's endpoint is remembered but not polled
    agent.push_latency(None, 'u-3', None, jmx_host='10.0.0.8', jmx_port=7199)
    assert len(agent.probe.watches) == 1 and 'u-3' in agent._endpoints
