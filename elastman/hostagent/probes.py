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
"""Latency probes feeding the BALM colour monitor.

A probe returns the latest latency samples of latency-critical VMs, each
``(vm, t, value)``: ``value`` is a latency in ms, or a histogram
``{bucket: count}`` of the reads that completed since the previous poll.

* ``jmx`` (default): the guest's Cassandra read-latency histogram over JMX
  every poll (:mod:`elastman.hostagent.jmxlatency`), for each VM whose JMX
  endpoint is known; the monitor's pushed p99 (``bus``) for the others;
* ``bus``: only the samples the monitor casts (``push_latency``, one p99
  per monitor interval: too slow for BALM's 3 s window on its own);
* ``local``: runs a configured command per VM and parses a number;
* ``none``: nothing (controller stays idle).
"""
from __future__ import annotations

import shlex
import subprocess
import threading
import time

from oslo_log import log as logging

LOG = logging.getLogger(__name__)


class Probe:
    name = 'none'

    def watch(self, vm: str, host: str, port: int) -> None:
        """A VM's JMX endpoint (used by the ``jmx`` probe only)."""

    def unwatch(self, vm: str) -> None:
        """Forget a VM's endpoint."""

    def close(self) -> None:
        """Release what the probe started."""

    def collect(self, vms: dict[str, str]) -> list[tuple[str, float, float]]:
        """(vm uuid, time, latency ms or {bucket: count}) samples since
        the last call.

        ``vms`` maps uuid -> name of the latency-critical VMs.
        """
        return []


class BusProbe(Probe):
    """Samples pushed from the bus (monitor notifications or RPC)."""

    name = 'bus'

    def __init__(self, max_pending: int = 10000) -> None:
        self._lock = threading.Lock()
        self._pending: list[tuple[str, float, float]] = []
        self._max = max_pending

    def push(self, vm: str, latency_ms: float, ts: float | None = None) -> None:
        with self._lock:
            if len(self._pending) >= self._max:
                self._pending.pop(0)
            self._pending.append((vm, time.monotonic() if ts is None else ts,
                                  float(latency_ms)))

    def collect(self, vms):
        with self._lock:
            out, self._pending = self._pending, []
        return [s for s in out if s[0] in vms]


class CommandProbe(Probe):
    """Runs ``command`` (with {uuid} and {name}) and reads a latency in ms."""

    name = 'local'

    def __init__(self, command: str, timeout: float = 1.0) -> None:
        self.command = command
        self.timeout = timeout

    def collect(self, vms):
        out = []
        for uuid, name in vms.items():
            argv = [a.format(uuid=uuid, name=name)
                    for a in shlex.split(self.command)]
            try:
                res = subprocess.run(argv, capture_output=True, text=True,
                                     timeout=self.timeout, check=True)
                out.append((uuid, time.monotonic(),
                            float(res.stdout.strip().split()[0])))
            except (OSError, subprocess.SubprocessError, ValueError,
                    IndexError) as exc:
                LOG.debug('probe for %s failed: %s', name, exc)
        return out


class JmxProbe(BusProbe):
    """Per-poll histograms over JMX; pushed p99s for VMs without one."""

    name = 'jmx'

    def __init__(self, poller) -> None:
        super().__init__()
        self.poller = poller

    def watch(self, vm: str, host: str, port: int) -> None:
        self.poller.watch(vm, host, port)

    def unwatch(self, vm: str) -> None:
        self.poller.unwatch(vm)

    def collect(self, vms):
        polled = [s for s in self.poller.drain() if s[0] in vms]
        return super().collect(vms) + polled

    def close(self) -> None:
        self.poller.close()


def get_probe(conf_group) -> Probe:
    if conf_group.probe == 'jmx':
        from elastman.hostagent import jmxlatency
        return JmxProbe(jmxlatency.JmxLatencyPoller(
            conf_group.java, conf_group.poll_interval,
            conf_group.jmx_user, conf_group.jmx_password))
    if conf_group.probe == 'bus':
        return BusProbe()
    if conf_group.probe == 'local' and conf_group.local_probe_command:
        return CommandProbe(conf_group.local_probe_command)
    return Probe()
