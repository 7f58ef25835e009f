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
"""elastman-trainer: keeps every managed cluster's capacity models online.

Each update round, for every cluster whose lease this trainer holds, it reads
the samples that arrived since the last round from the store (the store, not
the bus, is the source of truth, so a restarted or a second trainer misses
nothing), files them in the cluster's :class:`ModelRegistry`, refits when the
update period has passed (each cluster at its own phase of the period, so
that the refits spread over the rounds), stores the models that changed, and saves what
changed in the registry (the cells the samples touched, the
summaries of the VMs and models that changed: see
:mod:`elastman.store.model_state`). A trainer that takes a cluster over reads
its summaries, resumes reading samples where the previous owner stopped, and
reads a VM's cells only when it refits a model that needs them.
"""
from __future__ import annotations

import datetime
import threading
import time
from typing import Any

from oslo_log import log as logging

from elastman.capacity import params as params_mod
from elastman.capacity import registry as model_registry
from elastman.common import schedule
from elastman.common import timestamps
from elastman.store import actions as actions_store
from elastman.store import model_state as persistence
from elastman.store import sharing

LOG = logging.getLogger(__name__)

INTERFERENCE = params_mod.INTERFERENCE


def model_overrides(policy: dict | None) -> dict[str, Any]:
    """Model parameters a cluster's scaling policy sets."""
    policy = policy or {}
    overrides = dict(policy.get('model') or {})
    for key in ('slo_metric', 'slo_threshold_ms'):
        if policy.get(key) is not None:
            overrides[key] = policy[key]
    return overrides


def carries_interference(row: dict) -> bool:
    """Whether a stored sample has the host agents' interference index."""
    return (row.get('extra') or {}).get(INTERFERENCE) is not None


def with_interference(params: params_mod.ModelParams
                      ) -> params_mod.ModelParams:
    """``params`` with the interference index as the last feature."""
    if INTERFERENCE in params.features:
        return params
    return params.replace(features=tuple(params.features) + (INTERFERENCE,))


def sample_from_row(row: dict) -> dict:
    """A stored sample as the capacity model expects it."""
    sample = {k: v for k, v in row.items() if k != 'extra'}
    sample.update(row.get('extra') or {})
    sample['cluster_id'] = str(row['cluster_id'])
    sample['ts'] = timestamps.epoch(row['ts'])
    return sample


class _ClusterState:
    def __init__(self, registry: model_registry.ModelRegistry,
                 saved_version: int) -> None:
        self.registry = registry
        self.saved_version = saved_version
        self.last_sample: dict[str, datetime.datetime] = {}
        self.prior_tried: set[str] = set()

    def since(self, node_id: str) -> datetime.datetime | None:
        """Where reading ``node_id``'s samples resumes (None: all)."""
        since = self.last_sample.get(node_id)
        if since is None and node_id in self.registry.sampled_until:
            since = _from_epoch(self.registry.sampled_until[node_id])
        return since

    def save(self, store) -> None:
        version = persistence.save_state(store, self.registry)
        if version is not None:
            self.saved_version = version


class TrainerManager(sharing.SharedManager):
    """Fits the capacity models from ``samples`` into ``models``,
    ``capacity_summaries`` and ``capacity_cells``. No RPC API.
    """

    WORKER = 'trainer'

    def __init__(self, conf, store=None) -> None:
        super().__init__(conf, store)
        self._clusters: dict[str, _ClusterState] = {}
        self._lock = threading.RLock()
        # during a round: the clusters, and the priors found per flavour
        self._priors: dict[tuple, list] | None = None
        self._all_clusters: list[dict] | None = None

    @property
    def lease_ttl(self) -> int:
        return 3 * max(self.conf.monitor.sampling_interval,
                       min(self.conf.trainer.update_period, 60))

    def stop(self) -> None:
        with self._lock:
            for state in self._clusters.values():
                state.save(self.store)
        super().stop()

    @property
    def interval(self) -> float:
        """Seconds between two rounds."""
        return float(min(self.conf.trainer.update_period,
                         self.conf.monitor.sampling_interval))

    @property
    def round_budget(self) -> float:
        return self.conf.trainer.round_budget * self.interval

    def periodic_tasks(self):
        return [(self.train_all, self.interval)]

    def describe(self) -> str:
        return 'training capacity models of %d cluster(s)' % len(
            self._clusters)

    # -- training -------------------------------------------------------------
    def train_all(self, now: float | None = None) -> None:
        """One round over this trainer's share of the clusters (leases)."""
        clusters = self.store.clusters.all()
        mine = self.mine(clusters)
        # one search per flavour and round for the clusters that need a
        # prior, not one per cluster: each reads every cluster's model
        self._priors, self._all_clusters = {}, clusters
        with self._lock:
            for cluster_id in set(self._clusters) - mine:
                # another trainer has it now: what is here was saved
                self._clusters.pop(cluster_id)
        try:
            self.each_cluster(clusters, mine,
                              lambda c: self.train_cluster(c, now),
                              'training')
        finally:
            self._priors, self._all_clusters = None, None

    def _state(self, cluster: dict) -> _ClusterState:
        cluster_id = str(cluster['id'])
        params = params_mod.ModelParams.from_conf(
            self.conf, **model_overrides(cluster.get('policy')))
        state = self._clusters.get(cluster_id)
        stored = self.store.models.latest_version(persistence.STATE_SCOPE,
                                                  cluster_id)
        if state is None or stored > state.saved_version:
            # first sight, or the state was changed outside this trainer
            # (a model import, another trainer that held the lease)
            registry = persistence.load_state(self.store, cluster_id)
            if registry is None:
                registry = model_registry.ModelRegistry(cluster_id, params)
            else:
                LOG.info('cluster %s: loaded capacity models of %d VMs '
                         '(state version %d)', cluster_id,
                         len(registry.nodes), stored)
            previous = state
            state = self._clusters[cluster_id] = _ClusterState(registry,
                                                               stored)
            if previous is not None:
                state.last_sample = previous.last_sample
        if self.conf.trainer.interference_feature == 'dimension' and \
                INTERFERENCE in state.registry.params.features:
            params = with_interference(params)     # once added, it stays
        if state.registry.params != params:
            state.registry.update_params(params)
        return state

    def _maybe_add_interference(self, cluster_id: str, state: _ClusterState,
                                rows: list[dict]) -> None:
        """With ``interference_feature = dimension``, the first sample carrying
        the host agents' index makes it a dimension of the cluster's model.
        """
        registry = state.registry
        if self.conf.trainer.interference_feature != 'dimension' or \
                INTERFERENCE in registry.params.features or \
                not any(carries_interference(r) for r in rows):
            return
        LOG.info('cluster %s: the host agents report an interference index; '
                 'it becomes a dimension of the capacity model', cluster_id)
        registry.update_params(with_interference(registry.params))
        # the models of the old space cannot answer for points of the new
        # one: drop them, refit at once, look for priors of the new space
        registry.drop_models()
        state.prior_tried = set()

    def train_cluster(self, cluster: dict, now: float | None = None
                      ) -> list[model_registry.ModelUpdate]:
        """Feed new samples, refit if due, store what changed."""
        now = time.time() if now is None else now
        cluster_id = str(cluster['id'])
        with self._lock:
            state = self._state(cluster)
            registry = state.registry
            nodes = {n['node_id']: n for n in
                     self.store.nodes.list(cluster['id'])}
            scaling = self._scaling_windows(cluster['id'])
            for node_id in set(registry.nodes) - set(nodes):
                registry.unregister_node(node_id)
                state.last_sample.pop(node_id, None)
            for node_id, node in nodes.items():
                registry.register_node(node_id,
                                       node.get('flavor') or 'default')
            self._seed_priors(cluster_id, state)
            since = {n: state.since(n) for n in nodes}
            found = self.store.samples.for_nodes(cluster['id'], since)
            for node_id, node in nodes.items():
                after = since[node_id]
                rows = [r for r in found[node_id]
                        if after is None or r['ts'] > after]
                if rows:
                    state.last_sample[node_id] = rows[0]['ts']
                    self._maybe_add_interference(cluster_id, state, rows)
                    registry.add_samples(
                        sample_from_row(r) for r in reversed(rows)
                        if not self._warming(node, r['ts'])
                        and not _within(scaling, r['ts']))
                    registry.note_sampled(node_id,
                                          timestamps.epoch(rows[0]['ts']))
            updates = []
            if registry.is_due(now, schedule.phase_of(
                    cluster_id, registry.params.update_period)):
                updates = registry.refit(now)
                for update in updates:
                    persistence.save_update(self.store, cluster_id, update)
            state.save(self.store)
            return updates

    def _seed_priors(self, cluster_id: str, state: _ClusterState) -> bool:
        """A flavour this cluster has no model of starts from the newest one
        another cluster learnt (kept until this cluster's own cells give a
        two-class model); looked for once per flavour.
        """
        registry, seeded = state.registry, False
        for flavor in sorted(set(registry.nodes.values())):
            if registry.flavor_model(flavor) is not None or \
                    flavor in state.prior_tried:
                continue
            state.prior_tried.add(flavor)
            features = list(registry.params.features)
            key = (flavor, tuple(features))
            found = None if self._priors is None else self._priors.get(key)
            if found is None:
                found = persistence.prior_candidates(
                    self.store, flavor, features,
                    self._all_clusters or self.store.clusters.all())
                if self._priors is not None:
                    self._priors[key] = found
            doc = persistence.find_prior(self.store, flavor, features, [],
                                         cluster_id, candidates=found)
            if doc is None:
                continue
            try:
                update = registry.import_flavor_model(doc, flavor)
            except (ValueError, KeyError) as exc:
                LOG.warning('cluster %s: prior of flavour %s unusable: %s',
                            cluster_id, flavor, exc)
                continue
            persistence.save_update(self.store, cluster_id, update)
            LOG.info('cluster %s: flavour %s starts from a prior learnt by '
                     'another cluster', cluster_id, flavor)
            seeded = True
        return seeded

    def _warming(self, node: dict, ts: datetime.datetime) -> bool:
        """Whether ``ts`` falls in the node's first ``node_warmup`` s."""
        warmup = self.conf.trainer.node_warmup
        created = node.get('created_at')
        if not warmup or created is None:
            return False
        return created <= ts < created + datetime.timedelta(seconds=warmup)

    def _scaling_windows(self, cluster_id) -> list[tuple]:
        """``(start, end)`` of the cluster's recent actions, each extended
        by ``action_settle`` s (``end`` None: still running).
        """
        settle = self.conf.trainer.action_settle
        if not settle:
            return []
        windows = []
        for action in self.store.actions.list(cluster_id, limit=20):
            end = None
            if action['state'] in actions_store.TERMINAL_STATES:
                end = action['updated_at'] + datetime.timedelta(seconds=settle)
            windows.append((action['created_at'], end))
        return windows


def _from_epoch(seconds: float) -> datetime.datetime:
    """A store timestamp (naive UTC, millisecond precision) from epoch s."""
    return datetime.datetime.fromtimestamp(
        round(seconds, 3), datetime.timezone.utc).replace(tzinfo=None)


def _within(windows: list[tuple], ts: datetime.datetime) -> bool:
    return any(start <= ts and (end is None or ts < end)
               for start, end in windows)
