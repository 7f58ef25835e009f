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
"""Keystone trusts: how elastman acts in a tenant's own project.

The API, holding the calling user's token, creates a trust from that user
(the trustor) to the ``[trustee]`` user, scoped to the user's project, with
impersonation; the cluster keeps the trust's ID. The actuator authenticates
as the trustee with that trust and gets a token of the project (and of the
trustor, by impersonation): servers are created and deleted there, under the
project's quota. When the cluster is deleted, the actuator deletes the trust
with that same token (Keystone lets the trustor delete a trust).
"""
from __future__ import annotations

import threading

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import session as ks_session
import openstack
from openstack import exceptions as os_exc
from oslo_log import log as logging

from elastman.common import exception

LOG = logging.getLogger(__name__)

GROUP = 'trustee'

_trustee_ids: dict[tuple, str] = {}
_lock = threading.Lock()


class TrustError(exception.ElastmanException):
    msg_fmt = '%(reason)s'


def configured(conf) -> bool:
    """Whether ``[trustee]`` names a user to act as."""
    return bool(conf[GROUP].auth_type)


def _plugin(conf, trust_id: str | None = None):
    if not configured(conf):
        raise exception.ConfigurationError(
            reason='[trustee] auth_type is not set: elastman has no user to '
                   'act as in the projects of its clusters')
    extra = {'trust_id': trust_id} if trust_id else {}
    return ks_loading.load_auth_from_conf_options(conf, GROUP, **extra)


def session(conf, trust_id: str | None = None) -> ks_session.Session:
    """A keystoneauth session of the trustee (with ``trust_id``: of the
    trust's project).
    """
    return ks_loading.load_session_from_conf_options(
        conf, GROUP, auth=_plugin(conf, trust_id))


def trust_session(conf, trust_id: str, project_id: str | None = None
                  ) -> ks_session.Session:
    """A session scoped by ``trust_id``, authenticated now: TrustError when
    Keystone refuses the trust (expired, deleted, trustor gone or without
    the delegated roles).
    """
    sess = session(conf, trust_id)
    try:
        sess.get_token()
    except (ks_exc.Unauthorized, ks_exc.Forbidden, ks_exc.NotFound,
            ks_exc.AuthorizationFailure) as exc:
        raise TrustError(reason=(
            'Keystone refuses trust %s%s (it expired, was deleted, or its '
            'trustor lost a delegated role or was disabled); a member of the '
            'project who scales or deletes the cluster gives it a new one: '
            '%s' % (
                trust_id, ' of project %s' % project_id if project_id
                else '', exc))) from exc
    return sess


def trustee_user_id(conf) -> str:
    """The trustee's user ID (looked up once per configuration)."""
    sess = session(conf)     # registers the plugin's options
    key = tuple(str(conf[GROUP].get(o))
                for o in ('auth_url', 'username', 'user_id'))
    with _lock:
        if key not in _trustee_ids:
            _trustee_ids[key] = sess.get_user_id()
        return _trustee_ids[key]


def create_trust(conf, user_auth, trustor_user_id: str, project_id: str,
                 roles: list[str]) -> str:
    """Delegate ``roles`` (``[trustee] delegated_roles`` when set) of the
    user whose keystoneauth plugin is ``user_auth`` (keystonemiddleware's
    ``keystone.token_auth``) in ``project_id`` to the trustee; returns the
    trust's ID. TrustError says why Keystone refused.
    """
    wanted = list(conf[GROUP].delegated_roles) or list(roles)
    try:
        trustee = trustee_user_id(conf)
        user_session = ks_loading.load_session_from_conf_options(
            conf, GROUP, auth=user_auth)
        conn = openstack.connection.Connection(session=user_session,
                                               app_name='elastman')
        trust = conn.identity.create_trust(
            trustor_user_id=trustor_user_id, trustee_user_id=trustee,
            project_id=project_id, impersonation=True,
            roles=[{'name': r} for r in wanted])
    except (ks_exc.ClientException, os_exc.SDKException) as exc:
        raise TrustError(reason='cannot delegate roles %s of user %s in '
                         'project %s to the elastman trustee: %s'
                         % (', '.join(wanted), trustor_user_id, project_id,
                            exc)) from exc
    LOG.info('trust %s: user %s delegates %s in project %s', trust.id,
             trustor_user_id, ', '.join(wanted), project_id)
    return trust.id


def delete_trust(conf, trust_id: str) -> None:
    """Delete the trust with its own token (a trust already gone, or no
    longer usable, is left to Keystone: it cannot be used either).
    """
    try:
        sess = trust_session(conf, trust_id)
    except TrustError as exc:
        LOG.info('trust %s is not usable any more, not deleting it: %s',
                 trust_id, exc)
        return
    conn = openstack.connection.Connection(session=sess, app_name='elastman')
    try:
        conn.identity.delete_trust(trust_id, ignore_missing=True)
    except (ks_exc.ClientException, os_exc.SDKException) as exc:
        raise TrustError(reason='cannot delete trust %s: %s'
                         % (trust_id, exc)) from exc
    LOG.info('trust %s deleted', trust_id)
