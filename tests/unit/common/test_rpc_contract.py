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
"""The bus contract between workers (doc/source/architecture.rst): every RPC
client method is served by its worker's manager at a compatible version and
has a caller in the service, and every notification published has a
listener.
"""
import importlib
import inspect
import pathlib
import pkgutil
import re

import pytest

from elastman.cmd import workers
from elastman.common import manager as manager_base
from elastman.common import rpc
from elastman.common import rpcapi

PACKAGE = pathlib.Path(__file__).resolve().parents[3] / 'elastman'


def _sources():
    for path in sorted(PACKAGE.rglob('*.py')):
        yield path, path.read_text()


def _clients():
    found = []
    for info in pkgutil.iter_modules(rpcapi.__path__):
        module = importlib.import_module('%s.%s' % (rpcapi.__name__,
                                                    info.name))
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, rpc.RPCClient) and cls is not rpc.RPCClient:
                found.append(cls)
    return found


CLIENTS = _clients()


class _Recorder:
    """Stands in for an oslo.messaging RPCClient: records what is sent."""

    def __init__(self):
        self.sent = []
        self.version = None

    def prepare(self, version=None, **kwargs):
        self.version = version
        return self

    def call(self, ctxt, method, **kwargs):
        self.sent.append((method, self.version, kwargs))

    cast = call


def _messages(cls):
    """(client method, RPC method, version, kwargs) for each public method
    of a client class, called with placeholder arguments.
    """
    client = cls.__new__(cls)
    out = []
    for name, func in inspect.getmembers(cls, inspect.isfunction):
        if name.startswith('_') or name in ('call', 'cast'):
            continue
        client._client = _Recorder()
        params = list(inspect.signature(func).parameters.values())[2:]
        args = {p.name: 'x' for p in params
                if p.default is inspect.Parameter.empty}
        if 'count' in args:
            args['count'] = 1
        if 'latency_ms' in args:
            args.update(latency_ms=1.0, jmx_host='h', jmx_port=7199)
        func(client, {}, **args)
        for method, version, kwargs in client._client.sent:
            out.append((name, method, version, kwargs))
    return out


def test_every_worker_with_rpc_api_has_a_client():
    served = {name for name in workers.WORKERS
              if workers.manager_class(name).target is not None}
    assert served == {cls.WORKER for cls in CLIENTS}


@pytest.mark.parametrize('cls', CLIENTS, ids=lambda c: c.__name__)
def test_client_methods_are_served_by_the_manager(cls):
    manager = workers.manager_class(cls.WORKER)
    served = tuple(int(p) for p in manager.target.version.split('.'))
    messages = _messages(cls)
    assert messages, '%s sends nothing' % cls.__name__
    for name, method, version, kwargs in messages:
        pinned = tuple(int(p) for p in version.split('.'))
        # oslo.messaging: same major version, minor not newer than served
        assert pinned[0] == served[0] and pinned <= served, (name, version)
        assert method in manager.RPC_METHODS, (manager.__name__, method)
        endpoint = getattr(manager, method, None)
        assert callable(endpoint), '%s.%s' % (manager.__name__, method)
        inspect.signature(endpoint).bind(None, None, **kwargs)


@pytest.mark.parametrize('cls', CLIENTS, ids=lambda c: c.__name__)
def test_client_methods_have_a_caller_in_the_service(cls):
    module = cls.__module__.rpartition('.')[2]
    users = [text for path, text in _sources()
             if 'rpcapi' not in path.parts and 'evaluation' not in path.parts
             and re.search(r'rpcapi import %s\b' % module, text)]
    assert users, '%s has no user in elastman/' % cls.__module__
    for name, *_ in _messages(cls):
        assert any(re.search(r'\.%s\(' % name, text) for text in users), \
            '%s.%s has no caller in elastman/' % (cls.__name__, name)


def _published():
    kinds = set()
    for _, text in _sources():
        kinds.update(re.findall(r"_notify\(\s*'([\w.]+)'", text))
        kinds.update(re.findall(r"notifier\.\w+\([^,]+,\s*'([\w.]+)'", text))
    return kinds


def _listened():
    """The event-type filters of endpoints that a listener is started
    with.
    """
    rules = []
    for _, text in _sources():
        for cls, rule in re.findall(
                r"class (\w+)[^\n]*:\n(?:.*\n)*?\s+filter_rule = messaging"
                r"\.NotificationFilter\(\s*event_type=r'([^']+)'", text):
            if any(re.search(r'get_listener\((?:.|\n)*?%s\(' % cls, other)
                   for _, other in _sources()):
                rules.append(rule)
    return rules


def test_every_notification_has_a_listener():
    published = _published()
    assert published == {'hostagent.interference', 'hostagent.escalation'}
    rules = _listened()
    assert rules
    for kind in published:
        assert any(re.match(rule, kind) for rule in rules), kind


@pytest.mark.parametrize('cls', CLIENTS, ids=lambda c: c.__name__)
def test_the_bus_reaches_only_the_rpc_methods(cls):
    manager_cls = workers.manager_class(cls.WORKER)
    manager = manager_cls.__new__(manager_cls)
    endpoint = manager_base.RPCEndpoint(manager)
    public = {name for name in vars(endpoint) if not name.startswith('_')}
    assert public == {'target', *manager_cls.RPC_METHODS}
    assert not hasattr(endpoint, 'periodic_tasks')
