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
"""The local Cassandra node's configuration and command line."""
import os

from elastman.cassandra import node
from elastman.cassandra import runtime
from elastman.common import config


def test_config_and_command(tmp_path):
    conf = config.CONF
    conf([], project='elastman', default_config_files=[])
    lib = tmp_path / 'lib'
    lib.mkdir()
    (lib / 'cassandra-all-5.0.6.jar').write_bytes(b'')
    conf.set_override('lib_dir', str(lib), 'cassandra')
    try:
        spec = node.NodeSpec(name='n2', base_dir=str(tmp_path / 'n2'),
                             address='127.0.0.2', jmx_port=7299,
                             seeds=('127.0.0.1',), heap='256M')
        local = node.LocalNode(conf, spec)
        local.write_config()
        yaml_text = (tmp_path / 'n2' / 'conf' / 'cassandra.yaml').read_text()
        assert 'listen_address: "127.0.0.2"' in yaml_text
        assert '"seeds": "127.0.0.1:7000"' in yaml_text
        argv = local.command()
        assert '-Xmx256M' in argv
        assert '-Dcassandra.jmx.local.port=7299' in argv
        assert argv[-1] == 'org.apache.cassandra.service.CassandraDaemon'
        assert '--add-opens=java.base/java.lang=ALL-UNNAMED' in argv
        assert not local.is_running()
        loaded = node.LocalNode.load(conf, str(tmp_path / 'n2'))
        assert loaded.spec == spec
        assert runtime.classpath(conf) == os.path.join(str(lib), '*')
    finally:
        conf.clear_override('lib_dir', 'cassandra')


def test_missing_jars_are_a_clear_error(tmp_path):
    conf = config.CONF
    conf([], project='elastman', default_config_files=[])
    conf.set_override('lib_dir', str(tmp_path), 'cassandra')
    try:
        try:
            runtime.lib_dir(conf)
        except Exception as exc:
            assert 'tools/install.sh' in str(exc)
        else:
            raise AssertionError('no error for an empty lib_dir')
    finally:
        conf.clear_override('lib_dir', 'cassandra')
