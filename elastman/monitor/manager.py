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
"""elastman-monitor: samples every node of every managed cluster.

Each round (every ``[monitor] sampling_interval``) reads all nodes in
parallel: a CQL liveness query on a one-connection session per node, then
the node's cumulative coordinator counters and histograms from the metrics
source of ``[monitor] metrics_source`` (:mod:`elastman.monitor.sources`;
the CQL virtual tables when the source cannot read the node). Samples are differences to the
previous round; they are stored in ``samples`` and summed per cluster into
``cluster_workload``, where the trainer, the predictor and the actuator read
them. A node that does not answer in time is reported ``up=False`` and never
delays the others.

Nodes of a cluster with credentials or TLS (``store.credentials``) are read
with them. When every node of a cluster refuses them, the cluster's
``status_reason`` says so (prefixed ``monitor:``) until a node accepts them
again. A node whose compute host's agent reported an interference index
recently carries it in its sample (``extra['interference_index']``).

A round reads the nodes of all the monitor's clusters at once (``[monitor]
max_parallel`` reads in flight) and stores each cluster's samples as soon as
its nodes have answered, so a round over N nodes costs about N / max_parallel
reads rather than one wait per cluster. Several monitors split the clusters
through leases (:mod:`elastman.store.sharing`).
"""
from __future__ import annotations

import concurrent.futures
import threading
import time

from oslo_log import log as logging
from oslo_utils import timeutils

from elastman.cassandra import access as access_mod
from elastman.common import context as em_context
from elastman.common.rpcapi import hostagent as hostagent_rpcapi
from elastman.monitor import health
from elastman.monitor import readings
from elastman.monitor import sampler
from elastman.monitor import sources
from elastman.store import nodes as nodes_store
from elastman.store import sharing

LOG = logging.getLogger(__name__)

#: prefix of the cluster status_reason the monitor writes (and clears)
REASON_PREFIX = 'monitor: '
#: node states the monitor does not sample: a dead node a replace action
#: has taken over
SKIPPED_NODE_STATES = frozenset({nodes_store.REPLACING})


class MonitorManager(sharing.SharedManager):
    """Samples every node into the store; casts each node's read p99 to the
    agent of its compute host. No RPC API of its own.
    """

    WORKER = 'monitor'

    def __init__(self, conf, store=None, transport=None) -> None:
        super().__init__(conf, store)
        self.transport = transport
        self.hostagents: hostagent_rpcapi.HostAgentAPI | None = None
        opts = conf.monitor
        excluded = frozenset(readings.SYSTEM_KEYSPACES
                             | {conf.store.keyspace}
                             | set(opts.excluded_keyspaces))
        self.source = sources.load(conf, excluded)
        self.cql_reader = readings.CqlReader(opts.cql_timeout, excluded)
        self.health = health.HealthChecker(conf, store) if store else None
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=opts.max_parallel, thread_name_prefix='monitor-read')
        self._previous: dict[tuple[str, str], readings.Reading] = {}
        self._busy: dict[tuple[str, str], concurrent.futures.Future] = {}
        self._started: dict[tuple[str, str], float] = {}
        self._sampled_nodes: dict[str, int] = {}
        self._lock = threading.Lock()

    @property
    def lease_ttl(self) -> int | None:
        opts = self.conf.monitor
        return max(30, 3 * opts.sampling_interval) \
            if opts.use_leases else None

    # lifecycle --------------------------------------------------------------
    def start(self) -> None:
        super().start()
        try:
            self.source.start()
        except Exception as exc:   # sampling falls back to CQL meanwhile
            LOG.warning('metrics source %s unavailable: %s',
                        self.source.name, exc)
        if self.transport is not None and \
                self.conf.monitor.push_latency_to_hosts:
            self.hostagents = hostagent_rpcapi.HostAgentAPI(
                self.conf, self.transport)

    def stop(self) -> None:
        super().stop()
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.cql_reader.close()
        self.source.close()

    def periodic_tasks(self):
        return [(self.sample_all, self.conf.monitor.sampling_interval)]

    def describe(self) -> str:
        with self._lock:
            nodes = sum(self._sampled_nodes.values())
            clusters = len(self._sampled_nodes)
        return 'sampling %d node(s) of %d cluster(s) every %ss' % (
            nodes, clusters, self.conf.monitor.sampling_interval)

    # rounds -----------------------------------------------------------------
    def sample_all(self) -> list[dict]:
        """One round over every cluster this monitor holds the lease of:
        every node of them read at once, each cluster stored as soon as its
        nodes have answered.
        """
        if self.store is None:
            return []
        clusters = self.store.clusters.all()
        mine = self.mine(clusters)
        clusters = [c for c in clusters if str(c['id']) in mine]
        deadline = time.monotonic() + max(
            1.0, self.conf.monitor.sampling_interval * 0.8)
        nodes_of = self.store.nodes.list_many([c['id'] for c in clusters])
        reads = {}
        for cluster in clusters:
            cid = cluster['id']
            try:
                reads[cid] = self._submit(cid, nodes_of[cid],
                                          self._access(cid))
            except Exception:
                LOG.exception('sampling cluster %s failed this round', cid)
        samples = []
        seen = set()
        for cluster in clusters:
            cid = cluster['id']
            nodes = nodes_of[cid]
            seen.update((n['address'], n['cql_port'] or 9042)
                        for n in nodes if n.get('address'))
            if cid not in reads:
                continue
            try:
                samples += self._collect(cid, nodes, reads[cid], deadline,
                                         cluster=cluster)
            except Exception:
                LOG.exception('sampling cluster %s failed this round', cid)
        self.cql_reader.forget(seen)
        return samples

    def _access(self, cluster_id) -> access_mod.Access | None:
        """The cluster's credentials and TLS settings, None without."""
        if self.store is None:
            return None
        try:
            return access_mod.Access.from_document(
                self.store.credentials.get(cluster_id))
        except Exception as exc:     # undecryptable: say so, sample anyway
            LOG.error('cluster %s is read without credentials: %s',
                      cluster_id, exc)
            return None

    def sample_cluster(self, cluster_id, nodes: list[dict],
                       cluster: dict | None = None) -> list[dict]:
        """Read every node of one cluster in parallel and store the samples.

        ``cluster`` (its row, if at hand) spares a read of its status.
        """
        deadline = time.monotonic() + max(
            1.0, self.conf.monitor.sampling_interval * 0.8)
        futures = self._submit(cluster_id, nodes, self._access(cluster_id))
        return self._collect(cluster_id, nodes, futures, deadline,
                             cluster=cluster)

    @staticmethod
    def _sampled(nodes: list[dict]) -> list[dict]:
        return [n for n in nodes if n.get('address')
                and n.get('state') not in SKIPPED_NODE_STATES]

    def _submit(self, cluster_id, nodes: list[dict],
                access: access_mod.Access | None = None
                ) -> dict[tuple[str, str], concurrent.futures.Future]:
        """Start reading the nodes of a cluster (those whose previous read
        has ended).
        """
        futures = {}
        for node in self._sampled(nodes):
            key = (str(cluster_id), node['node_id'])
            busy = self._busy.get(key)
            if busy is not None and not busy.done():
                LOG.warning('node %s of cluster %s still has not answered '
                            'the previous round', node['node_id'], cluster_id)
                continue
            self._started.pop(key, None)
            futures[key] = self._busy[key] = self._pool.submit(
                self._timed_read, key, _target(node, access))
        return futures

    def _timed_read(self, key: tuple[str, str],
                    target: readings.Target) -> readings.Reading:
        self._started[key] = time.monotonic()
        return self._read_node(target)

    def _await(self, futures: dict[tuple[str, str], concurrent.futures.Future],
               deadline: float) -> None:
        """Until every read has answered, given up (it began more than a
        node's budget ago) or the round's deadline has passed. A read still
        queued behind others has not begun and is waited for.
        """
        opts = self.conf.monitor
        budget = self.source.timeout + opts.cql_timeout + 1.0
        pending = dict(futures)
        while pending:
            now = time.monotonic()
            for key in [k for k in pending
                        if now - self._started.get(k, now) > budget]:
                del pending[key]
            if not pending or now >= deadline:
                return
            concurrent.futures.wait(list(pending.values()),
                                    timeout=min(deadline - now, 0.25),
                                    return_when=concurrent.futures.FIRST_COMPLETED)
            pending = {k: f for k, f in pending.items() if not f.done()}

    def _collect(self, cluster_id, nodes: list[dict],
                 futures: dict[tuple[str, str], concurrent.futures.Future],
                 deadline: float, cluster: dict | None = None) -> list[dict]:
        """Samples of one cluster from its reads; store them."""
        opts = self.conf.monitor
        nodes = self._sampled(nodes)
        denied: list[str] = []
        self._await(futures, deadline)
        ts = timeutils.utcnow()
        samples = []
        pairs = []
        for node in nodes:
            key = (str(cluster_id), node['node_id'])
            current = None
            future = futures.get(key)
            if future is not None and future.done():
                try:
                    current = future.result()
                except access_mod.AccessDenied as exc:
                    denied.append(str(exc))
                    LOG.warning('node %s of cluster %s: %s', node['node_id'],
                                cluster_id, exc)
                except Exception as exc:
                    LOG.info('node %s (%s) did not answer: %s',
                             node['node_id'], node['address'], exc)
            previous = self._previous.get(key)
            sample = sampler.compute(cluster_id, node['node_id'], ts,
                                     current, previous,
                                     opts.sampling_interval)
            pairs.append((current, previous))
            if current is not None:
                self._previous[key] = current
                sample['extra'] = {
                    'jmx': float(current.source == 'jmx'),
                    'cql_only': float(current.source == readings.CQL),
                    **sampler.queue_extras(current, previous)}
            samples.append(sample)
        self._attach_interference(nodes, samples)
        self._record(cluster_id, ts, samples, sampler.cluster_latency(pairs))
        self._push_latencies(nodes, samples)
        self._report_access(cluster_id, cluster, denied, samples)
        if self.health is not None:
            try:
                self.health.check(cluster_id, nodes, samples,
                                  access=self._access(cluster_id))
            except Exception:
                LOG.exception('health check of cluster %s failed this round',
                              cluster_id)
        return samples

    def _report_access(self, cluster_id, cluster: dict | None,
                       denied: list[str], samples: list[dict]) -> None:
        """Put "every node refuses the credentials" on the cluster, and take
        it off once a node is read again.
        """
        if self.store is None or not samples:
            return
        refused = bool(denied) and not any(s['up'] for s in samples)
        try:
            if cluster is None:
                cluster = self.store.clusters.get(cluster_id)
            current = cluster.get('status_reason') or ''
            if refused:
                reason = (REASON_PREFIX + denied[0])[:500]
                if current != reason:
                    self.store.clusters.update(cluster_id,
                                               status_reason=reason)
            elif current.startswith(REASON_PREFIX) and any(
                    s['up'] for s in samples):
                self.store.clusters.update(cluster_id, status_reason=None)
        except Exception as exc:   # the next round tries again
            LOG.warning('cannot update the status of cluster %s: %s',
                        cluster_id, exc)

    def _attach_interference(self, nodes: list[dict],
                             samples: list[dict]) -> None:
        """Put the host agents' interference index of each node into its
        sample (``extra['interference_index']``), when fresh.
        """
        if self.store is None:
            return
        try:
            index = self.store.hosts.interference(
                nodes, time.time(), self.conf.monitor.interference_max_age)
        except Exception as exc:   # the samples are worth more than the index
            LOG.warning('cannot read the host agents\' interference '
                        'reports: %s', exc)
            return
        for sample in samples:
            value = index.get(sample['node_id'])
            if value is not None and sample.get('up'):
                sample.setdefault('extra', {})['interference_index'] = value

    def _push_latencies(self, nodes: list[dict], samples: list[dict]) -> None:
        """Feed each node's read p99, and where the agent can poll the
        node's latency histogram itself (its JMX endpoint), to the agent of
        its compute host.
        """
        if self.hostagents is None:
            return
        by_id = {n['node_id']: n for n in nodes}
        ctxt = em_context.get_admin_context()
        for sample in samples:
            node = by_id.get(sample['node_id']) or {}
            latency = sample.get('read_p99_ms')
            if not node.get('host') or not node.get('server_id') \
                    or latency is None or not sample.get('up'):
                continue
            try:
                self.hostagents.push_latency(
                    ctxt, node['host'], node['server_id'], latency,
                    jmx_host=node.get('jmx_host') or node.get('address'),
                    jmx_port=node.get('jmx_port'))
            except Exception as exc:   # a cast; the next round tries again
                LOG.warning('cannot push the latency of %s to host %s: %s',
                            node['node_id'], node['host'], exc)

    def _read_node(self, target: readings.Target) -> readings.Reading:
        probe = self.cql_reader.ping(target,
                                     self.conf.monitor.probe_requests)
        try:
            reading = self.source.read(target)
        except sources.SourceError as exc:
            LOG.warning('%s; counting from CQL virtual tables only', exc)
            reading = self.cql_reader.read(target)
        reading.probe_ms = list(probe) if probe else None
        return reading

    def _record(self, cluster_id, ts, samples: list[dict],
                latency: dict[str, float] | None = None) -> None:
        if self.store is not None:
            self.store.samples.add_many(samples)
            total = sampler.cluster_total(samples)
            self.store.samples.add_cluster_workload(cluster_id, ts, **total,
                                                    **(latency or {}))
        with self._lock:
            self._sampled_nodes[str(cluster_id)] = len(samples)


def _target(node: dict,
            access: access_mod.Access | None = None) -> readings.Target:
    return readings.Target(address=node['address'],
                           cql_port=node.get('cql_port') or 9042,
                           jmx_host=node.get('jmx_host') or '127.0.0.1',
                           jmx_port=node.get('jmx_port') or 7199,
                           access=access, node_id=node.get('node_id'),
                           cluster_id=str(node.get('cluster_id') or '')
                           or None)
