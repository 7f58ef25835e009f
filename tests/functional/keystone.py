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
"""A real Keystone (sqlite, fernet) served by gunicorn for the functional
tests, and helpers to make projects, users and tokens in it.

Startup takes about 20-30 s; use it session-wide.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

from keystoneauth1.identity import v3
from keystoneauth1 import session as ks_session
from keystoneclient.v3 import client as ks_client
import requests

from elastman.common import ports
from tests.functional import services

ADMIN_PASSWORD = 'admin-secret'
SERVICE_PASSWORD = 'elastman-secret'
PASSWORD = 'user-secret'

_MANAGE = 'import sys; from keystone.cmd.manage import main; sys.exit(main())'


class Keystone:
    """One Keystone under ``base_dir``; ``stop`` kills it."""

    def __init__(self, base_dir: str) -> None:
        self.base = base_dir
        self.port = ports.free()
        self.url = 'http://127.0.0.1:%d/v3' % self.port
        self.conf_file = os.path.join(base_dir, 'keystone.conf')
        self._proc = None
        self._admin = None
        self.log_file = os.path.join(base_dir, 'keystone.log')

    # -- lifecycle --------------------------------------------------------
    def _write_config(self) -> None:
        keys = {name: os.path.join(self.base, name)
                for name in ('fernet-keys', 'receipt-keys', 'credential-keys')}
        for path in keys.values():
            os.makedirs(path, exist_ok=True)
        with open(self.conf_file, 'w') as f:
            f.write(textwrap.dedent('''\
                [DEFAULT]
                log_file = %(log)s
                [database]
                connection = sqlite:///%(base)s/keystone.db
                [token]
                provider = fernet
                [fernet_tokens]
                key_repository = %(fernet-keys)s
                [fernet_receipts]
                key_repository = %(receipt-keys)s
                [credential]
                key_repository = %(credential-keys)s
                [cache]
                enabled = false
                [identity]
                password_hash_rounds = 4
                ''' % dict(keys, base=self.base, log=self.log_file)))

    def _manage(self, *args: str) -> None:
        subprocess.run([sys.executable, '-c', _MANAGE,
                        '--config-file', self.conf_file, *args],
                       check=True, cwd=self.base, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=300)

    def start(self) -> None:
        self._write_config()
        self._manage('db_sync')
        for cmd in ('fernet_setup', 'credential_setup'):
            self._manage(cmd, '--keystone-user', 'root',
                         '--keystone-group', 'root')
        self._manage('bootstrap', '--bootstrap-password', ADMIN_PASSWORD,
                     '--bootstrap-public-url', self.url,
                     '--bootstrap-internal-url', self.url,
                     '--bootstrap-region-id', 'RegionOne')
        wrapper = os.path.join(self.base, 'keystone_wsgi.py')
        with open(wrapper, 'w') as f:
            f.write('import os, sys\n'
                    'os.environ["OS_KEYSTONE_CONFIG_FILES"] = %r\n'
                    'sys.argv = sys.argv[:1]\n'
                    'from keystone.wsgi.api import application  # noqa\n'
                    % self.conf_file)
        self._proc = subprocess.Popen(
            [sys.executable, '-m', 'gunicorn', '--no-control-socket',
             '--chdir', self.base, '-w', '2', '-b',
             '127.0.0.1:%d' % self.port, 'keystone_wsgi:application'],
            cwd=self.base, stdout=open(self.log_file + '.out', 'ab'),
            stderr=subprocess.STDOUT, start_new_session=True)
        try:
            services.wait_for(self._answers, timeout=90, interval=0.5)
            self._bootstrap_objects()
        except Exception:
            self.stop()
            raise

    def _answers(self) -> bool:
        if self._proc.poll() is not None:
            raise RuntimeError('keystone exited; see %s' % self.log_file)
        try:
            return requests.get(self.url, timeout=2).status_code == 200
        except requests.RequestException:
            return False

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            os.killpg(self._proc.pid, signal.SIGTERM)
            try:
                self._proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self._proc.pid, signal.SIGKILL)
                self._proc.wait()

    # -- objects ----------------------------------------------------------
    def session(self, user: str, password: str, project: str | None,
                user_domain: str = 'Default') -> ks_session.Session:
        auth = v3.Password(auth_url=self.url, username=user,
                           password=password, user_domain_id='default',
                           project_name=project,
                           project_domain_id='default' if project else None)
        return ks_session.Session(auth=auth)

    @property
    def admin(self) -> ks_client.Client:
        if self._admin is None:
            self._admin = ks_client.Client(session=self.session(
                'admin', ADMIN_PASSWORD, 'admin'))
        return self._admin

    def _role(self, name: str):
        found = self.admin.roles.list(name=name)
        return found[0] if found else self.admin.roles.create(name)

    def _bootstrap_objects(self) -> None:
        self.service_project = self.admin.projects.create('service',
                                                          'default')
        user = self.admin.users.create('elastman', domain='default',
                                       password=SERVICE_PASSWORD)
        for role in ('service', 'admin'):
            self.admin.roles.grant(self._role(role), user=user,
                                   project=self.service_project)

    def project_user(self, project: str, user: str, role: str) -> None:
        """Make ``project`` (if need be) and ``user`` with ``role`` in it."""
        found = self.admin.projects.list(name=project)
        proj = found[0] if found else self.admin.projects.create(project,
                                                                 'default')
        usr = self.admin.users.create(user, domain='default',
                                      password=PASSWORD,
                                      default_project=proj)
        self.admin.roles.grant(self._role(role), user=usr, project=proj)
        return proj.id

    def service_user(self, user: str, password: str) -> bool:
        """Make ``user`` an admin and service member of the ``service``
        project, as an OpenStack service's own user is. False if it
        existed already.
        """
        if self.admin.users.list(name=user):
            return False
        service = self.admin.projects.list(name='service')[0]
        usr = self.admin.users.create(user, domain='default',
                                      password=password)
        for role in ('admin', 'service'):
            self.admin.roles.grant(self._role(role), user=usr,
                                   project=service)
        return True

    def token(self, user: str, project: str,
              password: str = PASSWORD) -> str:
        return self.session(user, password, project).get_token()

    def register_endpoint(self, url: str, service_type: str = 'elastman',
                          name: str = 'elastman') -> None:
        """(Re)point the catalog entry of ``service_type`` at ``url``."""
        for svc in self.admin.services.list(type=service_type):
            for ep in self.admin.endpoints.list(service=svc):
                self.admin.endpoints.delete(ep)
            self.admin.services.delete(svc)
        svc = self.admin.services.create(name, type=service_type)
        self.admin.endpoints.create(svc, url, 'public', region='RegionOne')

    # -- keystonemiddleware -------------------------------------------------
    _AUTHTOKEN = ('www_authenticate_uri', 'auth_url', 'auth_type', 'username',
                  'password', 'project_name', 'user_domain_id',
                  'project_domain_id', 'token_cache_time')

    def configure_authtoken(self, conf) -> None:
        """Point ``[keystone_authtoken]`` of ``conf`` at this Keystone."""
        values = {'www_authenticate_uri': self.url, 'auth_url': self.url,
                  'auth_type': 'password', 'username': 'elastman',
                  'password': SERVICE_PASSWORD, 'project_name': 'service',
                  'user_domain_id': 'default', 'project_domain_id': 'default',
                  'token_cache_time': 300}
        for name, value in values.items():
            self._override(conf, name, value)

    @staticmethod
    def _override(conf, name, value) -> None:
        from keystoneauth1 import loading
        group = 'keystone_authtoken'
        if name not in conf[group]:
            plugin = loading.get_plugin_loader('password')
            conf.register_opts(loading.get_auth_plugin_conf_options(plugin),
                               group=group)
        conf.set_override(name, value, group)

    def clear_authtoken(self, conf) -> None:
        for name in self._AUTHTOKEN:
            conf.clear_override(name, 'keystone_authtoken')
