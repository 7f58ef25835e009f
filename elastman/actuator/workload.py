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
"""Inputs of the scaling decision: per-VM predicted workload and capacity.

The predictor forecasts the whole cluster's read and write intensity; the
forecast is split across the VMs by each VM's current share of that intensity
(OnlineElastMan), and each VM's capacity is read from the trainer's model
along the ray through its predicted workload point.
"""
from __future__ import annotations

from typing import Any, Mapping

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

#: Sample keys that scale with the cluster's load (split by share).
LOAD_KEYS = ('reads_per_s', 'writes_per_s')


def split_workload(predicted: Mapping[str, float],
                   current: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Split a predicted cluster workload across VMs by their current share.

    ``predicted`` maps load keys (``reads_per_s``, ``writes_per_s``) to the
    cluster's forecast; ``current`` maps node id to that node's latest sample
    (or any dict with the same keys). Each load key is split by the node's
    share of the cluster's current total of that key; when the current total
    is zero, evenly. Other keys of the node's sample (request sizes, ...) are
    kept, so the result can be handed to ``ModelRegistry.capacity``.
    """
    nodes = list(current)
    out: dict[str, dict[str, Any]] = {n: dict(current[n]) for n in nodes}
    if not nodes:
        return out
    for key in LOAD_KEYS:
        if key not in predicted:
            continue
        total_pred = max(0.0, float(predicted[key]))
        now = {n: max(0.0, float(current[n].get(key) or 0.0)) for n in nodes}
        total_now = sum(now.values())
        for n in nodes:
            share = now[n] / total_now if total_now > 0 else 1.0 / len(nodes)
            out[n][key] = total_pred * share
    return out


def estimate_capacities(registry: Any, per_vm: Mapping[str, Mapping[str, Any]]
                        ) -> dict[str, Any]:
    """``registry.capacity(node, workload)`` for every VM (a
    :class:`~elastman.capacity.registry.ModelRegistry`); a VM the
    registry does not know is left out (the decision treats it as unknown).
    """
    out = {}
    for node, workload in per_vm.items():
        try:
            out[node] = registry.capacity(node, workload)
        except KeyError:
            LOG.warning('no capacity model for node %s yet', node)
    return out
