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
"""/v1/hosts: compute-host agents and their interference reports (admin)."""
from __future__ import annotations

from elastman.api.controllers import base
from elastman.api import errors
from elastman.api import views
from elastman.common import exception


class HostController(base.Controller):

    def index(self, req, ctx):
        self.enforcer.check(ctx, 'elastman:host:list', {})
        limit, marker = self.page_args(req)
        page = self.page(lambda: self.store.hosts.list(limit, marker))
        return 200, {'hosts': [views.host(h) for h in page],
                     'next_marker': page.next_marker}

    def show(self, req, ctx, host):
        self.enforcer.check(ctx, 'elastman:host:get', {})
        try:
            row = self.store.hosts.get(host)
        except exception.NotFound:
            raise errors.not_found('host %s not found' % host)
        return 200, {'host': views.host(row)}

    def reports(self, req, ctx, host):
        self.enforcer.check(ctx, 'elastman:host:get', {})
        limit, marker = self.page_args(req)
        page = self.page(lambda: self.store.hosts.reports(host, limit,
                                                          marker))
        return 200, {'reports': [views.host_report(r) for r in page],
                     'next_marker': page.next_marker}
