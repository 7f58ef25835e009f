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
"""The guest of a Nova lab server: a Cassandra node configured the way the
server's user data asks (lab use only).

The lab's fake virt driver runs this with elastman's Python for every server
it spawns, powers on or off, reboots or deletes:

    novalab_guest.py start <dir>    configure and start the node
    novalab_guest.py stop <dir>     stop it (the data stays until delete)
    novalab_guest.py kill <dir>     kill it at once (the server is deleted)

``<dir>/guest.json`` is what the hypervisor knows of the server (see
novalab_fake.py). What a real image would do at first boot, this does here:

- cloud-init's ``write_files``: the user data's
  ``/etc/cassandra/elastman-node.yaml`` (``cluster_name``, ``seeds``,
  ``replace_address``: the dead node this one takes over on its first boot,
  ``replace_address_first_boot``) is the node's configuration
  (etc/elastman/cassandra-user-data.yaml writes it); the server's
  ``cluster_name`` metadata is used when the file has none. Without that
  file the guest runs no Cassandra, as an image without it would not.
- the network: the node listens on the server's first fixed address (the
  lab's Neutron hands out loopback addresses), its JMX on that address at
  port 7199 (``[nova] jmx_port``), CQL at 9042.
- the flavour: the CPU limit of its extra specs ``quota:cpu_quota`` and
  ``quota:cpu_period`` (per vCPU, as libvirt applies them) becomes a cgroup
  quota; the heap is half the flavour's RAM (at least 256 MB).
"""
from __future__ import annotations

import json
import os
import sys
import time

import yaml

from elastman.cassandra import node as cassandra_node
from elastman.common import config
from elastman.compute import cgroups
from elastman.compute import local

NODE_FILE = '/etc/cassandra/elastman-node.yaml'
CGROUP_PARENT = 'novalab'
JMX_PORT = 7199


def log(guest_dir: str, message: str) -> None:
    line = '%s %s\n' % (time.strftime('%H:%M:%S'), message)
    with open(os.path.join(guest_dir, 'guest.log'), 'a') as f:
        f.write(line)
    sys.stdout.write(line)


def node_settings(guest: dict) -> dict | None:
    """cluster_name and seeds from the user data (None: no Cassandra)."""
    text = guest.get('user_data') or ''
    if not text.startswith('#cloud-config'):
        return None
    try:
        cloud = yaml.safe_load(text) or {}
    except yaml.YAMLError:
        return None
    for entry in cloud.get('write_files') or []:
        if isinstance(entry, dict) and entry.get('path') == NODE_FILE:
            settings = yaml.safe_load(entry.get('content') or '') or {}
            if not settings.get('cluster_name'):
                settings['cluster_name'] = (guest.get('metadata') or {}).get(
                    'cluster_name')
            return settings
    return None


def cpu_limit(flavor: dict) -> tuple[float, int]:
    """(CPUs, period in us) from the flavour's quota extra specs; 0 CPUs is
    no limit.
    """
    specs = flavor.get('extra_specs') or {}
    quota = int(specs.get('quota:cpu_quota') or 0)
    period = int(specs.get('quota:cpu_period') or 100000)
    if quota <= 0:
        return 0.0, period
    return flavor['vcpus'] * quota / period, period


def _cgroup(guest: dict) -> cgroups.CpuCgroup | None:
    try:
        version, root = cgroups.detect('auto')
    except cgroups.CgroupError:
        return None
    return cgroups.CpuCgroup(version, root, CGROUP_PARENT, guest['uuid'])


def start(conf, guest_dir: str) -> int:
    with open(os.path.join(guest_dir, 'guest.json')) as f:
        guest = json.load(f)
    base = os.path.join(guest_dir, 'node')
    if os.path.exists(os.path.join(base, 'node.json')):
        node = cassandra_node.LocalNode.load(conf, base)   # powered on again
    else:
        settings = node_settings(guest)
        if settings is None:
            log(guest_dir, 'user data configures no Cassandra node; the '
                'guest runs nothing')
            return 0
        if not guest['addresses']:
            log(guest_dir, 'no fixed address: the node cannot listen')
            return 1
        address = guest['addresses'][0]['address']
        seeds = [s.strip() for s in str(settings.get('seeds') or '').split(
            ',') if s.strip()] or [address]
        heap = max(256, guest['flavor']['memory_mb'] // 2)
        replace = str(settings.get('replace_address') or '').strip()
        initial = str(settings.get('initial_tokens') or '').strip()
        extra_yaml = dict(local.MONITORING_YAML)
        # Cassandra heeds these at the first boot only (kept for later ones)
        jvm_opts: tuple[str, ...] = ()
        if replace:
            jvm_opts += ('-Dcassandra.replace_address_first_boot=' + replace,)
        if initial:     # a concurrent join (elastman.cassandra.tokens)
            extra_yaml['initial_token'] = initial
            jvm_opts += ('-Dcassandra.consistent.rangemovement=false',)
        node = cassandra_node.LocalNode(conf, cassandra_node.NodeSpec(
            name=guest['name'], base_dir=base, address=address,
            jmx_port=JMX_PORT, jmx_address=address, seeds=tuple(seeds),
            cluster_name=str(settings['cluster_name'] or 'Test Cluster'),
            heap='%dM' % heap, extra_yaml=extra_yaml, jvm_opts=jvm_opts))
    if node.is_running():
        return 0
    cpus, period = cpu_limit(guest['flavor'])
    wrapper = None
    if cpus:
        group = _cgroup(guest)
        if group is not None:
            group.create(cpus, period)
            wrapper = group.wrapper()
    pid = node.start(cpu_wrapper=wrapper)
    log(guest_dir, 'Cassandra node %s of cluster %r started on %s (pid %d, '
        'seeds %s, heap %s, CPU limit %s%s)' % (
            node.spec.name, node.spec.cluster_name, node.spec.address, pid,
            ','.join(node.spec.seeds), node.spec.heap, cpus or 'none',
            ''.join(', ' + o for o in node.spec.jvm_opts)))
    return 0


def stop(conf, guest_dir: str, kill: bool = False) -> int:
    base = os.path.join(guest_dir, 'node')
    if os.path.exists(os.path.join(base, 'node.json')):
        node = cassandra_node.LocalNode.load(conf, base)
        if kill:
            node.kill()
        else:
            node.stop(timeout=15)
        log(guest_dir, 'Cassandra node %s %s' % (
            node.spec.name, 'killed' if kill else 'stopped'))
    try:
        with open(os.path.join(guest_dir, 'guest.json')) as f:
            guest = json.load(f)
    except (OSError, ValueError):
        return 0
    group = _cgroup(guest)
    if group is not None:
        group.remove()
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[1] not in ('start', 'stop', 'kill'):
        sys.stderr.write(__doc__)
        return 2
    conf = config.CONF
    conf([], project='elastman', default_config_files=[])
    if argv[1] == 'start':
        return start(conf, argv[2])
    return stop(conf, argv[2], kill=argv[1] == 'kill')


if __name__ == '__main__':
    sys.exit(main(sys.argv))
