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
"""A private local cloud for the benchmarks in tools/: the local compute
driver on addresses, JMX ports and a cgroup of the benchmark's own, in a
temporary state directory; every server it made is deleted at the end.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from typing import Any, Iterator

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from elastman.common import config as em_config  # noqa: E402
from elastman.compute import local  # noqa: E402


@contextlib.contextmanager
def private_cloud(name: str, flavors: list[str], network: str,
                  jmx_port_base: int, **options: Any
                  ) -> Iterator[tuple[Any, local.LocalDriver, str]]:
    """(conf, driver, state directory); ``options``: more ``[local_cloud]``
    options.
    """
    conf = em_config.CONF
    conf([], project='elastman', default_config_files=[])
    state = tempfile.mkdtemp(prefix='elastman-%s-' % name)
    conf.set_override('state_path', state)
    settings = {'flavor': flavors, 'network': network,
                'jmx_port_base': jmx_port_base,
                'cgroup_parent': 'elastman-%s' % name, **options}
    for option, value in settings.items():
        conf.set_override(option, value, 'local_cloud')
    driver = local.LocalDriver(conf)
    try:
        yield conf, driver, state
    finally:
        for server in driver.list():
            driver.delete(server.id)
        shutil.rmtree(state, ignore_errors=True)
