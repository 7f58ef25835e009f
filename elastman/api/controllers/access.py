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
"""/v1/clusters/{cluster_id}/credentials: how elastman logs in to the nodes.

A cluster's ``credentials`` (CQL user and password; JMX ones when they
differ) and ``tls`` settings are given when the cluster is created or
registered, or set here later. They are stored encrypted
(:mod:`elastman.store.credentials`) and never returned: the cluster shows
only ``security``, which says whether credentials are set and which
connections use TLS.
"""
from __future__ import annotations

import re

from cryptography import x509
from oslo_log import log as logging

from elastman.api.controllers import base
from elastman.api import errors
from elastman.api import schemas
from elastman.common import exception
from elastman.store import credentials as credentials_store

LOG = logging.getLogger(__name__)

RULE = 'elastman:cluster:credentials:%s'
_SPACE = re.compile(r'\s')


def document(body: dict) -> dict | None:
    """The access document of a validated request body, checked; None when
    the body gives neither credentials nor TLS.
    """
    creds = body.get('credentials')
    tls = body.get('tls')
    if creds is None and tls is None:
        return None
    doc: dict = {}
    if creds is not None:
        secret = creds.get('jmx_password') or creds['password']
        if _SPACE.search(secret):
            # nodetool reads the JMX password from a whitespace-separated
            # file (-pwf); on its command line it would be visible to ps
            raise errors.bad_request(
                'credentials: the JMX password (jmx_password, or password '
                'when no JMX user is given) may not contain white space')
        doc['credentials'] = dict(creds)
    if tls is not None:
        pem = tls.get('ca_certificate')
        if pem is not None:
            try:
                x509.load_pem_x509_certificates(pem.encode())
            except ValueError as exc:
                raise errors.bad_request('tls.ca_certificate is not a PEM '
                                         'certificate: %s' % exc)
        doc['tls'] = {'cql': bool(tls.get('cql')),
                      'jmx': bool(tls.get('jmx')),
                      'verify_hostname': tls.get('verify_hostname', True),
                      **({'ca_certificate': pem} if pem else {})}
    return doc


def summary(doc: dict | None) -> dict:
    """What the cluster shows of its access document (no secrets)."""
    tls = (doc or {}).get('tls') or {}
    return {'authentication': bool((doc or {}).get('credentials')),
            'cql_tls': bool(tls.get('cql')), 'jmx_tls': bool(tls.get('jmx'))}


def check_keys(conf) -> None:
    """503 naming the option when credentials cannot be stored here."""
    try:
        credentials_store.cipher(conf)
    except exception.ConfigurationError as exc:
        raise errors.APIError(503, 'this elastman cannot keep credentials: '
                                   '%s' % exc)


class AccessController(base.Controller):

    def update(self, req, ctx, cluster_id):
        """Replace the cluster's credentials and TLS settings."""
        body = schemas.validate(schemas.CLUSTER_ACCESS, self.body(req))
        row = self.cluster(ctx, cluster_id, RULE % 'set')
        doc = document(body)
        check_keys(self.conf)
        spec = dict(row.get('spec') or {})
        old = spec.get('security') or summary(None)
        new = summary(doc)
        if spec.get('mode') == 'managed' and new != old:
            # elastman configured the servers from these settings: new
            # servers must join with the same ones
            raise errors.APIError(
                409, 'cluster %s is managed: its nodes were started with '
                     'authentication %s, CQL TLS %s and JMX TLS %s; only the '
                     'user names, passwords and CA certificate may change'
                     % (cluster_id, _onoff(old['authentication']),
                        _onoff(old['cql_tls']), _onoff(old['jmx_tls'])))
        self.store.credentials.set(row['id'], doc)
        if new != old:
            spec['security'] = new
            self.store.clusters.update(row['id'], spec=spec)
        LOG.info('credentials of cluster %s set by user %s', row['id'],
                 ctx.user_id)
        return 204, None

    def delete(self, req, ctx, cluster_id):
        """Forget the cluster's credentials and TLS settings."""
        row = self.cluster(ctx, cluster_id, RULE % 'delete')
        spec = dict(row.get('spec') or {})
        if spec.get('mode') == 'managed' and any(
                (spec.get('security') or {}).values()):
            raise errors.APIError(
                409, 'cluster %s is managed and its nodes require its '
                     'credentials or TLS; set new ones instead' % cluster_id)
        self.store.credentials.delete(row['id'])
        spec['security'] = summary(None)
        self.store.clusters.update(row['id'], spec=spec)
        LOG.info('credentials of cluster %s removed by user %s', row['id'],
                 ctx.user_id)
        return 204, None


def _onoff(flag: bool) -> str:
    return 'on' if flag else 'off'
