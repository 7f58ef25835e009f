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
"""Versioned RPC and the worker service on the in-process transport."""
import threading

import oslo_messaging as messaging
import pytest

from elastman.common import config
from elastman.common import context
from elastman.common import exception
from elastman.common import manager as base_manager
from elastman.common import rpc
from elastman.common import service


class EchoManager(base_manager.Manager):
    WORKER = 'echo'
    target = messaging.Target(version='1.1')
    RPC_METHODS = ('echo',)

    def __init__(self, conf):
        super().__init__(conf)
        self.ticks = threading.Event()

    def periodic_tasks(self):
        return [(self.ticks.set, 0.05)]

    def echo(self, ctxt, value):
        return {'value': value, 'project': ctxt.project_id}


class EchoAPI(rpc.RPCClient):
    WORKER = 'echo'
    VERSION = '1.1'

    def echo(self, ctxt, value):
        return self.call(ctxt, 'echo', version='1.1', value=value)

    def too_new(self, ctxt):
        return self.call(ctxt, 'echo', version='2.0', value=None)

    def not_served(self, ctxt):
        return self.call(ctxt, 'periodic_tasks', version='1.1')


@pytest.fixture
def conf():
    conf = config.CONF
    conf([], project='elastman', default_config_files=[])
    conf.set_override('transport_url', 'fake://')
    yield conf
    conf.clear_override('transport_url')


def test_call_and_periodic(conf):
    transport = rpc.get_transport(conf)
    manager = EchoManager(conf)
    worker = service.WorkerService(conf, transport, manager)
    worker.start()
    try:
        client = EchoAPI(conf, transport)
        ctxt = context.RequestContext(project_id='p1')
        assert client.echo(ctxt, [1, 2]) == {'value': [1, 2],
                                             'project': 'p1'}
        assert manager.ticks.wait(5)
        with pytest.raises(messaging.UnsupportedVersion):
            client.too_new(ctxt)
        # a public method that is not in RPC_METHODS is not on the bus
        with pytest.raises(messaging.NoSuchMethod):
            client.not_served(ctxt)
    finally:
        worker.stop()


def test_worker_without_rpc_api_serves_no_topic(conf):
    class StoreOnly(base_manager.Manager):
        WORKER = 'storeonly'

        def __init__(self, conf):
            super().__init__(conf)
            self.ticks = threading.Event()

        def periodic_tasks(self):
            return [(self.ticks.set, 0.05)]

    transport = rpc.get_transport(conf)
    manager = StoreOnly(conf)
    worker = service.WorkerService(conf, transport, manager)
    worker.start()
    try:
        assert manager.ticks.wait(5)
        client = messaging.get_rpc_client(
            transport, messaging.Target(topic=rpc.topic(conf, 'storeonly')),
            timeout=0.5)
        with pytest.raises(messaging.MessagingTimeout):
            client.call({}, 'describe')
    finally:
        worker.stop()


def test_periodic_failure_does_not_kill_the_worker(conf):
    calls = []

    class Flaky(EchoManager):
        def periodic_tasks(self):
            def boom():
                calls.append(1)
                raise RuntimeError('boom')
            return [(boom, 0.02)]

    worker = service.WorkerService(conf, rpc.get_transport(conf), Flaky(conf))
    worker.start()
    try:
        from tests.functional.services import wait_for
        wait_for(lambda: len(calls) >= 3, timeout=5, interval=0.02)
    finally:
        worker.stop()


def test_unknown_transport_is_a_configuration_error(conf):
    conf.set_override('transport_url', 'nosuch://x/')
    with pytest.raises(exception.ConfigurationError,
                       match="unknown transport 'nosuch'"):
        rpc.get_transport(conf)


def test_fake_transport_needs_no_broker(conf):
    rpc.check_broker(conf)  # must not try to connect anywhere
