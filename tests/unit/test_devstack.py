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
"""The devstack plugin: syntax, shellcheck, and its phases run in a scratch
directory with devstack's functions stubbed (they record their calls).
"""
import configparser
import os
import shutil
import subprocess

from oslo_config import cfg
import pytest

import elastman.conf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PLUGIN = os.path.join(ROOT, 'devstack', 'plugin.sh')
SETTINGS = os.path.join(ROOT, 'devstack', 'settings')

# devstack's functions, reduced to what the plugin needs; calls are logged.
STUBS = r'''
set -eu
log() { echo "$*" >> "$SCRATCH/calls"; }
iniset() { python3 - "$@" <<'PY'
import configparser, sys
path, section, key, value = sys.argv[1:5]
cp = configparser.RawConfigParser()
cp.optionxform = str
cp.read(path)
if section != 'DEFAULT' and not cp.has_section(section):
    cp.add_section(section)
cp.set(section, key, value)
with open(path, 'w') as f:
    cp.write(f)
PY
}
trueorfalse() { local v="${!2:-$1}"; [[ "$v" =~ ^(1|[Tt]rue|yes)$ ]] && echo True || echo False; }
enable_service() { for s in "$@"; do ENABLED_SERVICES+=",$s"; done; }
is_service_enabled() { for s in "$@"; do [[ ",$ENABLED_SERVICES," == *",$s,"* ]] && return 0; done; return 1; }
get_python_exec_prefix() { echo "$SCRATCH/bin"; }
sudo() {  # file operations run (in the scratch dir), the rest is recorded
    case $1 in
        install) shift; local a=(); while (($#)); do case $1 in -o) shift 2;; *) a+=("$1"); shift;; esac; done; install "${a[@]}";;
        rm) "$@";;
        *) log "sudo $*";;
    esac
}
setup_develop() { log "setup_develop $*"; }
pip_install() { log "pip_install $*"; }
iniset_rpc_backend() { iniset "$2" DEFAULT transport_url "rabbit://stackrabbit:secret@127.0.0.1:5672/"; }
configure_keystone_authtoken_middleware() {
    local section=${3:-keystone_authtoken}
    iniset "$1" "$section" auth_type password
    iniset "$1" "$section" auth_url "http://127.0.0.1/identity"
    iniset "$1" "$section" username "$2"
    iniset "$1" "$section" password secret
    iniset "$1" "$section" user_domain_name Default
    iniset "$1" "$section" project_name service
    iniset "$1" "$section" project_domain_name Default
    if [[ $section == keystone_authtoken ]]; then
        iniset "$1" "$section" www_authenticate_uri "http://127.0.0.1/identity"
    fi
}
create_service_user() { log "create_service_user $*"; }
get_or_create_service() { log "get_or_create_service $*"; echo svc-id; }
get_or_create_endpoint() { log "get_or_create_endpoint $*"; }
install_apache_uwsgi() { log "install_apache_uwsgi"; }
write_uwsgi_config() {  # conf, module, url, http, name (devstack's lib/apache)
    iniset "$1" uwsgi module "$2"
    iniset "$1" uwsgi http "$4"
    log "write_uwsgi_config $*"
}
remove_uwsgi_config() { rm -f "$1"; log "remove_uwsgi_config $*"; }
run_process() { log "run_process $*"; }
stop_process() { log "stop_process $*"; }
wait_for_service() { log "wait_for_service $*"; }
echo_summary() { :; }
die() { echo "die: $*" >&2; exit 1; }
'''


def test_bash_syntax():
    for path in (PLUGIN, SETTINGS):
        subprocess.run(['bash', '-n', path], check=True)


def test_shellcheck():
    if shutil.which('shellcheck') is None:
        pytest.skip('shellcheck is not installed (apt-get install shellcheck)')
    proc = subprocess.run(['shellcheck', '-s', 'bash', PLUGIN, SETTINGS],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


def _run_phase(scratch, *phase, services='key,n-cpu', extra=''):
    bindir = scratch / 'bin'
    bindir.mkdir(exist_ok=True)
    manage = bindir / 'elastman-manage'      # needs a store: record only
    manage.write_text('#!/bin/sh\necho "elastman-manage $*" >> '
                      '"$SCRATCH/calls"\n')
    manage.chmod(0o755)
    uwsgi = bindir / 'uwsgi'
    uwsgi.write_text('#!/bin/sh\nexit 1\n')
    uwsgi.chmod(0o755)
    script = STUBS + '''
DEST={s}/dest; DATA_DIR={s}/data; STACK_USER=$(id -un)
SERVICE_HOST=127.0.0.1; SERVICE_PROTOCOL=http; REGION_NAME=RegionOne
ENABLE_DEBUG_LOG_LEVEL=True; SERVICE_TIMEOUT=5; PYTHON=python3
ENABLED_SERVICES={services}
ELASTMAN_DIR={root}; ELASTMAN_CONF_DIR={s}/etc
ELASTMAN_AUTH_CACHE_DIR={s}/cache
ELASTMAN_HOSTAGENT_SOCKET={s}/run/agent.sock
{extra}
source {settings}
set -- {phase}
source {plugin}
'''.format(s=scratch, root=ROOT, services=services, extra=extra,
           settings=SETTINGS, plugin=PLUGIN, phase=' '.join(phase))
    subprocess.run(['bash', '-c', script], check=True,
                   env=dict(os.environ, SCRATCH=str(scratch),
                            PATH='%s:%s' % (bindir, os.environ['PATH'])))
    calls = scratch / 'calls'
    return calls.read_text().splitlines() if calls.exists() else []


def test_phases_in_scratch_dir(tmp_path):
    calls = _run_phase(tmp_path, 'stack', 'install')
    assert 'setup_develop %s' % ROOT in calls
    assert 'install_apache_uwsgi' in calls
    assert any(c.startswith('pip_install libvirt-python') for c in calls)

    calls = _run_phase(tmp_path, 'stack', 'post-config')
    conf_path = tmp_path / 'etc' / 'elastman.conf'
    cp = configparser.RawConfigParser()
    cp.read(conf_path)
    assert cp['api']['auth_strategy'] == 'keystone'
    assert cp['keystone_authtoken']['username'] == 'elastman'
    assert cp['DEFAULT']['transport_url'].startswith('rabbit://')
    assert cp['actuator']['compute_driver'] == 'nova'
    assert (tmp_path / 'etc' / 'policy.yaml').exists()
    # uwsgi serves the WSGI module on the service port, reading that file
    uw = configparser.RawConfigParser()
    uw.read(tmp_path / 'etc' / 'elastman-api-uwsgi.ini')
    assert uw['uwsgi']['module'] == 'elastman.wsgi.api:application'
    assert uw['uwsgi']['http'] == '127.0.0.1:9870'
    assert uw['uwsgi']['env'] == 'OS_ELASTMAN_CONFIG_FILES=%s' % conf_path
    assert 'create_service_user elastman admin' in calls
    assert 'get_or_create_endpoint svc-id RegionOne ' \
           'http://127.0.0.1:9870' in calls

    # the file it wrote is a valid elastman configuration
    conf = cfg.ConfigOpts()
    for module in ('api', 'store', 'actuator', 'hostagent'):
        getattr(elastman.conf, module).register_opts(conf)
    conf(['--config-file', str(conf_path)], default_config_files=[])
    assert conf.api.auth_strategy == 'keystone'
    assert conf.store.keyspace == 'elastman'

    calls = _run_phase(tmp_path, 'stack', 'extra',
                       extra='ELASTMAN_STORE_CONTACT_POINTS=10.0.0.5')
    started = [c.split()[1] for c in calls if c.startswith('run_process')]
    assert started == ['elastman-api', 'elastman-monitor', 'elastman-trainer',
                       'elastman-predictor', 'elastman-actuator',
                       'elastman-hostagent']
    assert 'run_process elastman-api %s --procname-prefix elastman-api ' \
           '--ini %s' % (tmp_path / 'bin' / 'uwsgi',
                         tmp_path / 'etc' / 'elastman-api-uwsgi.ini') in calls
    assert any('elastman.hostagent.hookinstall --socket' in c for c in calls)
    assert any(c.startswith('elastman-manage') and c.endswith('db sync')
               for c in calls)

    calls = _run_phase(tmp_path, 'unstack',
                       extra='ELASTMAN_STORE_CONTACT_POINTS=10.0.0.5')
    stopped = {c.split()[1] for c in calls if c.startswith('stop_process')}
    assert {'elastman-api', 'elastman-hostagent'} <= stopped

    calls = _run_phase(tmp_path, 'clean')
    assert any(c.startswith('remove_uwsgi_config') for c in calls)
    assert not (tmp_path / 'etc').exists()
    assert not (tmp_path / 'cache').exists()
