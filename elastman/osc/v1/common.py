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
"""Shared helpers of the OSC commands: the client, columns, waiting."""
from __future__ import annotations

import json
import sys

from cliff import columns as cliff_columns
from osc_lib import exceptions

from elastman.client import client as em_client


def client(app) -> em_client.Client:
    return app.client_manager.elastman


def find_cluster(app, name_or_id: str) -> dict:
    try:
        return client(app).find_cluster(name_or_id)
    except em_client.ClientError as exc:
        raise exceptions.CommandError(str(exc))


def call(func, *args, **kwargs):
    """Run a client call; API errors become CommandError (exit code 1)."""
    try:
        return func(*args, **kwargs)
    except em_client.ClientError as exc:
        raise exceptions.CommandError(str(exc))


def show(doc: dict, columns: tuple[str, ...]) -> tuple[tuple, tuple]:
    return columns, tuple(doc.get(c) for c in columns)


def row(doc: dict, columns: tuple[str, ...], values: dict) -> tuple:
    """The ``columns`` of ``doc``, each from ``values`` (the formatted
    ones) when there, else the record's own field.
    """
    return tuple(values[c] if c in values else doc.get(c) for c in columns)


class ClusterCommand:
    """A command on one cluster, named by its first argument.

    Mixed in before the cliff command class (``command.ShowOne`` ...).
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('cluster', help='Cluster name or id.')
        return parser

    def cluster(self, args) -> dict:
        """The cluster the arguments name."""
        return find_cluster(self.app, args.cluster)

    def on_cluster(self, args, method: str, *more, **kwargs):
        """Call the client's ``method`` with the cluster's id first."""
        return call(getattr(client(self.app), method),
                    self.cluster(args)['id'], *more, **kwargs)


#: Output formats that get the API's whole record rather than a summary.
MACHINE_FORMATS = ('json', 'yaml')


def machine(args) -> bool:
    """True when ``-f`` asks for a format read by programs."""
    return getattr(args, 'formatter', 'table') in MACHINE_FORMATS


def whole(items: list[dict]) -> tuple[tuple, list[tuple]]:
    """Every field of every item, for ``-f json``/``-f yaml`` lists."""
    names: list[str] = []
    for item in items:
        names.extend(k for k in item if k not in names)
    return tuple(names), [tuple(item.get(k) for k in names)
                          for item in items]


class JSON(cliff_columns.FormattableColumn):
    """A structure shown as compact JSON in a table."""

    def human_readable(self) -> str:
        if self._value in (None, {}, []):
            return ''
        return json.dumps(self._value, sort_keys=True, separators=(', ', ': '))


def add_paging(parser, default_limit: int | None = None) -> None:
    parser.add_argument(
        '--limit', type=int, default=default_limit,
        help='At most this many (default: %s).' % (default_limit or 'all'))
    parser.add_argument('--marker', help='Start after this page marker.')


def progress(stream=sys.stderr):
    """A progress printer for ``Client.wait_for``: one line per change."""
    last = {}

    def report(doc):
        size = 'size=%s' % doc.get('size') if doc and 'size' in doc else ''
        line = 'gone' if doc is None else '%s %s' % (
            doc.get('state'), doc.get('step') or size)
        if last.get('line') != line:
            stream.write(line.strip() + '\n')
            stream.flush()
            last['line'] = line
    return report


def add_wait(parser, what: str) -> None:
    parser.add_argument('--wait', action='store_true',
                        help='Wait until %s, printing progress.' % what)
    parser.add_argument('--timeout', type=int, default=1800,
                        help='Seconds to wait at most (default 1800).')
