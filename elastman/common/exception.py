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
"""Exceptions elastman raises, each with a message fit for an operator."""


class ElastmanException(Exception):
    """Base class: ``msg_fmt`` is formatted with the keyword arguments."""

    msg_fmt = 'An unknown error occurred.'

    def __init__(self, message: str | None = None, **kwargs):
        self.kwargs = kwargs
        if message is None:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError):
                message = self.msg_fmt
        super().__init__(message)

    @property
    def message(self) -> str:
        return str(self)


class ConfigurationError(ElastmanException):
    msg_fmt = 'Invalid configuration: %(reason)s'


class StoreUnavailable(ElastmanException):
    msg_fmt = 'Cannot reach the store at %(where)s: %(reason)s'


class SchemaOutOfDate(ElastmanException):
    msg_fmt = ('Store keyspace %(keyspace)s is at schema version %(found)s, '
               'this code needs %(needed)s: run "elastman-manage db sync".')


class BrokerUnavailable(ElastmanException):
    msg_fmt = 'Cannot reach the message broker at %(where)s: %(reason)s'


class NotFound(ElastmanException):
    msg_fmt = '%(kind)s %(id)s not found.'


class Conflict(ElastmanException):
    msg_fmt = '%(reason)s'


class CassandraNodeError(ElastmanException):
    msg_fmt = 'Cassandra node %(node)s: %(reason)s'


class NodetoolError(ElastmanException):
    msg_fmt = 'nodetool %(command)s failed on %(node)s: %(reason)s'
