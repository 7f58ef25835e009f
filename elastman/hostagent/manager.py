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
"""elastman-hostagent: hook events -> placement, and the BALM controller.

Threads: the hook listener (unix datagrams), a placement worker (libvirt
calls happen here, after the hook returned), and the controller loop
(one tick per ``[hostagent] poll_interval``). The agent writes only below
``[hostagent] state_dir`` and ``[hostagent] resctrl_root``.
"""
from __future__ import annotations

import json
import os
import queue
import threading
import time

from oslo_log import log as logging
import oslo_messaging as messaging

from elastman.common import manager
from elastman.hostagent import balm
from elastman.hostagent import cpualloc
from elastman.hostagent import domains
from elastman.hostagent import fsguard
from elastman.hostagent import interference
from elastman.hostagent import perfcounters
from elastman.hostagent import placement
from elastman.hostagent import platform as platform_mod
from elastman.hostagent import probes
from elastman.hostagent import resctrl
from elastman.hostagent import topology

LOG = logging.getLogger(__name__)


def socket_path(group) -> str:
    return group.socket_path or os.path.join(group.state_dir, 'hook.sock')


class HostAgentManager(manager.Manager):
    """RPC API 2.0: push_latency (the monitor casts each LC VM's p99 and
    the JMX endpoint of its Cassandra node).
    """

    WORKER = 'hostagent'
    target = messaging.Target(version='2.0')
    RPC_METHODS = ('push_latency',)

    def __init__(self, conf, transport=None, libvirt_open=None) -> None:
        super().__init__(conf)
        self.group = conf.hostagent
        self.transport = transport
        self.guard = fsguard.FsGuard(self.group.state_dir,
                                     self.group.resctrl_root)
        self.socket_path = socket_path(self.group)
        self.guard.check(self.socket_path)
        self._libvirt_open = libvirt_open
        self._conn = None
        self.topology: topology.Topology | None = None
        self.registry = domains.DomainRegistry(on_change=self._on_change)
        self.listener = domains.HookListener(self.socket_path,
                                             self.registry.handle_event)
        self.probe = probes.get_probe(self.group)
        self.platform: platform_mod.LinuxPlatform | None = None
        self.monitor = balm.SloMonitor(
            window=self.group.window, pct=self.group.window_percentile,
            min_samples=self.group.min_samples,
            yellow=self.group.yellow_threshold,
            green=self.group.green_threshold,
            request_pct=self.group.request_percentile)
        self.controller: balm.BalmController | None = None
        self._queue: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lc_nodes: dict[str, int] = {}
        # JMX endpoints of VMs' Cassandra nodes, from the monitor's pushes
        self._endpoints: dict[str, tuple[str, int]] = {}
        # the interference index: every placed VM's QEMU pid and home node
        self._pids: dict[str, int] = {}
        self._homes: dict[str, int] = {}
        self.counters = interference.CounterReader()
        self._last_counters: dict[str, interference.Counters] = {}
        self._normaliser = interference.Normaliser()
        self.index_model = interference.IndexModel()
        # adaptive CPU allocation
        self.allocator: cpualloc.HostAllocator | None = None
        self._vcpus: dict[str, int] = {}
        self._last_danger = -1e9
        self._cpu_prev: dict[str, tuple[float, float, float]] = {}
        self._uipt: dict[int, perfcounters.ProcessCounters | None] = {}
        self._notifier = None
        self.events_applied = 0

    # lifecycle -----------------------------------------------------------
    def start(self) -> None:
        super().start()
        self.guard.makedirs(self.group.state_dir)
        self.topology = topology.discover(self.group.sysfs_root,
                                          self.group.resctrl_root)
        rc = None
        if self.topology.resctrl.mba:
            rc = resctrl.ResctrlManager(self.group.resctrl_root, self.guard,
                                        self.topology.resctrl)
        self.domain_ops = placement.DomainOps(self._connection, self.topology)
        self.platform = platform_mod.LinuxPlatform(
            self.topology, rc, domain_ops=self.domain_ops)
        self.counters = interference.CounterReader(rc)
        if self.group.cpu_allocation == 'adaptive':
            self.allocator = cpualloc.HostAllocator(
                {n: len(node.cpus) for n, node in self.topology.nodes.items()
                 if node.cpus}, algorithm=self.group.cpu_algorithm)
        cfg = balm.BalmConfig.from_conf(self.group)
        cfg.mba_min = max(cfg.mba_min, self.topology.resctrl.mba_min
                          if self.topology.resctrl.mba else cfg.mba_min)
        self.controller = balm.BalmController(self.platform, self.monitor, cfg,
                                              escalate=self._escalate)
        self._stop.clear()
        self.listener.start()
        self._spawn(self._placement_loop, 'hostagent-placement')
        if self.group.controller_enabled:
            self._spawn(self._controller_loop, 'hostagent-balm')
        self._queue.put(('sync', None))
        LOG.info('host agent started: %d NUMA node(s), MBA %s, MBM %s',
                 len(self.topology.nodes), self.topology.resctrl.mba,
                 self.topology.resctrl.mbm_total)

    def stop(self) -> None:
        self._stop.set()
        self._queue.put(('stop', None))
        self.listener.stop()
        for t in self._threads:
            t.join(5)
        self._threads = []
        self.probe.close()
        self.counters.close()
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # noqa: BLE001
                pass
            self._conn = None

    def periodic_tasks(self):
        return [(self.resync, 60.0),
                (self.report_interference, self.group.report_interval),
                (self.allocate_cpu, self.group.cpu_interval)]

    def _spawn(self, target, name: str) -> None:
        t = threading.Thread(target=target, name=name, daemon=True)
        t.start()
        self._threads.append(t)

    # libvirt -----------------------------------------------------------------
    def _connection(self):
        if self._conn is not None:
            try:
                if self._conn.isAlive():
                    return self._conn
            except Exception:  # noqa: BLE001
                pass
            self._conn = None
        opener = self._libvirt_open
        if opener is None:
            import libvirt
            opener = libvirt.open
        self._conn = opener(self.group.libvirt_uri)
        return self._conn

    def resync(self) -> None:
        """Re-read the running domains from libvirt (start-up, reconnect)."""
        self._queue.put(('sync', None))

    def _sync(self) -> None:
        try:
            listed = domains.list_libvirt_domains(self._connection())
        except Exception as exc:  # noqa: BLE001
            LOG.warning('cannot list domains from %s: %s',
                        self.group.libvirt_uri, exc)
            return
        self.registry.sync(listed)

    # events -> placement -------------------------------------------------------
    def _on_change(self, dom: domains.Domain, op: str) -> None:
        self._queue.put((op, dom))

    def _placement_loop(self) -> None:
        while not self._stop.is_set():
            try:
                op, dom = self._queue.get(timeout=0.5)
            except queue.Empty:
                continue
            if op == 'stop':
                return
            try:
                if op == 'sync':
                    self._sync()
                elif op in ('started', 'reconnect', 'restore', 'attach'):
                    self._place(dom)
                elif op in domains.GONE_OPS:
                    self._forget(dom)
            except Exception:  # noqa: BLE001
                LOG.exception('handling %s of %s failed', op,
                              getattr(dom, 'name', '?'))

    def _place(self, dom: domains.Domain) -> None:
        if not self.group.apply_placement:
            return
        lc_per_node: dict[int, int] = {}
        for uuid, node in self._lc_nodes.items():
            if uuid != dom.uuid:
                lc_per_node[node] = lc_per_node.get(node, 0) + 1
        decision = placement.decide(dom, self.topology, lc_per_node,
                                    self.group.lc_vcpu_quota,
                                    self.group.be_vcpu_quota)
        applied = placement.apply(self._connection(), dom, decision)
        pid = placement.qemu_pid(dom)
        if pid:
            self._pids[dom.uuid] = pid
        self._homes[dom.uuid] = self._home_node(decision)
        if dom.latency_critical:
            self._lc_nodes[dom.uuid] = decision.node
            self.monitor.register(dom.uuid, decision.node,
                                  dom.slo_ms or self.group.default_slo_ms)
            self._watch_latency(dom)
        else:
            self.platform.vms[dom.uuid] = {
                'pid': pid, 'home': self._home_node(decision),
                'allowed': decision.memory_nodes, 'cpu_share': 1.0}
            self.domain_ops.quotas[dom.uuid] = \
                applied.get('vcpu_quota', -1)
            if self.platform.resctrl is not None and pid:
                self.platform.resctrl.ensure_group(dom.uuid, pid)
                applied['resctrl_group'] = \
                    self.platform.resctrl.group_path(dom.uuid)
            self.controller.set_best_effort(
                [u for u, v in self.platform.vms.items() if v.get('pid')])
        dom.placement = {'decision': decision.to_dict(), 'applied': applied,
                         'at': time.time()}
        self.events_applied += 1
        self._save()
        LOG.info('placed %s (%s): %s', dom.name, dom.vm_class, applied)

    def _home_node(self, decision: placement.Decision) -> int:
        return decision.node if decision.node is not None \
            else self.topology.node_ids[0]

    def _jmx_endpoint(self, dom: domains.Domain) -> tuple[str, int] | None:
        """Where the domain's Cassandra answers JMX: its metadata, the
        monitor's last push, or ``[hostagent] jmx_endpoints``.
        """
        configured = self.group.jmx_endpoints or {}
        for value in (dom.jmx, configured.get(dom.uuid),
                      configured.get(dom.name)):
            endpoint = domains.parse_endpoint(value)
            if endpoint:
                return endpoint
        return self._endpoints.get(dom.uuid)

    def _watch_latency(self, dom: domains.Domain) -> None:
        endpoint = self._jmx_endpoint(dom)
        if endpoint is not None:
            self.probe.watch(dom.uuid, *endpoint)

    def _forget(self, dom: domains.Domain) -> None:
        self._lc_nodes.pop(dom.uuid, None)
        self._pids.pop(dom.uuid, None)
        self._homes.pop(dom.uuid, None)
        if self.platform is not None:
            self.domain_ops.forget(dom.uuid)
        if self.allocator is not None:
            self.allocator.forget(dom.uuid)
        self._cpu_prev.pop(dom.uuid, None)
        self.monitor.unregister(dom.uuid)
        self.probe.unwatch(dom.uuid)
        if self.platform is not None and \
                self.platform.vms.pop(dom.uuid, None) is not None:
            if self.platform.resctrl is not None:
                try:
                    self.platform.resctrl.remove_group(dom.uuid)
                except OSError as exc:
                    LOG.warning('resctrl group of %s not removed: %s',
                                dom.name, exc)
            self.controller.set_best_effort(list(self.platform.vms))
        self._save()

    def _save(self) -> None:
        data = {d.uuid: d.to_dict() for d in self.registry.all()}
        self.guard.write_atomic(os.path.join(self.group.state_dir,
                                             'domains.json'),
                                json.dumps(data, indent=1, default=str))

    # controller ---------------------------------------------------------------
    def _controller_loop(self) -> None:
        interval = self.group.poll_interval
        while not self._stop.wait(interval):
            lcs = {u: d.name for u, d in
                   ((u, self.registry.get(u)) for u in self._lc_nodes)
                   if d is not None}
            for vm, ts, value in self.probe.collect(lcs):
                if isinstance(value, dict):
                    self.monitor.add_histogram(vm, ts, value)
                else:
                    self.monitor.add_sample(vm, ts, value)
            if not self.monitor.vms:
                continue
            try:
                self.controller.tick()
            except Exception:  # noqa: BLE001
                LOG.exception('BALM controller failed; restarting its loop')
                self.controller._gen = None
            self.cpu_danger(time.monotonic())

    def _escalate(self, info: dict) -> None:
        self._notify('hostagent.escalation', dict(info, host=self.conf.host))

    def _performance(self, vm: str, pid: int) -> tuple[float, float] | None:
        """(CPUs used, UIPT or CPU time per second) since the last call."""
        try:
            cpu, _, _ = interference.read_proc(pid)
        except (OSError, ValueError, IndexError):
            return None
        if pid not in self._uipt:
            self._uipt[pid] = perfcounters.open_counters(
                pid, ('instructions_user',))
        counters = self._uipt[pid]
        instr = counters.read()['instructions_user'] if counters else None
        now = time.monotonic()
        prev = self._cpu_prev.get(vm)
        self._cpu_prev[vm] = (now, cpu, instr if instr is not None else -1)
        if prev is None or now <= prev[0]:
            return None
        used = (cpu - prev[1]) / (now - prev[0])
        if instr is not None and prev[2] >= 0:
            return used, (instr - prev[2]) / (now - prev[0])
        return used, used

    def allocate_cpu(self) -> dict[str, float]:
        """One measurement interval of the adaptive CPU allocation: every
        VM's performance, the LC VMs' colours, new caps for the BE VMs.
        """
        if self.allocator is None or self.platform is None:
            return {}
        ev = self.monitor.evaluate(time.monotonic())
        colours = {vm: balm.colour_of(lat, self.monitor.vms[vm][1],
                                      self.group.yellow_threshold,
                                      self.group.green_threshold)
                   for vm, lat in ev.latency.items() if vm in self.monitor.vms}
        vms = {}
        for vm, pid in list(self._pids.items()):
            dom = self.registry.get(vm)
            perf = self._performance(vm, pid)
            if dom is None or perf is None:
                continue
            node = self._homes.get(vm, 0)
            cpus = len(self.topology.nodes[node].cpus) \
                if node in self.topology.nodes else 1
            # a size the hook did not report: an LC VM may use its whole
            # node, a BE VM is held to one core
            vcpus = dom.vcpus or (cpus if dom.latency_critical else 1)
            vms[vm] = {'class': dom.vm_class, 'node': node, 'vcpus': vcpus,
                       'cores': self.domain_ops.cap_cores(vm, vcpus, cpus),
                       'used': perf[0], 'perf': perf[1]}
        caps = self.allocator.interval(vms, colours)
        self._vcpus = {vm: v['vcpus'] for vm, v in vms.items()}
        self._apply_caps(caps, {vm: v['cores'] for vm, v in vms.items()})
        return caps

    def cpu_danger(self, now: float) -> dict[str, float]:
        """At the poll's pace, between allocation intervals: LC VMs that
        are yellow or red get more cores at once (at most once per
        ``settle_time``); returns the new best-effort caps.
        """
        if self.allocator is None or \
                now - self._last_danger < self.group.settle_time:
            return {}
        ev = self.monitor.evaluate(now)
        if not ev.ready or ev.colour not in balm.DANGER:
            return {}
        slo = {vm: s for vm, (_, s) in self.monitor.vms.items()}
        hot = [vm for vm, lat in ev.latency.items()
               if vm in slo
               and balm.colour_of(lat, slo[vm], self.group.yellow_threshold,
                                  self.group.green_threshold) in balm.DANGER]
        caps = self.allocator.danger(hot)
        if caps:
            self._last_danger = now
            self._apply_caps(caps, {
                vm: self.domain_ops.cap_cores(vm, self._vcpus.get(vm, 1),
                                              self._vcpus.get(vm, 1))
                for vm in caps})
        return caps

    def _apply_caps(self, caps: dict[str, float],
                    current: dict[str, float]) -> None:
        """Set the caps that move by 0.05 cores or more; a change restarts
        BALM's window, as an MBA step does.
        """
        moved = False
        for vm, cores in caps.items():
            if abs(cores - current.get(vm, 0.0)) < 0.05:
                continue
            try:
                self.domain_ops.set_cap(vm, cores, self._vcpus.get(vm, 1))
                moved = True
            except Exception as exc:  # noqa: BLE001 - the next interval retries
                LOG.warning('cannot cap %s at %.2f cores: %s', vm, cores, exc)
        if moved:
            self.monitor.mark_change(time.monotonic())

    def report_interference(self) -> dict:
        """Publish each LC VM's interference index (Hubbub-Scale), computed
        from the host's counters of every placed VM since the last report
        (:mod:`elastman.hostagent.interference`); returns the payload.
        """
        current = self.counters.read(dict(self._pids))
        previous, self._last_counters = self._last_counters, current
        per_vm = {vm: interference.rates(previous[vm], c)
                  for vm, c in current.items() if vm in previous}
        per_vm = {vm: r for vm, r in per_vm.items() if r is not None}
        now = time.monotonic()
        ev = self.monitor.evaluate(now)
        payload = {}
        for vm, (node, slo) in self.monitor.vms.items():
            cpus = len(self.topology.nodes[node].cpus) \
                if self.topology and node in self.topology.nodes else 1
            feats = interference.features(vm, node, self._homes, cpus,
                                          per_vm, self._normaliser)
            if not feats:
                continue
            lat = ev.latency.get(vm)
            self.index_model.observe(vm, feats, lat,
                                     self.monitor.request_rate(vm, now))
            index, source = self.index_model.index(feats)
            payload[vm] = {'interference_index': round(index, 4),
                           'index_source': source,
                           'features': {k: round(v, 4)
                                        for k, v in feats.items()},
                           'latency_ms': lat, 'slo_ms': slo, 'node': node}
        if payload:
            self._notify('hostagent.interference',
                         {'host': self.conf.host, 'vms': payload})
        return payload

    def _notify(self, event_type: str, payload: dict) -> None:
        if self.transport is None:
            LOG.info('%s: %s', event_type, payload)
            return
        try:
            if self._notifier is None:
                from elastman.common import rpc
                self._notifier = rpc.get_notifier(
                    self.conf, self.transport, 'hostagent.%s' % self.conf.host)
            from elastman.common import context
            self._notifier.info(context.RequestContext(), event_type, payload)
        except Exception:  # noqa: BLE001
            LOG.exception('cannot publish %s', event_type)

    # RPC API 2.0 ----------------------------------------------------------------
    def push_latency(self, ctxt, vm: str, latency_ms: float | None,
                     jmx_host: str | None = None,
                     jmx_port: int | None = None) -> None:
        """A latency sample of an LC VM (the monitor casts these), and the
        JMX endpoint of its Cassandra node, which the jmx probe then polls
        every ``poll_interval``.
        """
        if latency_ms is not None and isinstance(self.probe,
                                                 probes.BusProbe):
            self.probe.push(vm, latency_ms)
        if jmx_host and jmx_port:
            endpoint = (str(jmx_host), int(jmx_port))
            if self._endpoints.get(vm) != endpoint:
                self._endpoints[vm] = endpoint
                dom = self.registry.get(vm)
                if dom is not None and vm in self._lc_nodes:
                    self._watch_latency(dom)

    def describe(self) -> str:
        running = self.registry.running()
        lc = sum(1 for d in running if d.latency_critical)
        colour = self.controller.last.colour if self.controller and \
            self.controller.last else 'n/a'
        return ('%d domain(s) (%d latency-critical), %d hook event(s), '
                'colour %s' % (len(running), lc, self.listener.received,
                               colour))
