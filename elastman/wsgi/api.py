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
"""The elastman API as a WSGI application: ``elastman.wsgi.api:application``.

Serve it with any WSGI server, for example::

    uwsgi --http-socket 127.0.0.1:9870 --module elastman.wsgi.api:application \\
        --master --processes 2 --threads 4 --lazy-apps
    gunicorn --bind 127.0.0.1:9870 --workers 2 elastman.wsgi.api:application

The configuration is read when the module is imported, from the files named
by ``OS_ELASTMAN_CONFIG_FILES`` (separated by ``;``, default
``elastman.conf``; an absolute path is taken as is) in the directory
``OS_ELASTMAN_CONFIG_DIR`` (default ``/etc/elastman``); a bad value stops the
import with an error that names the option. The store is opened on the first request in each worker
process, after the server has forked, because the Cassandra driver's
connections must not be shared across a fork. ``[api] bind_host`` and
``bind_port`` do not apply: the server binds.
"""
from __future__ import annotations

import os
import threading

from oslo_log import log as logging

from elastman.api import app as api_app
from elastman.api import errors
from elastman.common import config
from elastman.common import exception
from elastman import store as em_store

LOG = logging.getLogger(__name__)

CONFIG_DIR_ENV = 'OS_ELASTMAN_CONFIG_DIR'
CONFIG_FILES_ENV = 'OS_ELASTMAN_CONFIG_FILES'


def config_files(environ=os.environ) -> list[str]:
    """The configuration files the environment names, in order."""
    directory = environ.get(CONFIG_DIR_ENV, '/etc/elastman')
    names = environ.get(CONFIG_FILES_ENV, 'elastman.conf')
    return [os.path.join(directory, name.strip())
            for name in names.split(';') if name.strip()]


class LazyApplication:
    """The API pipeline, built on the first request of this process.

    A store that cannot be reached answers 503 and is tried again on the
    next request; nothing is cached until the pipeline is built.
    """

    def __init__(self, conf) -> None:
        self.conf = conf
        self._app = None
        self._store = None
        self._lock = threading.Lock()

    def _build(self):
        with self._lock:
            if self._app is None:
                self._store = em_store.Store.open(self.conf)
                self._app = api_app.build_app(self.conf, self._store)
                LOG.info('elastman API ready in process %d', os.getpid())
        return self._app

    def __call__(self, environ, start_response):
        try:
            app = self._app or self._build()
        except exception.ElastmanException as exc:
            LOG.error('cannot serve the API: %s', exc)
            resp = errors.error_response(503, str(exc))
            return resp(environ, start_response)
        return app(environ, start_response)


def init_application(environ=os.environ) -> LazyApplication:
    """Parse the configuration files and return the application."""
    files = [path for path in config_files(environ) if os.path.exists(path)]
    conf = config.parse_args(['elastman-api'], default_config_files=files)
    return LazyApplication(conf)


application = init_application()
