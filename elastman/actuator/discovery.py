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
"""Registering an existing cluster: its ring, mapped to servers.

The API records a registered cluster's seeds and journals a ``register``
action; the executor calls :func:`discover`. It asks the seeds' JMX for the
ring (``nodetool status``) and the cluster name (``describecluster``), then
maps each ring address to a server of the cluster's project. A mapped node
is elastman's to manage (it may later be decommissioned and its server
deleted); a node without a server stays in the cluster's rows, counted and
monitored, and is never removed. New servers are made like the mapped ones:
the cluster's spec takes their image, networks, security groups and flavour
where the request named none.
"""
from __future__ import annotations

from typing import Callable

from oslo_log import log as logging

from elastman.common import exception
from elastman.compute import base as compute

LOG = logging.getLogger(__name__)


def _seed_hosts(spec: dict) -> list[str]:
    hosts = []
    for seed in spec.get('seeds') or []:
        host, sep, _port = seed.rpartition(':')
        hosts.append(host if sep else seed)
    return hosts


def read_ring(spec: dict, nodetool_factory: Callable) -> tuple[list, str]:
    """(ring members, cluster name) from the first seed whose JMX answers."""
    port = spec.get('jmx_port') or 7199
    failures = []
    for host in _seed_hosts(spec):
        tool = nodetool_factory(host, port)
        try:
            return tool.status(), tool.describe_cluster().get('name') or ''
        except exception.NodetoolError as exc:
            failures.append('%s:%s: %s' % (host, port, exc))
    raise exception.ElastmanException(
        'no seed answers on JMX, the ring cannot be read (%s)'
        % '; '.join(failures or ['no seeds']))


def discover(store, cluster: dict, cloud: compute.ComputeDriver,
             nodetool_factory: Callable) -> dict:
    """Record the cluster's ring as its nodes; returns a summary."""
    spec = dict(cluster.get('spec') or {})
    ring, name = read_ring(spec, nodetool_factory)
    if not ring:
        raise exception.ElastmanException('nodetool status lists no node')
    servers = cloud.find_servers([m.address for m in ring])
    seeds = set(_seed_hosts(spec))
    cql_port = spec.get('cql_port') or 9042
    jmx_port = spec.get('jmx_port') or 7199
    kept, mapped, unmapped = set(), [], []
    for member in ring:
        server = servers.get(member.address)
        fields = {'address': member.address, 'state': member.code,
                  'seed': member.address in seeds, 'cql_port': cql_port,
                  'details': {'host_id': member.host_id,
                              'datacenter': member.datacenter,
                              'rack': member.rack}}
        if server is not None:
            node_id = server.id
            fields.update(server_id=server.id, flavor=server.flavor,
                          host=server.host,
                          jmx_host=server.jmx_host or member.address,
                          jmx_port=server.jmx_port or jmx_port)
            mapped.append(member.address)
        else:
            node_id = member.address
            fields.update(server_id=None, flavor=spec.get('flavor'),
                          jmx_host=member.address, jmx_port=jmx_port)
            unmapped.append(member.address)
        store.nodes.upsert(cluster['id'], node_id, **fields)
        kept.add(node_id)
    for node in store.nodes.list(cluster['id']):
        if node['node_id'] not in kept:   # a seed row now known by server
            store.nodes.delete(cluster['id'], node['node_id'])
    template = [servers[a] for a in mapped]
    if name:
        spec['cluster_name'] = name
    if template:
        first = template[0]
        spec.setdefault('image', first.image)
        if not spec.get('flavor'):
            spec['flavor'] = first.flavor
        if not spec.get('networks'):
            spec['networks'] = sorted({first.networks[a]
                                       for a in first.networks})
        if not spec.get('security_groups') and first.security_groups:
            spec['security_groups'] = list(first.security_groups)
    store.clusters.update(cluster['id'], spec=spec)
    LOG.info('cluster %s: ring of %d (%s) discovered; mapped to servers: %s;'
             ' without a server (never removed): %s', cluster['id'],
             len(ring), name, ', '.join(mapped) or 'none',
             ', '.join(unmapped) or 'none')
    return {'cluster_name': name, 'ring': sorted(m.address for m in ring),
            'mapped': sorted(mapped), 'unmapped': sorted(unmapped)}
