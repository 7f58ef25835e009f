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
"""elastman API client on a keystoneauth1 Adapter.

``Client(session=sess)`` finds the endpoint in the catalog (service type
``elastman``); ``Client(endpoint=url)`` talks to ``url`` directly (noauth, or
with a session that only carries a token).
"""
from __future__ import annotations

import time
from typing import Any, Callable, Iterator

from keystoneauth1 import adapter
from keystoneauth1 import session as ks_session

SERVICE_TYPE = 'elastman'
API_VERSION = '1'


class ClientError(Exception):
    """An error answer of the API: ``code``, ``title``, ``message``."""

    def __init__(self, code: int, message: str, title: str = '') -> None:
        super().__init__('%s %s: %s' % (code, title, message) if title
                         else '%s: %s' % (code, message))
        self.code = code
        self.title = title
        self.message = message


class Client:
    """Every /v1 resource as a method; documents are plain dicts."""

    def __init__(self, session: ks_session.Session | None = None,
                 endpoint: str | None = None,
                 service_type: str = SERVICE_TYPE, interface: str = 'public',
                 region_name: str | None = None, timeout: float = 60,
                 **kwargs: Any) -> None:
        self.http = adapter.Adapter(
            session=session or ks_session.Session(),
            service_type=service_type, interface=interface,
            region_name=region_name, endpoint_override=endpoint,
            version=None, **kwargs)
        self.timeout = timeout

    # -- plumbing ----------------------------------------------------------
    def _request(self, method: str, path: str, body: dict | None = None,
                 params: dict | None = None) -> dict | None:
        kwargs: dict[str, Any] = {'raise_exc': False,
                                  'timeout': self.timeout,
                                  'headers': {'Accept': 'application/json'}}
        if body is not None:
            kwargs['json'] = body
        if params:
            kwargs['params'] = {k: v for k, v in params.items()
                                if v is not None}
        resp = self.http.request('/v1' + path, method, **kwargs)
        if resp.status_code >= 400:
            try:
                err = resp.json()['error']
                raise ClientError(err.get('code', resp.status_code),
                                  err.get('message', ''),
                                  err.get('title', ''))
            except (ValueError, KeyError, TypeError):
                raise ClientError(resp.status_code, resp.text[:200])
        return resp.json() if resp.content else None

    def _paged(self, path: str, key: str, limit: int | None,
               marker: str | None, **params: Any) -> Iterator[dict]:
        """Every item from ``marker`` on (all pages), or one page of
        ``limit``.
        """
        while True:
            page = self._request('GET', path, params=dict(
                params, limit=limit, marker=marker))
            yield from page[key]
            marker = page.get('next_marker')
            if limit is not None or not marker:
                return

    # -- clusters ------------------------------------------------------------
    def list_clusters(self, all_projects: bool = False,
                      limit: int | None = None,
                      marker: str | None = None) -> list[dict]:
        return list(self._paged('/clusters', 'clusters', limit, marker,
                                all_projects='true' if all_projects
                                else None))

    def create_cluster(self, name: str, **fields: Any) -> dict:
        body = dict(name=name, **{k: v for k, v in fields.items()
                                  if v is not None})
        return self._request('POST', '/clusters', body)['cluster']

    def get_cluster(self, cluster_id: str) -> dict:
        return self._request('GET', '/clusters/%s' % cluster_id)['cluster']

    def find_cluster(self, name_or_id: str) -> dict:
        """A cluster by id, or by a name that is unique in the project."""
        try:
            return self.get_cluster(name_or_id)
        except ClientError as exc:
            if exc.code != 404:
                raise
        found = [c for c in self.list_clusters() if c['name'] == name_or_id]
        if len(found) != 1:
            raise ClientError(404 if not found else 409,
                              'no unique cluster named %s' % name_or_id)
        return self.get_cluster(found[0]['id'])

    def update_cluster(self, cluster_id: str, **fields: Any) -> dict:
        return self._request('PATCH', '/clusters/%s' % cluster_id,
                             fields)['cluster']

    def delete_cluster(self, cluster_id: str) -> None:
        self._request('DELETE', '/clusters/%s' % cluster_id)

    def set_credentials(self, cluster_id: str,
                        credentials: dict | None = None,
                        tls: dict | None = None) -> None:
        """Replace the credentials and TLS settings of a cluster's nodes."""
        body = {k: v for k, v in (('credentials', credentials),
                                  ('tls', tls)) if v is not None}
        self._request('PUT', '/clusters/%s/credentials' % cluster_id, body)

    def delete_credentials(self, cluster_id: str) -> None:
        self._request('DELETE', '/clusters/%s/credentials' % cluster_id)

    def scale_cluster(self, cluster_id: str, count: int,
                      flavor: str | None = None) -> dict:
        body = {'count': count}
        if flavor:
            body['flavor'] = flavor
        return self._request('POST', '/clusters/%s/scale' % cluster_id,
                             body)['action']

    # -- policy --------------------------------------------------------------
    def get_policy(self, cluster_id: str) -> dict:
        return self._request('GET', '/clusters/%s/policy' % cluster_id)[
            'policy']

    def set_policy(self, cluster_id: str, policy: dict) -> dict:
        return self._request('PUT', '/clusters/%s/policy' % cluster_id,
                             policy)['policy']

    def delete_policy(self, cluster_id: str) -> None:
        self._request('DELETE', '/clusters/%s/policy' % cluster_id)

    # -- read-only views -------------------------------------------------------
    def list_nodes(self, cluster_id: str) -> list[dict]:
        return self._request('GET', '/clusters/%s/nodes' % cluster_id)[
            'nodes']

    def list_models(self, cluster_id: str) -> list[dict]:
        return self._request('GET', '/clusters/%s/models' % cluster_id)[
            'models']

    def get_model(self, cluster_id: str, scope: str, key: str,
                  version: int | None = None) -> dict:
        return self._request('GET', '/clusters/%s/models/%s/%s'
                             % (cluster_id, scope, key),
                             params={'version': version})['model']

    def list_forecasts(self, cluster_id: str, metric: str,
                       limit: int | None = 1) -> list[dict]:
        return list(self._paged('/clusters/%s/forecasts/%s'
                                % (cluster_id, metric), 'forecasts', limit,
                                None))

    def list_decisions(self, cluster_id: str, limit: int | None = None,
                       marker: str | None = None) -> list[dict]:
        return list(self.iter_decisions(cluster_id, limit, marker))

    def iter_decisions(self, cluster_id: str, limit: int | None = None,
                       marker: str | None = None) -> Iterator[dict]:
        """Decisions newest first, reading the next page only when the
        caller gets that far.
        """
        return self._paged('/clusters/%s/decisions' % cluster_id,
                           'decisions', limit, marker)

    def list_actions(self, cluster_id: str, kind: str | None = None,
                     state: str | None = None, limit: int | None = None,
                     marker: str | None = None) -> list[dict]:
        return list(self._paged('/clusters/%s/actions' % cluster_id,
                                'actions', limit, marker, kind=kind,
                                state=state))

    def get_action(self, cluster_id: str, action_id: str) -> dict:
        return self._request('GET', '/clusters/%s/actions/%s'
                             % (cluster_id, action_id))['action']

    def list_hosts(self) -> list[dict]:
        return list(self._paged('/hosts', 'hosts', None, None))

    # -- waiting ---------------------------------------------------------------
    def wait_for(self, fetch: Callable[[], dict | None],
                 done: Callable[[dict | None], bool], timeout: float = 600,
                 interval: float = 2,
                 progress: Callable[[dict | None], None] | None = None):
        """Poll ``fetch`` until ``done``; a 404 counts as ``None``."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = fetch()
            except ClientError as exc:
                if exc.code != 404:
                    raise
                value = None
            if progress is not None:
                progress(value)
            if done(value):
                return value
            if time.monotonic() >= deadline:
                raise TimeoutError('gave up waiting after %ss' % timeout)
            time.sleep(interval)
