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

With [fake_host] guest_command set, the driver also emulates the guest: each
server it spawns gets a directory <guest_dir>/<server uuid> holding
guest.json (the server's name, project, image, flavour with its extra specs,
metadata, user data and fixed addresses, as a hypervisor and a config drive
would hand them to the guest), and ``<guest_command> start <dir>`` boots what
the guest runs. Power off and on and reboot call ``stop``/``start`` the same
way; delete calls ``kill`` (the guest does not shut down cleanly). See
tools/nova-lab/lib/novalab_guest.py.
"""
import base64
import json
import os
import shlex
import shutil
import subprocess

from oslo_config import cfg
from oslo_log import log as logging

from nova.virt import fake  # noqa: I202  (after cfg, as nova expects)

LOG = logging.getLogger(__name__)
CONF = cfg.CONF
CONF.register_opts([cfg.IntOpt('vcpus', default=2),
                    cfg.IntOpt('memory_mb', default=2048),
                    cfg.IntOpt('local_gb', default=20),
                    cfg.StrOpt('guest_command', default='',
                               help='Command (shell words) run with "start '
                                    '<dir>" or "stop <dir>" for each guest; '
                                    'empty: no guests.'),
                    cfg.StrOpt('guest_dir', default='',
                               help='Where guest directories are made.'),
                    cfg.IntOpt('guest_timeout', default=120)],
                   group='fake_host')


def _guest_document(instance, network_info):
    user_data = None
    if instance.user_data:
        user_data = base64.b64decode(instance.user_data).decode(
            'utf-8', 'replace')
    flavor = instance.flavor
    addresses = []
    for vif in network_info or []:
        for ip in vif.fixed_ips():
            addresses.append({'network': vif['network']['label'],
                              'address': str(ip['address'])})
    return {
        'uuid': instance.uuid, 'name': instance.display_name,
        'hostname': instance.hostname, 'project_id': instance.project_id,
        'image_ref': instance.image_ref, 'host': instance.host,
        'availability_zone': instance.availability_zone,
        'flavor': {'name': flavor.name, 'vcpus': flavor.vcpus,
                   'memory_mb': flavor.memory_mb,
                   'extra_specs': dict(flavor.extra_specs or {})},
        'metadata': dict(instance.metadata or {}),
        'user_data': user_data, 'addresses': addresses,
    }


class ConfigurableFakeDriver(fake.FakeDriverWithoutFakeNodes):
    def __init__(self, virtapi, read_only=False):
        self.vcpus = CONF.fake_host.vcpus
        self.memory_mb = CONF.fake_host.memory_mb
        self.local_gb = CONF.fake_host.local_gb
        super().__init__(virtapi, read_only)

    # -- the guest --------------------------------------------------------
    def _guest_dir(self, instance):
        return os.path.join(CONF.fake_host.guest_dir, instance.uuid)

    def _guest(self, action, instance):
        if not CONF.fake_host.guest_command:
            return
        argv = shlex.split(CONF.fake_host.guest_command) + [
            action, self._guest_dir(instance)]
        try:
            out = subprocess.run(argv, capture_output=True, text=True,
                                 timeout=CONF.fake_host.guest_timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            LOG.error('guest %s of %s failed: %s', action, instance.uuid, exc)
            return
        log = LOG.info if out.returncode == 0 else LOG.error
        log('guest %s of %s exited %d: %s', action, instance.uuid,
            out.returncode, (out.stdout + out.stderr).strip()[-2000:])

    def spawn(self, context, instance, image_meta, injected_files,
              admin_password, allocations, network_info=None,
              block_device_info=None, power_on=True, accel_info=None):
        super().spawn(context, instance, image_meta, injected_files,
                      admin_password, allocations, network_info=network_info,
                      block_device_info=block_device_info, power_on=power_on,
                      accel_info=accel_info)
        if not CONF.fake_host.guest_command:
            return
        path = self._guest_dir(instance)
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, 'guest.json'), 'w') as f:
            json.dump(_guest_document(instance, network_info), f, indent=1)
        if power_on:
            self._guest('start', instance)

    def power_off(self, instance, timeout=0, retry_interval=0):
        super().power_off(instance, timeout, retry_interval)
        self._guest('stop', instance)

    def power_on(self, context, instance, network_info,
                 block_device_info=None, accel_info=None, share_info=None):
        super().power_on(context, instance, network_info, block_device_info,
                         accel_info, share_info)
        self._guest('start', instance)

    def reboot(self, context, instance, network_info, reboot_type,
               block_device_info=None, bad_volumes_callback=None,
               accel_info=None, share_info=None):
        super().reboot(context, instance, network_info, reboot_type,
                       block_device_info, bad_volumes_callback, accel_info,
                       share_info)
        self._guest('stop', instance)
        self._guest('start', instance)

    def destroy(self, context, instance, network_info, block_device_info=None,
                destroy_disks=True, destroy_secrets=True):
        self._guest('kill', instance)   # as a hypervisor pulls the plug
        if destroy_disks and CONF.fake_host.guest_command:
            shutil.rmtree(self._guest_dir(instance), ignore_errors=True)
        super().destroy(context, instance, network_info, block_device_info,
                        destroy_disks, destroy_secrets)
