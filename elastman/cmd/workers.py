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
"""Assembling worker processes: which managers, which transport, one store."""
from __future__ import annotations

import importlib

from oslo_log import log as logging

from elastman.common import config
from elastman.common import rpc
from elastman.common import service
from elastman import store as em_store

LOG = logging.getLogger(__name__)

# worker name -> (manager class, needs the store, needs the bus). The
# monitor casts to the host agents; the actuator serves the API's scale
# requests and listens to the host agents' notifications; the host agent
# serves the monitor's casts and publishes the notifications. The trainer
# and the predictor work from the store alone (doc/source/architecture.rst).
WORKERS = {
    'monitor': ('elastman.monitor.manager:MonitorManager', True, True),
    'trainer': ('elastman.trainer.manager:TrainerManager', True, False),
    'predictor': ('elastman.predictor.manager:PredictorManager', True,
                  False),
    'actuator': ('elastman.actuator.manager:ActuatorManager', True, True),
    'hostagent': ('elastman.hostagent.manager:HostAgentManager', False,
                  True),
}
CONTROL_WORKERS = ('monitor', 'trainer', 'predictor', 'actuator')


def manager_class(name: str):
    module, _, cls = WORKERS[name][0].partition(':')
    return getattr(importlib.import_module(module), cls)


def build_launcher(conf, names: tuple[str, ...], with_api: bool = False):
    """Connect to the bus and the store, then create every service.

    Raises ConfigurationError, BrokerUnavailable or StoreUnavailable before
    any service starts.
    """
    transport = None
    if with_api or any(WORKERS[n][2] for n in names):
        transport = rpc.get_transport(conf)
        rpc.check_broker(conf)
    store = None
    if with_api or any(WORKERS[n][1] for n in names):
        store = em_store.Store.open(conf)
    launcher = service.Launcher(conf)
    for name in names:
        cls = manager_class(name)
        _, with_store, with_bus = WORKERS[name]
        kwargs = {}
        if with_store:
            kwargs['store'] = store
        if with_bus:
            kwargs['transport'] = transport
        manager = cls(conf, **kwargs)
        launcher.add(service.WorkerService(conf, transport, manager))
    if with_api:
        from elastman.api import service as api_service
        launcher.add(api_service.build(conf, store))
    return launcher, store


def run(argv: list[str], names: tuple[str, ...], with_api: bool = False,
        default_transport: str | None = None) -> int:
    conf = config.parse_args(argv, default_transport=default_transport)
    launcher, store = build_launcher(conf, names, with_api)
    try:
        return launcher.run()
    finally:
        if store is not None:
            store.close()
