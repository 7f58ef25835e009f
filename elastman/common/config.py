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
"""Process bootstrap: parse configuration, set up logging, fail clearly."""
from __future__ import annotations

import functools
import sys
from typing import Callable

from oslo_config import cfg
from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_messaging import opts as messaging_opts

from elastman.common import exception
import elastman.conf
from elastman import version

CONF = elastman.conf.CONF
LOG = logging.getLogger(__name__)

logging.register_options(CONF)
logging.set_defaults(default_log_levels=logging.get_default_log_levels() + [
    'cassandra=WARN', 'stevedore=WARN', 'kombu=WARN', 'amqp=WARN'])
messaging.set_transport_defaults(control_exchange='elastman')
# Register oslo.messaging's options now (it would on first use) so that a
# default transport can be set and every value is checked at start-up.
for _group, _opts in messaging_opts.list_opts():
    CONF.register_opts(_opts, group=_group)


def parse_args(argv: list[str], default_transport: str | None = None,
               default_config_files: list[str] | None = None) -> cfg.ConfigOpts:
    """Parse the command line and config files, then check every value."""
    if default_transport is not None:
        CONF.set_default('transport_url', default_transport)
    CONF(argv[1:], project='elastman',
         version=version.version_info.version_string(),
         default_config_files=default_config_files)
    logging.setup(CONF, 'elastman')
    validate(CONF)
    return CONF


def validate(conf: cfg.ConfigOpts) -> None:
    """Read every option once: oslo.config checks values lazily, elastman
    wants a bad value reported at start-up, naming the option.
    """
    for name in list(conf):
        try:
            group = getattr(conf, name)
        except (cfg.ConfigFileValueError, ValueError) as exc:
            raise exception.ConfigurationError(reason=str(exc))
        if not isinstance(group, cfg.ConfigOpts.GroupAttr):
            continue
        for opt_name in list(group):
            try:
                getattr(group, opt_name)
            except (cfg.ConfigFileValueError, ValueError) as exc:
                raise exception.ConfigurationError(
                    reason='[%s] %s: %s' % (name, opt_name, exc))


def main_wrapper(func: Callable[[list[str]], int | None]):
    """Turn configuration and availability errors into one line and an
    exit code instead of a traceback.
    """
    @functools.wraps(func)
    def main(argv: list[str] | None = None) -> int:
        argv = sys.argv if argv is None else argv
        prog = argv[0].rsplit('/', 1)[-1] if argv else 'elastman'
        try:
            code = func(argv)
        except (cfg.Error, exception.ConfigurationError) as exc:
            print('%s: configuration error: %s' % (prog, exc), file=sys.stderr)
            return 2
        except exception.ElastmanException as exc:
            print('%s: %s' % (prog, exc), file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            return 130
        return code or 0
    return main
