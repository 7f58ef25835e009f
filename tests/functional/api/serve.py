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
"""Serve the API in noauth mode on a throwaway store node until interrupted:
``python3 -m tests.functional.api.serve [port]`` (for schemathesis runs and
trying the OSC plugin by hand).
"""
import signal
import sys
import uuid

from elastman.api import service as api_service
from elastman.common import config as em_config
from elastman import store as em_store
from elastman.store import connection
from elastman.store import schema
from tests.functional import services


def main(argv):
    conf = em_config.CONF
    conf([], project='elastman', default_config_files=[])
    node = services.start_store(conf)
    try:
        conf.set_override('contact_points', [node.spec.address], 'store')
        conf.set_override('port', node.spec.cql_port, 'store')
        conf.set_override('keyspace', 'serve_%s' % uuid.uuid4().hex[:8],
                          'store')
        conf.set_override('auth_strategy', 'noauth', 'api')
        conf.set_override('bind_port', int(argv[1]) if len(argv) > 1 else 0,
                          'api')
        conf.set_override('transport_url', 'fake://')
        conf.set_override('marker_secret', uuid.uuid4().hex, 'api')
        session = connection.connect(conf)
        schema.sync(session, conf)
        connection.close(session)
        store = em_store.Store.open(conf)
        service = api_service.build(conf, store)
        service.start()
        print('http://127.0.0.1:%d' % service.port, flush=True)
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
        service.stop()
        store.close()
    finally:
        node.destroy()


if __name__ == '__main__':
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    main(sys.argv)
