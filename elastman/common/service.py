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
"""Running workers: periodic tasks (and an RPC server for a worker with an RPC
API) per worker, one launcher.

elastman runs on plain threads: oslo.messaging's threading executor serves RPC
and futurist's PeriodicWorker runs periodic tasks. Several workers can share one
process (``elastman-all``), which is why the launcher is not oslo.service's:
its threading backend forks a child per service, and in-process workers must
share one in-memory transport.
"""
from __future__ import annotations

import signal
import threading

from futurist import periodics
from oslo_log import log as logging

from elastman.common import manager as base_manager
from elastman.common import rpc

LOG = logging.getLogger(__name__)


class Service:
    """Something a :class:`Launcher` starts and stops."""

    name = 'service'

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError


class WorkerService(Service):
    """Runs one manager's periodic tasks and, when it has an RPC API
    (``manager.target``), serves it on its topic.
    """

    def __init__(self, conf, transport,
                 manager: base_manager.Manager) -> None:
        self.conf = conf
        self.manager = manager
        self.name = manager.WORKER
        self._server = None
        if manager.target is not None:
            self._server = rpc.get_server(
                conf, transport, manager.WORKER,
                [base_manager.RPCEndpoint(manager)])
        self._periodic: periodics.PeriodicWorker | None = None
        self._periodic_thread: threading.Thread | None = None

    def start(self) -> None:
        self.manager.start()
        if self._server is not None:
            self._server.start()
        tasks = []
        for func, interval in self.manager.periodic_tasks():
            tasks.append((periodics.periodic(interval, run_immediately=True)(
                _logged(func)), (), {}))
        if tasks:
            self._periodic = periodics.PeriodicWorker(tasks)
            self._periodic_thread = threading.Thread(
                target=self._periodic.start, name='%s-periodic' % self.name,
                daemon=True)
            self._periodic_thread.start()
        LOG.info('%s worker started%s (host %s): %s', self.name,
                 ' on topic %s' % rpc.topic(self.conf, self.name)
                 if self._server is not None else '', self.conf.host,
                 self.manager.describe())

    def stop(self) -> None:
        if self._periodic is not None:
            self._periodic.stop()
            self._periodic.wait()
            self._periodic_thread.join(self.conf.graceful_shutdown_timeout)
        if self._server is not None:
            self._server.stop()
            self._server.wait()
        self.manager.stop()
        LOG.info('%s worker stopped', self.name)


def _logged(func):
    """Periodic tasks must not die on one bad round: log and go on.

    An outage (the store or the bus gone) fails every round until it ends:
    the first failure is logged with its traceback, the following ones of
    the same kind in one line each, and the first round that works again
    says how many failed.
    """
    name = getattr(func, '__qualname__', repr(func))
    failures: list[str] = []

    def wrapper():
        try:
            func()
        except Exception as exc:
            kind = type(exc).__name__
            if failures and failures[-1] == kind:
                LOG.warning('periodic task %s failed again (%s: %s); it runs '
                            'again next period', name, kind, exc)
            else:
                LOG.exception('periodic task %s failed; it runs again next '
                              'period', name)
            failures.append(kind)
            return
        if failures:
            LOG.warning('periodic task %s works again after %d failed '
                        'run(s) (%s)', name, len(failures),
                        ', '.join(sorted(set(failures))))
            failures.clear()
    wrapper.__name__ = getattr(func, '__name__', 'task')
    return wrapper


class Launcher:
    """Starts services, waits for SIGTERM/SIGINT, stops them in reverse."""

    def __init__(self, conf) -> None:
        self.conf = conf
        self.services: list[Service] = []
        self._stop = threading.Event()

    def add(self, service: Service) -> None:
        self.services.append(service)

    def request_stop(self, signum=None, frame=None) -> None:
        if signum is not None:
            LOG.info('caught %s, stopping', signal.Signals(signum).name)
        self._stop.set()

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self.request_stop)
        signal.signal(signal.SIGINT, self.request_stop)
        started: list[Service] = []
        try:
            for service in self.services:
                service.start()
                started.append(service)
            while not self._stop.wait(1.0):
                pass
        finally:
            for service in reversed(started):
                try:
                    service.stop()
                except Exception:
                    LOG.exception('error while stopping %s', service.name)
        return 0
