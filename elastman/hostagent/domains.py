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
"""The agent's view of the domains on this host.

Domains become known two ways: from the libvirt hook's events (datagrams on a
unix socket, see ``etc/libvirt/hooks/qemu``) and from libvirt itself when the
agent starts or reconnects (the hook is not replayed for domains that were
already running).
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import socket
import threading
import time
from typing import Any, Callable, Iterable

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

LATENCY_CRITICAL = 'latency-critical'
BEST_EFFORT = 'best-effort'
VM_CLASSES = (LATENCY_CRITICAL, BEST_EFFORT)
ELASTMAN_NS = 'http://openstack.org/xmlns/elastman/hostagent/1.0'
NOVA_NS_PREFIX = 'http://openstack.org/xmlns/libvirt/nova/'

# hook operations after which a domain is running / gone
RUNNING_OPS = frozenset({'started', 'reconnect', 'restore', 'attach'})
GONE_OPS = frozenset({'stopped', 'release'})
MAX_DATAGRAM = 64 * 1024


@dataclasses.dataclass
class HookEvent:
    """One lifecycle call of the libvirt hook."""

    op: str
    subop: str
    name: str
    uuid: str
    vm_class: str = BEST_EFFORT
    slo_ms: float | None = None
    flavor: str | None = None
    vcpus: int | None = None
    domain_id: str | None = None
    extra: str = '-'
    ts: float = 0.0
    jmx: str | None = None

    @classmethod
    def from_json(cls, data: bytes) -> 'HookEvent':
        """Decode and validate a datagram; ValueError when it is bad."""
        raw = json.loads(data.decode('utf-8'))
        if not isinstance(raw, dict) or raw.get('v') != 1:
            raise ValueError('not a version 1 hook event')
        for key in ('op', 'subop', 'name', 'uuid'):
            if not isinstance(raw.get(key), str) or not raw[key]:
                raise ValueError('hook event without %s' % key)
        vm_class = raw.get('vm_class') or BEST_EFFORT
        if vm_class not in VM_CLASSES:
            raise ValueError('unknown VM class %r' % vm_class)
        slo = raw.get('slo_ms')
        vcpus = raw.get('vcpus')
        return cls(op=raw['op'], subop=raw['subop'], name=raw['name'][:256],
                   uuid=raw['uuid'][:64], vm_class=vm_class,
                   slo_ms=valid_slo(slo),
                   flavor=raw.get('flavor') if isinstance(raw.get('flavor'), str)
                   else None,
                   vcpus=vcpus if isinstance(vcpus, int) else None,
                   domain_id=str(raw['id']) if raw.get('id') else None,
                   extra=str(raw.get('extra', '-'))[:256],
                   ts=float(raw.get('ts') or time.time()),
                   jmx=raw['jmx'] if parse_endpoint(raw.get('jmx'))
                   else None)


@dataclasses.dataclass
class Domain:
    """A domain the agent manages."""

    uuid: str
    name: str
    vm_class: str = BEST_EFFORT
    slo_ms: float | None = None
    flavor: str | None = None
    vcpus: int | None = None
    running: bool = False
    last_op: str = ''
    placement: dict = dataclasses.field(default_factory=dict)
    updated_at: float = 0.0
    #: ``host:port`` of the guest's Cassandra JMX (the latency signal)
    jmx: str | None = None

    @property
    def latency_critical(self) -> bool:
        return self.vm_class == LATENCY_CRITICAL

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def parse_endpoint(value) -> tuple[str, int] | None:
    """``(host, port)`` of a ``host:port`` string, None when malformed."""
    if not isinstance(value, str) or len(value) > 255:
        return None
    host, sep, port = value.strip().rpartition(':')
    if not sep or not host or not port.isdigit() or \
            not 0 < int(port) < 65536:
        return None
    if not all(c.isalnum() or c in '.-_[]:' for c in host):
        return None
    return host.strip('[]'), int(port)


def jmx_of_xml(root) -> str | None:
    """The ``jmx`` attribute of ``<elastman:vm>`` when well formed."""
    meta = root.find('metadata')
    if meta is None:
        return None
    for elem in meta.iter():
        tag = elem.tag if isinstance(elem.tag, str) else ''
        if tag == '{%s}vm' % ELASTMAN_NS and parse_endpoint(elem.get('jmx')):
            return elem.get('jmx').strip()
    return None


def classify_xml(root) -> tuple[str, float | None, str | None]:
    """(class, slo_ms, flavor) from a parsed domain XML (same rules as the hook).

    The class comes from the Nova flavour extra specs ``elastman:class``
    (``latency-critical`` or ``best-effort``) and ``elastman:slo_ms`` found in
    ``<metadata><nova:instance><nova:flavor><nova:extraSpecs>``, or from an
    ``<elastman:vm class=... slo_ms=.../>`` element in ``<metadata>``, which
    wins. Anything else is best-effort.
    """
    specs: dict[str, str] = {}
    flavor = None
    meta = root.find('metadata')
    if meta is not None:
        for elem in meta.iter():
            tag = elem.tag if isinstance(elem.tag, str) else ''
            ns = tag[1:].split('}', 1)[0] if tag.startswith('{') else ''
            local = tag.rsplit('}', 1)[-1]
            if ns.startswith(NOVA_NS_PREFIX):
                if local == 'flavor':
                    flavor = elem.get('name')
                elif local == 'extraSpec' and \
                        (elem.get('name') or '').startswith('elastman:'):
                    specs[elem.get('name')] = (elem.text or '').strip()
            elif ns == ELASTMAN_NS and local == 'vm':
                for key in ('class', 'slo_ms'):
                    if elem.get(key) is not None:
                        specs['elastman:' + key] = elem.get(key).strip()
    vm_class = specs.get('elastman:class', BEST_EFFORT)
    if vm_class not in VM_CLASSES:
        vm_class = BEST_EFFORT
    slo = None
    try:
        slo = float(specs['elastman:slo_ms']) if 'elastman:slo_ms' in specs \
            else None
    except ValueError:
        slo = None
    return vm_class, valid_slo(slo), flavor


def valid_slo(value: Any) -> float | None:
    """A latency SLO in ms, or None where ``value`` is not one (not a
    number, a boolean, not finite, or outside (0, 1e6)): the hook's event
    and the domain's XML are held to the same rule.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) and 0 < value < 1e6 else None


class DomainRegistry:
    """Thread-safe set of domains, fed by hook events and libvirt listings."""

    def __init__(self, on_change: Callable[[Domain, str], None] | None = None):
        self._lock = threading.RLock()
        self._domains: dict[str, Domain] = {}
        self._on_change = on_change

    def handle_event(self, event: HookEvent) -> Domain | None:
        """Apply a hook event; calls on_change(domain, op) outside the lock."""
        with self._lock:
            dom = self._domains.get(event.uuid)
            if dom is None:
                if event.op in GONE_OPS:
                    return None
                dom = Domain(uuid=event.uuid, name=event.name)
                self._domains[event.uuid] = dom
            dom.name = event.name
            dom.vm_class = event.vm_class
            dom.slo_ms = event.slo_ms
            dom.flavor = event.flavor
            dom.vcpus = event.vcpus or dom.vcpus
            dom.jmx = event.jmx or dom.jmx
            dom.last_op = event.op
            dom.updated_at = time.time()
            if event.op in RUNNING_OPS:
                dom.running = True
            elif event.op in GONE_OPS:
                dom.running = False
                if event.op == 'release':
                    self._domains.pop(event.uuid, None)
        if self._on_change:
            self._on_change(dom, event.op)
        return dom

    def sync(self, listed: Iterable[Domain]) -> list[Domain]:
        """Replace the set by what libvirt lists; returns newly seen domains."""
        listed = list(listed)
        new = []
        with self._lock:
            keep = {}
            for dom in listed:
                old = self._domains.get(dom.uuid)
                if old is None:
                    new.append(dom)
                else:
                    dom.placement = old.placement
                keep[dom.uuid] = dom
            self._domains = keep
        if self._on_change:
            for dom in new:
                self._on_change(dom, 'reconnect')
        return new

    def get(self, uuid: str) -> Domain | None:
        with self._lock:
            return self._domains.get(uuid)

    def all(self) -> list[Domain]:
        with self._lock:
            return list(self._domains.values())

    def running(self, vm_class: str | None = None) -> list[Domain]:
        return [d for d in self.all() if d.running
                and (vm_class is None or d.vm_class == vm_class)]


def list_libvirt_domains(conn) -> list[Domain]:
    """Running domains from a libvirt connection, classified from their XML."""
    from defusedxml import ElementTree as DET
    result = []
    for dom in conn.listAllDomains(1):  # VIR_CONNECT_LIST_DOMAINS_ACTIVE
        try:
            root = DET.fromstring(dom.XMLDesc(0))
        except Exception as exc:  # noqa: BLE001
            LOG.warning('skipping domain %s: bad XML (%s)', dom.name(), exc)
            continue
        vm_class, slo, flavor = classify_xml(root)
        result.append(Domain(uuid=dom.UUIDString(), name=dom.name(),
                             vm_class=vm_class, slo_ms=slo, flavor=flavor,
                             vcpus=dom.maxVcpus() if dom.isActive() else None,
                             running=True, last_op='reconnect',
                             updated_at=time.time(), jmx=jmx_of_xml(root)))
    return result


class HookListener:
    """Receives the hook's datagrams on a unix socket in a daemon thread."""

    def __init__(self, path: str, handler: Callable[[HookEvent], None]):
        self.path = path
        self._handler = handler
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.received = 0
        self.rejected = 0

    def start(self) -> None:
        os.makedirs(os.path.dirname(self.path), mode=0o750, exist_ok=True)
        if os.path.exists(self.path):
            os.unlink(self.path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(self.path)
        os.chmod(self.path, 0o660)
        sock.settimeout(0.2)
        self._sock = sock
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name='hostagent-hook-listener')
        self._thread.start()
        LOG.info('listening for libvirt hook events on %s', self.path)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data = self._sock.recv(MAX_DATAGRAM)
            except socket.timeout:
                continue
            except OSError:
                if self._stop.is_set():
                    return
                raise
            try:
                event = HookEvent.from_json(data)
            except (ValueError, UnicodeDecodeError, TypeError) as exc:
                self.rejected += 1
                LOG.warning('ignoring malformed hook datagram: %s', exc)
                continue
            self.received += 1
            try:
                self._handler(event)
            except Exception:  # noqa: BLE001
                LOG.exception('handling hook event %s %s failed',
                              event.name, event.op)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
