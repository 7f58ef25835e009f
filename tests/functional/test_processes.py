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
"""Separate elastman processes over a real RabbitMQ, and the commands an
operator runs: db sync, elastman-all, clean SIGTERM shutdown.
"""
import json
import subprocess
import sys
import urllib.request
import uuid

import kombu

from elastman.actuator import hostevents
from elastman.common import context
from elastman.common import manager as manager_base
from elastman.common import rpc
from elastman.common.rpcapi import actuator as actuator_rpcapi
from elastman.common.rpcapi import hostagent as hostagent_rpcapi
from elastman.hostagent import manager as hostagent_manager
from elastman.monitor import manager as monitor_manager
from tests.functional import services
from tests.unit import memstore


def _sync(config):
    out = subprocess.run([sys.executable, '-m', 'elastman.cmd.manage',
                          '--config-file', config, 'db', 'sync'],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_db_sync_twice_is_a_noop(config_file):
    config = config_file()
    assert 'applied migrations 1' in _sync(config)  # 1 and any later
    assert 'up to date' in _sync(config)


def test_api_scale_cast_reaches_an_actuator_process_over_rabbit(
        conf, config_file, rabbit):
    # the API's one RPC: a scale cast, served by a separate actuator
    config = config_file(DEFAULT={'transport_url': rabbit.url,
                                  'host': 'actuator-under-test'})
    _sync(config)
    worker = services.Process('-m', 'elastman.cmd.actuator', '--config-file', config)
    try:
        worker.wait_for_line('actuator worker started on topic')
        conf.set_override('transport_url', rabbit.url)
        transport = rpc.get_transport(conf)
        cluster_id = str(uuid.uuid4())
        actuator_rpcapi.ActuatorAPI(conf, transport).scale(
            context.get_admin_context(), cluster_id, 4, retry=1)
        worker.wait_for_line('scale request for unknown cluster %s'
                             % cluster_id)
        transport.cleanup()

        assert worker.terminate() == 0, worker.output
        assert 'actuator worker stopped' in worker.output
    finally:
        conf.clear_override('transport_url')
        worker.kill()


def _queued(url, queue):
    """Messages waiting in ``queue`` of the broker at ``url``."""
    with kombu.Connection(url.replace('rabbit://', 'amqp://', 1)) as conn:
        _, count, _ = conn.default_channel.queue_declare(queue=queue,
                                                         passive=True)
        return count


def test_host_agent_notifications_reach_the_actuator_over_rabbit(conf,
                                                                 rabbit):
    # A host agent's report published before the actuator listens is kept
    # in the topic's default queue and handled once it does; nothing is
    # left in the queue.
    conf.set_override('transport_url', rabbit.url)
    try:
        transport = rpc.get_notification_transport(conf)
        notifier = rpc.get_notifier(conf, transport, 'hostagent.cmp-1')
        vms = {'vm-1': {'interference_index': 0.25}}
        notifier.info(context.RequestContext(), 'hostagent.interference',
                      {'host': 'cmp-1', 'vms': vms})
        store = memstore.MemStore()
        # as the actuator listens (elastman.actuator.manager)
        listener = rpc.get_listener(
            conf, transport, [hostevents.HostEventsEndpoint(store)])
        listener.start()
        try:
            services.wait_for(lambda: store.hosts.reports, timeout=30)
        finally:
            listener.stop()
            listener.wait()
        assert store.hosts.reports == [('cmp-1', vms)]
        assert _queued(rabbit.url,
                       '%s.info' % conf.rpc.notification_topic) == 0
        transport.cleanup()
    finally:
        conf.clear_override('transport_url')


def test_monitor_feeds_latencies_to_the_host_agent_over_rabbit(conf, rabbit,
                                                               tmp_path):
    # The bus probe of a host agent (its default) gets its latencies from
    # the monitor's push_latency casts, addressed by the compute host.
    conf.set_override('transport_url', rabbit.url)
    conf.set_override('host', 'cmp-under-test')
    conf.set_override('state_dir', str(tmp_path), 'hostagent')
    try:
        transport = rpc.get_transport(conf)
        agent = hostagent_manager.HostAgentManager(conf, transport)
        server = rpc.get_server(conf, transport, 'hostagent',
                                [manager_base.RPCEndpoint(agent)])
        server.start()
        try:
            monitor = monitor_manager.MonitorManager(conf, transport=transport)
            monitor.hostagents = hostagent_rpcapi.HostAgentAPI(conf, transport)
            nodes = [{'node_id': 'n1', 'host': 'cmp-under-test',
                      'server_id': 'vm-1'},
                     {'node_id': 'n2', 'host': 'elsewhere',
                      'server_id': 'vm-2'}]
            monitor._push_latencies(nodes, [
                {'node_id': 'n1', 'up': True, 'read_p99_ms': 17.5},
                {'node_id': 'n2', 'up': True, 'read_p99_ms': 99.0}])
            got = []
            services.wait_for(
                lambda: got.extend(agent.probe.collect({'vm-1', 'vm-2'}))
                or got, timeout=30)
            assert [(vm, ms) for vm, _, ms in got] == [('vm-1', 17.5)]
        finally:
            server.stop()
            server.wait()
            transport.cleanup()
    finally:
        for name, group in (('transport_url', None), ('host', None),
                            ('state_dir', 'hostagent')):
            conf.clear_override(name, group)


def test_elastman_all_runs_without_a_broker(config_file, tmp_path):
    config = config_file(api={'bind_port': 0})
    _sync(config)
    config = config_file(api={'bind_port': 19870})
    proc = services.Process('-m', 'elastman.cmd.all', '--config-file', config)
    try:
        def version_doc():
            try:
                with urllib.request.urlopen('http://127.0.0.1:19870/v1',
                                            timeout=2) as resp:
                    return json.load(resp)
            except OSError:
                return None
        doc = services.wait_for(version_doc, timeout=60)
        assert doc['version']['id'] == 'v1.0'
        assert proc.terminate() == 0, proc.output
        for worker in ('monitor', 'trainer', 'predictor', 'actuator'):
            assert '%s worker stopped' % worker in proc.output
    finally:
        proc.kill()


def _exits_with_one_line(module: str, config: str, message: str,
                         timeout: float) -> None:
    """``python -m module`` exits 1 saying ``message``, no traceback."""
    out = subprocess.run([sys.executable, '-m', module, '--config-file',
                          config], capture_output=True, text=True,
                         timeout=timeout)
    assert out.returncode == 1
    assert message in out.stderr
    assert 'Traceback' not in out.stderr


def test_unreachable_store_is_one_clear_line(tmp_path):
    config = services.write_config(
        str(tmp_path / 'bad.conf'),
        DEFAULT={'state_path': str(tmp_path)},
        store={'contact_points': '127.0.0.1', 'port': 1,
               'connect_retries': 1, 'connect_timeout': 1})
    _exits_with_one_line('elastman.cmd.all', config,
                         'Cannot reach the store at 127.0.0.1:1', 60)


def test_store_only_worker_needs_no_broker(config_file):
    # the trainer works from the store alone: a broker it cannot reach
    # does not keep it from starting
    config = config_file(DEFAULT={
        'transport_url': 'rabbit://guest:guest@127.0.0.1:1/'})
    _sync(config)
    worker = services.Process('-m', 'elastman.cmd.trainer', '--config-file', config)
    try:
        worker.wait_for_line('trainer worker started (host')
        assert worker.terminate() == 0, worker.output
    finally:
        worker.kill()


def test_unreachable_broker_is_one_clear_line(tmp_path):
    config = services.write_config(
        str(tmp_path / 'bad.conf'),
        DEFAULT={'state_path': str(tmp_path),
                 'transport_url': 'rabbit://guest:guest@127.0.0.1:1/'})
    _exits_with_one_line('elastman.cmd.monitor', config,
                         'Cannot reach the message broker at 127.0.0.1:1',
                         120)
