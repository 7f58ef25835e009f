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
"""elastman-manage: schema, the local store node, and offline tools.

    elastman-manage db sync | db version
    elastman-manage store start | stop | status   (a local single-node store)
    elastman-manage model export | import         (carry a flavour's model)
    elastman-manage forecast-eval TRACE.csv       (compare the forecasters)
    elastman-manage local-cluster create | list | delete
                                                  (clusters on this host)
    elastman-manage credentials generate-key | rotate
                                                  (keys of clusters' secrets)
"""
from __future__ import annotations

import inspect
import os
import sys

from oslo_config import cfg

from elastman.cassandra import node as cassandra_node
from elastman.cmd import local_cluster
from elastman.cmd import model_transfer
from elastman.common import config
from elastman.evaluation import hostbench
from elastman.evaluation import interference
from elastman.evaluation import live
from elastman.evaluation import report
from elastman.predictor import evaluate as forecast_eval
from elastman import store as em_store
from elastman.store import connection
from elastman.store import credentials as credentials_store
from elastman.store import schema

CONF = config.CONF


# -- db -------------------------------------------------------------------------
def db_sync() -> int:
    session = connection.connect(CONF)
    try:
        applied = schema.sync(session, CONF)
        current = schema.current_version(session, CONF.store.keyspace)
    finally:
        connection.close(session)
    if applied:
        print('keyspace %s: applied migrations %s, now at version %d'
              % (CONF.store.keyspace, ', '.join(map(str, applied)), current))
    else:
        print('keyspace %s is up to date (version %d)'
              % (CONF.store.keyspace, current))
    return 0


def db_version() -> int:
    session = connection.connect(CONF)
    try:
        print(schema.current_version(session, CONF.store.keyspace))
    finally:
        connection.close(session)
    return 0


# -- store ------------------------------------------------------------------------
def _store_node() -> cassandra_node.LocalNode:
    args = CONF.command
    base_dir = os.path.abspath(args.dir or os.path.join(CONF.state_path,
                                                        'store'))
    if os.path.exists(os.path.join(base_dir, 'node.json')):
        return cassandra_node.LocalNode.load(CONF, base_dir)
    spec = cassandra_node.NodeSpec(
        name='elastman-store', base_dir=base_dir,
        address=CONF.store.contact_points[0], cql_port=CONF.store.port,
        storage_port=args.storage_port, jmx_port=args.jmx_port,
        cluster_name='elastman-store', heap=CONF.cassandra.default_heap)
    return cassandra_node.LocalNode(CONF, spec)


def store_start() -> int:
    node = _store_node()
    if node.is_running():
        print('store node already running (pid %d) in %s'
              % (node.pid(), node.spec.base_dir))
        return 0
    pid = node.start()
    node.wait_for_cql()
    print('store node running (pid %d) at %s:%d, data in %s'
          % (pid, node.spec.address, node.spec.cql_port, node.spec.base_dir))
    return 0


def store_stop() -> int:
    node = _store_node()
    node.stop()
    if CONF.command.purge:
        node.destroy()
    print('store node stopped')
    return 0


def store_status() -> int:
    node = _store_node()
    if node.is_running():
        print('running (pid %d) at %s:%d' % (node.pid(), node.spec.address,
                                             node.spec.cql_port))
        return 0
    print('not running')
    return 3


# -- credentials ---------------------------------------------------------------
def credentials_generate_key() -> int:
    """Print a new key for [credentials] encryption_keys."""
    print(credentials_store.generate_key())
    return 0


def credentials_rotate() -> int:
    """Encrypt every cluster's credentials again under the first key."""
    store = em_store.Store.open(CONF)
    try:
        done = store.credentials.rotate()
    finally:
        store.close()
    print('%d cluster(s)\' credentials now encrypted with the first key of '
          '[credentials] encryption_keys' % done)
    return 0


def add_command_parsers(subparsers) -> None:
    db = subparsers.add_parser('db', help='store schema')
    db_sub = db.add_subparsers(dest='action')
    db_sub.required = True
    db_sub.add_parser('sync', help='create or upgrade the keyspace'
                      ).set_defaults(func=db_sync)
    db_sub.add_parser('version', help='print the schema version'
                      ).set_defaults(func=db_version)

    store = subparsers.add_parser(
        'store', help='a local single-node Cassandra for the store')
    store.add_argument('--dir', help='node directory (default: '
                                     '<state_path>/store)')
    store.add_argument('--jmx-port', type=int, default=7199)
    store.add_argument('--storage-port', type=int, default=7000)
    store_sub = store.add_subparsers(dest='action')
    store_sub.required = True
    store_sub.add_parser('start', help='start it and wait for CQL'
                         ).set_defaults(func=store_start)
    stop = store_sub.add_parser('stop', help='stop it')
    stop.add_argument('--purge', action='store_true',
                      help='also remove its directory')
    stop.set_defaults(func=store_stop)
    store_sub.add_parser('status', help='is it running?'
                         ).set_defaults(func=store_status)

    creds = subparsers.add_parser(
        'credentials', help='the keys of the clusters\' stored credentials')
    creds_sub = creds.add_subparsers(dest='action')
    creds_sub.required = True
    creds_sub.add_parser(
        'generate-key', help='print a new key for [credentials] '
                             'encryption_keys').set_defaults(
        func=credentials_generate_key)
    creds_sub.add_parser(
        'rotate', help='re-encrypt every cluster\'s credentials with the '
                       'first of [credentials] encryption_keys'
    ).set_defaults(func=credentials_rotate)

    # offline tools that bring their own sub-command
    for tool in (forecast_eval, model_transfer, live, report, local_cluster,
                 hostbench, interference):
        tool.add_subparser(subparsers)


command_opt = cfg.SubCommandOpt('command', title='Commands',
                                help='Available commands',
                                handler=add_command_parsers)


@config.main_wrapper
def main(argv: list[str]) -> int:
    CONF.register_cli_opt(command_opt)
    config.parse_args(argv)
    func = CONF.command.func
    # sub-commands of offline tools take their parsed arguments
    return func(CONF.command) if inspect.signature(func).parameters \
        else func()


if __name__ == '__main__':
    sys.exit(main())
