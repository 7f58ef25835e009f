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
"""``elastman-manage model export|import``: carry a flavour's capacity model
from one cloud (or cluster) to another, so a new cluster starts from what an
old one learnt instead of from nothing.
"""
from __future__ import annotations

import json
import sys

from elastman.capacity import serialization
from elastman.common import exception
from elastman import store as em_store
from elastman.store import model_state as persistence


def _registry(store, cluster_id: str):
    registry = persistence.load_state(store, cluster_id)
    if registry is None:
        raise exception.NotFound(kind='trained cluster', id=cluster_id)
    return registry


def _new_registry(conf, store, cluster_id: str):
    from elastman.capacity import params as params_mod
    from elastman.capacity import registry as model_registry
    from elastman.trainer import manager
    import uuid
    try:
        cluster = store.clusters.get(uuid.UUID(cluster_id))
    except ValueError:
        raise exception.NotFound(kind='cluster', id=cluster_id)
    params = params_mod.ModelParams.from_conf(
        conf, **manager.model_overrides(cluster.get('policy')))
    registry = model_registry.ModelRegistry(cluster_id, params)
    for node in store.nodes.list(cluster['id']):
        registry.register_node(node['node_id'],
                               node.get('flavor') or 'default')
    return registry


def export_model(conf, cluster_id: str, flavor: str,
                 output: str | None) -> int:
    store = em_store.Store.open(conf)
    try:
        try:
            doc = _registry(store, cluster_id).export_flavor_model(flavor)
        except KeyError as exc:
            raise exception.NotFound(kind='flavour model', id=exc.args[0])
    finally:
        store.close()
    text = json.dumps(doc, indent=1, sort_keys=True)
    if output in (None, '-'):
        sys.stdout.write(text + '\n')
    else:
        with open(output, 'w') as f:
            f.write(text + '\n')
    return 0


def import_model(conf, cluster_id: str, flavor: str | None,
                 path: str) -> int:
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as exc:
        raise exception.ElastmanException('cannot read model %s: %s'
                                          % (path, exc))
    store = em_store.Store.open(conf)
    try:
        registry = persistence.load_state(store, cluster_id)
        if registry is None:  # a new cluster: start its state with the model
            registry = _new_registry(conf, store, cluster_id)
        try:
            update = registry.import_flavor_model(doc, flavor)
        except (serialization.FormatError, ValueError) as exc:
            raise exception.ElastmanException('model %s rejected: %s'
                                              % (path, exc))
        version = persistence.save_update(store, cluster_id, update)
        persistence.save_state(store, registry)
    finally:
        store.close()
    print('imported flavour model %s into cluster %s (version %d)'
          % (update.key, cluster_id, version))
    return 0


def add_subparser(subparsers) -> None:
    from elastman.common import config
    model = subparsers.add_parser('model', help='capacity model transfer')
    sub = model.add_subparsers(dest='action')
    sub.required = True
    exp = sub.add_parser('export', help="write a flavour's model as JSON")
    exp.add_argument('cluster_id')
    exp.add_argument('flavor')
    exp.add_argument('--output', '-o', help='file (default: stdout)')
    exp.set_defaults(func=lambda: export_model(
        config.CONF, config.CONF.command.cluster_id,
        config.CONF.command.flavor, config.CONF.command.output))
    imp = sub.add_parser('import', help='seed a flavour from an exported '
                                        'model')
    imp.add_argument('cluster_id')
    imp.add_argument('path')
    imp.add_argument('--flavor', help='flavour to seed (default: the one '
                                      'named in the document)')
    imp.set_defaults(func=lambda: import_model(
        config.CONF, config.CONF.command.cluster_id,
        config.CONF.command.flavor, config.CONF.command.path))
