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
