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
"""Each cluster's access document (credentials, TLS), encrypted.

One row per cluster in ``cluster_credentials``: the JSON document the API
received, encrypted with Fernet (AES-128-CBC and HMAC-SHA256) under the
first of ``[credentials] encryption_keys``; any key of the list decrypts, so
keys rotate without downtime. The document never leaves this module in
clear text except to the workers that log in to the cluster's nodes, and
nothing here logs it.
"""
from __future__ import annotations

import json
import uuid

from cryptography import fernet
from oslo_utils import timeutils

from elastman.common import exception
from elastman.store import base

OPTION = '[credentials] encryption_keys'


class CredentialsUnavailable(exception.ElastmanException):
    msg_fmt = 'credentials of cluster %(cluster)s: %(reason)s'


def cipher(conf) -> fernet.MultiFernet:
    """The configured keys, checked; ConfigurationError names the option."""
    keys = [k.strip() for k in conf.credentials.encryption_keys if k.strip()]
    if not keys:
        raise exception.ConfigurationError(
            reason='%s is not set: elastman cannot store or read cluster '
                   'credentials' % OPTION)
    ciphers = []
    for index, key in enumerate(keys):
        try:
            ciphers.append(fernet.Fernet(key.encode()))
        except (ValueError, TypeError):
            raise exception.ConfigurationError(
                reason='%s: key %d is not a Fernet key (32 url-safe '
                       'base64-encoded bytes)' % (OPTION, index + 1))
    return fernet.MultiFernet(ciphers)


def generate_key() -> str:
    return fernet.Fernet.generate_key().decode()


class CredentialRepository(base.Repository):

    def _cipher(self) -> fernet.MultiFernet:
        return cipher(self._conf)

    def set(self, cluster_id: uuid.UUID, document: dict) -> None:
        token = self._cipher().encrypt(json.dumps(
            document, sort_keys=True).encode())
        self._execute('INSERT INTO cluster_credentials (cluster_id, secret, '
                      'updated_at) VALUES (?, ?, ?)',
                      (cluster_id, token, timeutils.utcnow()))

    def get(self, cluster_id: uuid.UUID) -> dict | None:
        """The decrypted document, None if the cluster has none."""
        row = self._one('SELECT secret FROM cluster_credentials WHERE '
                        'cluster_id = ?', (cluster_id,))
        if row is None:
            return None
        try:
            return json.loads(self._cipher().decrypt(row['secret']))
        except fernet.InvalidToken:
            raise CredentialsUnavailable(
                cluster=cluster_id,
                reason='no key of %s decrypts them (was the key that '
                       'encrypted them removed?)' % OPTION)
        except exception.ConfigurationError as exc:
            raise CredentialsUnavailable(cluster=cluster_id, reason=str(exc))

    def exists(self, cluster_id: uuid.UUID) -> bool:
        return self._one('SELECT cluster_id FROM cluster_credentials WHERE '
                         'cluster_id = ?', (cluster_id,)) is not None

    def delete(self, cluster_id: uuid.UUID) -> None:
        self._execute('DELETE FROM cluster_credentials WHERE cluster_id = ?',
                      (cluster_id,))

    def rotate(self) -> int:
        """Encrypt every row again under the first key; rows it cannot
        decrypt are left as they are (CredentialsUnavailable on read).
        Returns the number of rows re-encrypted.
        """
        keys = self._cipher()
        done = 0
        for row in list(self._iterate('SELECT cluster_id, secret FROM '
                                      'cluster_credentials')):
            try:
                token = keys.rotate(row['secret'])
            except fernet.InvalidToken:
                continue
            self._execute('UPDATE cluster_credentials SET secret = ?, '
                          'updated_at = ? WHERE cluster_id = ?',
                          (token, timeutils.utcnow(), row['cluster_id']))
            done += 1
        return done
