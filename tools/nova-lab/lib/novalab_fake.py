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
"""Fake virt driver whose host size comes from [fake_host] (lab use only).

Nova imports compute_driver as "nova.virt.<value>", so lab.sh copies this file
into the lab virtualenv's nova/virt/ and sets
compute_driver = novalab_fake.ConfigurableFakeDriver. Based on
FakeDriverWithoutFakeNodes: the node uuid is kept in <state_path>/compute_id,
so a nova-compute can be restarted.
"""
from oslo_config import cfg

from nova.virt import fake  # noqa: I202  (after cfg, as nova expects)

CONF = cfg.CONF
CONF.register_opts([cfg.IntOpt('vcpus', default=2),
                    cfg.IntOpt('memory_mb', default=2048),
                    cfg.IntOpt('local_gb', default=20)], group='fake_host')


class ConfigurableFakeDriver(fake.FakeDriverWithoutFakeNodes):
    def __init__(self, virtapi, read_only=False):
        self.vcpus = CONF.fake_host.vcpus
        self.memory_mb = CONF.fake_host.memory_mb
        self.local_gb = CONF.fake_host.local_gb
        super().__init__(virtapi, read_only)
