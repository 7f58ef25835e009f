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
"""The oslo.policy enforcer of the API, with defaults from
:mod:`elastman.common.policies`.
"""
from __future__ import annotations

from oslo_policy import policy

from elastman.api import errors
from elastman.common import policies


class Enforcer:
    """Checks a rule for a request context against a target."""

    def __init__(self, conf) -> None:
        self._enforcer = policy.Enforcer(conf)
        self._enforcer.register_defaults(policies.list_rules())

    def allowed(self, ctx, rule: str, target: dict) -> bool:
        try:
            return bool(self._enforcer.authorize(
                rule, target, ctx.to_policy_values(), do_raise=False))
        except policy.InvalidScope:
            return False

    def check(self, ctx, rule: str, target: dict) -> None:
        """Raise a 403 APIError unless ``rule`` allows the request."""
        if not self.allowed(ctx, rule, target):
            raise errors.APIError(403, 'policy does not allow %s' % rule)
