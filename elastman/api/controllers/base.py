"""What every controller needs: the store, policy, paging, the cluster."""
from __future__ import annotations

import hashlib
import hmac
import json
import re
import uuid

import webob

from elastman.api import errors
from elastman.common import exception

MAX_BODY = 64 * 1024
DEFAULT_LIMIT = 100
_MARKER = re.compile(r'^([A-Za-z0-9_\-]{4,4096}={0,2})\.([0-9a-f]{32})$')
# Markers carry a digest of the store's paging state: Cassandra drops the
# connection on a malformed paging state, so only markers this API issued
# may reach it.
_MARKER_KEY = b'elastman-api-marker-v1'


def _digest(state: str) -> str:
    return hmac.new(_MARKER_KEY, state.encode(), hashlib.sha256
                    ).hexdigest()[:32]


def sign_marker(state: str | None) -> str | None:
    return None if state is None else '%s.%s' % (state, _digest(state))


class Controller:
    """Base of the resource controllers; actions return (status, body)."""

    def __init__(self, conf, store, enforcer, actuator=None) -> None:
        self.conf = conf
        self.store = store
        self.enforcer = enforcer
        self.actuator = actuator

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
            match = _MARKER.match(marker)
            if not match or not hmac.compare_digest(
                    _digest(match.group(1)), match.group(2)):
                raise errors.bad_request('invalid page marker')
            marker = match.group(1)
        return limit, marker

    @staticmethod
    def page(fetch):
        """Run a paged store query; a bad marker is a 400."""
        try:
            page = fetch()
            page.next_marker = sign_marker(page.next_marker)
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
