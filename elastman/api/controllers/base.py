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
"""What every controller needs: the store, policy, paging, the cluster."""
from __future__ import annotations

import errno
import functools
import hashlib
import hmac
import json
import os
import re
import secrets
import uuid

from oslo_log import log as logging
import webob

from elastman.api import errors
from elastman.common import exception

LOG = logging.getLogger(__name__)

MAX_BODY = 64 * 1024
DEFAULT_LIMIT = 100
_MARKER = re.compile(r'^([A-Za-z0-9_\-]{4,4096}={0,2})\.([0-9a-f]{32})$')
#: where the marker key is kept when [api] marker_secret is not set
MARKER_KEY_FILE = 'api-marker.key'


@functools.lru_cache(maxsize=4)
def _key_from_file(path: str) -> bytes:
    """The key in ``path``, made (random, mode 0600) if it is missing."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        if exc.errno != errno.EEXIST:
            raise exception.ConfigurationError(
                reason='[api] marker_secret is not set and %s cannot be '
                       'created: %s' % (path, exc.strerror))
    else:
        with os.fdopen(fd, 'w') as f:
            f.write(secrets.token_hex(32) + '\n')
        LOG.warning('[api] marker_secret is not set: page markers are signed '
                    'with a key made in %s; API processes on other hosts '
                    'need the same [api] marker_secret', path)
    with open(path) as f:
        key = f.read().strip()
    if not key:
        raise exception.ConfigurationError(
            reason='[api] marker_secret is not set and %s is empty' % path)
    return key.encode()


class MarkerSigner:
    """Signs and checks page markers.

    A marker carries an HMAC of the store's paging state: Cassandra drops
    the connection on a malformed paging state, so only markers this API
    issued may reach it. The key is ``[api] marker_secret``; unset, a random
    key kept in ``<state_path>/api-marker.key``.
    """

    def __init__(self, conf) -> None:
        secret = conf.api.marker_secret
        if secret:
            self._key = secret.encode()
        else:
            os.makedirs(conf.state_path, exist_ok=True)
            self._key = _key_from_file(os.path.join(conf.state_path,
                                                    MARKER_KEY_FILE))

    def _digest(self, state: str) -> str:
        return hmac.new(self._key, state.encode(), hashlib.sha256
                        ).hexdigest()[:32]

    def sign(self, state: str | None) -> str | None:
        return None if state is None else '%s.%s' % (state,
                                                     self._digest(state))

    def verify(self, marker: str) -> str:
        """The paging state of a marker this API signed; 400 otherwise."""
        match = _MARKER.match(marker)
        if not match or not hmac.compare_digest(
                self._digest(match.group(1)), match.group(2)):
            raise errors.bad_request('invalid page marker')
        return match.group(1)


class Controller:
    """Base of the resource controllers; actions return (status, body)."""

    def __init__(self, conf, store, enforcer, actuator=None) -> None:
        self.conf = conf
        self.store = store
        self.enforcer = enforcer
        self.actuator = actuator
        self._markers: MarkerSigner | None = None

    @property
    def markers(self) -> MarkerSigner:
        if self._markers is None:       # the key is read on first use
            self._markers = MarkerSigner(self.conf)
        return self._markers

    # -- request helpers -------------------------------------------------
    @staticmethod
    def body(req: webob.Request) -> dict:
        if req.content_length and req.content_length > MAX_BODY:
            raise errors.APIError(413, 'request body larger than %d bytes'
                                  % MAX_BODY)
        raw = req.body
        if len(raw) > MAX_BODY:
            raise errors.APIError(413, 'request body larger than %d bytes'
                                  % MAX_BODY)
        try:
            body = json.loads(raw or b'null')
        except (ValueError, UnicodeDecodeError):
            raise errors.bad_request('request body is not valid JSON')
        if not isinstance(body, dict):
            raise errors.bad_request('request body must be a JSON object')
        return body

    def page_args(self, req: webob.Request) -> tuple[int, str | None]:
        max_limit = self.conf.api.max_limit
        raw = req.GET.get('limit')
        if raw is None:
            limit = min(DEFAULT_LIMIT, max_limit)
        else:
            try:
                limit = int(raw)
            except ValueError:
                raise errors.bad_request('limit must be an integer')
            if limit < 1:
                raise errors.bad_request('limit must be at least 1')
            limit = min(limit, max_limit)
        marker = req.GET.get('marker') or None
        if marker is not None:
            marker = self.markers.verify(marker)
        return limit, marker

    def page(self, fetch):
        """Run a paged store query; a bad marker is a 400."""
        try:
            page = fetch()
            page.next_marker = self.markers.sign(page.next_marker)
            return page
        except exception.NotFound:
            raise
        except exception.ElastmanException as exc:
            raise errors.bad_request(str(exc))
        except Exception as exc:
            # The driver rejects a well-formed but foreign paging state.
            if type(exc).__name__ in ('ProtocolException', 'InvalidRequest'):
                raise errors.bad_request('invalid page marker')
            raise

    # -- clusters and policy ---------------------------------------------
    def cluster(self, ctx, cluster_id: str, rule: str) -> dict:
        """Load a cluster and authorize ``rule`` on it.

        A cluster of another project is "not found" to callers who may not
        see it, so its existence is not disclosed.
        """
        try:
            row = self.store.clusters.get(uuid.UUID(cluster_id))
        except (ValueError, exception.NotFound):
            raise errors.not_found('cluster %s not found' % cluster_id)
        target = {'project_id': row['project_id']}
        if not self.enforcer.allowed(ctx, rule, target):
            if ctx.project_id != row['project_id']:
                raise errors.not_found('cluster %s not found' % cluster_id)
            raise errors.APIError(403, 'policy does not allow %s' % rule)
        return row
