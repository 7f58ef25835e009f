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
import os
import subprocess

import pytest

from elastman.cassandra import access
from elastman.cassandra import nodetool
from elastman.common import exception

STATUS = """Datacenter: datacenter1
=======================
Status=Up/Down
|/ State=Normal/Leaving/Joining/Moving
--  Address     Load        Tokens  Owns (effective)  Host ID                               Rack
UN  127.0.60.1  104.38 KiB  16      64.2%             4d7e3f52-3a39-4a32-9b8c-6b2f8a1f0b11  rack1
DN  127.0.60.2  ?           16      ?                 0c3aa0a5-1111-4b55-a3a4-1e8f5e7d8a22  rack1
UJ  127.0.60.3  1.5 MiB     16      35.8%             9f0e2d13-2222-4c66-b4b5-2f9f6f8e9b33  rack1
UL  127.0.60.4  2,048 KiB   16      0.0%              7a1b3c4d-3333-4d77-c5c6-3a0a7a9f0c44  rack1
"""

NETSTATS = """Mode: LEAVING
Unbootstrap 3c1e...
    /127.0.60.1
        Sending 4 files, 8000 bytes total. Already sent 2 files (50.00%), 3000 bytes total (37.50%)
    /127.0.60.2
        Sending 2 files, 2000 bytes total. Already sent 2 files (100.00%), 2000 bytes total (100.00%)
Read Repair Statistics:
"""


def test_parse_status():
    nodes = nodetool.parse_status(STATUS)
    assert [n.code for n in nodes] == ['UN', 'DN', 'UJ', 'UL']
    first = nodes[0]
    assert first.address == '127.0.60.1'
    assert first.load_bytes == int(104.38 * 1024)
    assert first.tokens == 16 and first.owns == 64.2
    assert first.host_id.startswith('4d7e3f52')
    assert first.datacenter == 'datacenter1' and first.up_normal
    assert nodes[1].load_bytes is None and nodes[1].owns is None
    assert nodes[2].load_bytes == int(1.5 * 1024 ** 2)
    assert nodes[3].load_bytes == 2048 * 1024


def test_parse_netstats():
    state = nodetool.parse_netstats(NETSTATS)
    assert state['mode'] == 'LEAVING'
    assert state['bytes_to_send'] == 10000 and state['bytes_sent'] == 5000


def test_error_message_without_the_help_hint():
    out = ("nodetool: Not enough live nodes to maintain replication factor "
           "in keyspace system_distributed (RF = 3, N = 2). Perform a "
           "forceful decommission to ignore.\n"
           "See 'nodetool help' or 'nodetool help <command>'.\n")
    assert nodetool.error_message(out).startswith('nodetool: Not enough '
                                                  'live nodes')
    assert 'forceful decommission' in nodetool.error_message(out)


def test_error_message():
    out = ('error: Not enough live nodes to maintain replication factor in '
           'keyspace system_distributed (RF = 3, N = 2).\n-- StackTrace --\n'
           'java.lang.UnsupportedOperationException: ...\n\tat x.y')
    assert nodetool.error_message(out).startswith('Not enough live nodes')
    assert nodetool.error_message('nodetool: Failed to connect to '
                                  "'127.0.0.1:1' - ConnectException") \
        .startswith('nodetool: Failed to connect')


class FakeRun:
    def __init__(self, rc=0, out='', err=''):
        self.calls = []
        self.result = subprocess.CompletedProcess([], rc, out, err)

    def __call__(self, argv, **kwargs):
        self.calls.append(argv)
        if '-pwf' in argv:                # what nodetool would read
            path = argv[argv.index('-pwf') + 1]
            self.secret = (oct(os.stat(path).st_mode & 0o777),
                           open(path).read())
        return self.result


@pytest.fixture
def tool(conf, monkeypatch, tmp_path):
    monkeypatch.setattr(nodetool.runtime, 'nodetool_command',
                        lambda conf, h, p, d, jvm_flags=(): [
                            'nodetool', *jvm_flags, '-h', h, '-p', str(p)])
    return nodetool.Nodetool(conf, '10.0.0.5', 7199, username='u',
                             password='pw', log_dir=str(tmp_path))


def test_remote_command_and_errors(tool, monkeypatch):
    fake = FakeRun(rc=1, err='error: Node is not in the ring\n'
                             '-- StackTrace --\nboom')
    monkeypatch.setattr(nodetool.subprocess, 'run', fake)
    with pytest.raises(exception.NodetoolError) as err:
        tool.removenode('abc')
    argv = fake.calls[0]
    assert argv[:8] == ['nodetool', '-h', '10.0.0.5', '-p', '7199', '-u', 'u',
                        '-pwf']
    assert argv[9:] == ['removenode', 'abc'] and 'pw' not in argv
    # the password reached nodetool in a private file, gone afterwards
    assert fake.secret == ('0o600', 'u pw\n')
    assert not os.path.exists(argv[8])
    assert 'Node is not in the ring' in str(err.value)
    assert '10.0.0.5:7199' in str(err.value)
    assert not isinstance(err.value, nodetool.NodetoolAccessDenied)


def test_status_runs_and_parses(tool, monkeypatch):
    monkeypatch.setattr(nodetool.subprocess, 'run', FakeRun(out=STATUS))
    assert len(tool.status()) == 4


def test_timeout_becomes_nodetool_error(tool, monkeypatch):
    def slow(argv, **kwargs):
        raise subprocess.TimeoutExpired(argv, kwargs['timeout'])
    monkeypatch.setattr(nodetool.subprocess, 'run', slow)
    with pytest.raises(exception.NodetoolError) as err:
        tool.drain(timeout=3)
    assert 'no answer within 3' in str(err.value)


def test_refused_credentials_are_access_denied(conf, monkeypatch, tmp_path):
    monkeypatch.setattr(nodetool.runtime, 'nodetool_command',
                        lambda conf, h, p, d, jvm_flags=(): [
                            'nodetool', *jvm_flags])
    fake = FakeRun(rc=1, err="nodetool: Failed to connect to "
                   "'127.0.0.1:7199' - SecurityException: 'Authentication "
                   "failed! Invalid username or password'.")
    monkeypatch.setattr(nodetool.subprocess, 'run', fake)
    secured = access.Access(username='elastman', password='s3cret',
                            jmx_tls=True)
    tool = nodetool.Nodetool(conf, '127.0.0.1', 7199, access=secured,
                             log_dir=str(tmp_path))
    with pytest.raises(nodetool.NodetoolAccessDenied) as err:
        tool.status()
    assert isinstance(err.value, exception.NodetoolError)
    message = str(err.value)
    assert "refused user 'elastman'" in message
    assert 'Invalid username or password' in message
    assert 's3cret' not in message and 's3cret' not in repr(secured)
    assert '-Dssl.enable=true' in fake.calls[0] and fake.secret[1] == 'elastman s3cret\n'


def test_separate_jmx_credentials(conf, tmp_path):
    both = access.Access(username='cql', password='a', jmx_username='jmx',
                         jmx_password='b')
    tool = nodetool.Nodetool(conf, access=both, log_dir=str(tmp_path))
    assert (tool.username, tool.password) == ('jmx', 'b')
    same = access.Access(username='cql', password='a')
    tool = nodetool.Nodetool(conf, access=same, log_dir=str(tmp_path))
    assert (tool.username, tool.password) == ('cql', 'a')


@pytest.mark.parametrize('output,expected', [
    # Cassandra 5.0's words, after the DEBUG lines nodetool prints when no
    # logback-tools.xml is on its classpath
    ('10:22:04.112 [main] DEBUG io.netty.util.internal.logging.'
     'InternalLoggerFactory - Using SLF4J as the default logging framework\n'
     'RemovalStatus: No token removals in process.\n', None),
    ('RemovalStatus: No removals in process.\n', None),
    ('RemovalStatus: Removing token (-9172). Waiting for replication '
     'confirmation from [/127.0.87.1,/127.0.87.3].\n',
     'Removing token (-9172). Waiting for replication confirmation from '
     '[/127.0.87.1,/127.0.87.3].'),
    ('', None)])
def test_parse_removal_status(output, expected):
    assert nodetool.parse_removal_status(output) == expected
