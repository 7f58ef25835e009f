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
"""oslo.policy defaults of elastman, in code.

``list_rules`` is the ``oslo.policy.policies`` entry point that
``oslopolicy-sample-generator`` reads (etc/elastman/policy.yaml.sample).
"""
import itertools

from elastman.common.policies import base
from elastman.common.policies import clusters
from elastman.common.policies import hosts


def list_rules():
    return list(itertools.chain(base.list_rules(), clusters.list_rules(),
                                hosts.list_rules()))
