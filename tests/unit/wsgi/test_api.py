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
"""elastman.wsgi.api: configuration from the environment, a bad value
named at import, and a JSON 503 (retried) while the store is unreachable.

The module parses the global configuration when imported, so each case
imports it in a child process. tests/functional/api/test_noauth.py serves it
under gunicorn against a real store.
"""
import json
import os
import socket
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent('''
    import json, sys
    from elastman import store as em_store
    from elastman.wsgi import api
    import webob
    calls = []
    real_open = em_store.Store.open
    def counting_open(conf, *a, **kw):
        calls.append(1)
        return real_open(conf, *a, **kw)
    em_store.Store.open = counting_open
    out = []
    for _ in range(2):
        resp = webob.Request.blank('/v1/clusters').get_response(
            api.application)
        out.append([resp.status_int, resp.json])
    print(json.dumps({'responses': out, 'opens': len(calls),
                      'files': api.config_files()}))
''')


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def _child(tmp_path, conf_text, files='elastman.conf'):
    (tmp_path / 'elastman.conf').write_text(conf_text)
    env = dict(os.environ, OS_ELASTMAN_CONFIG_DIR=str(tmp_path),
               OS_ELASTMAN_CONFIG_FILES=files)
    return subprocess.run([sys.executable, '-c', CHILD], env=env,
                          capture_output=True, text=True, timeout=120)


def test_store_unreachable_is_a_json_503_tried_again(tmp_path):
    port = _closed_port()
    proc = _child(tmp_path, '[store]\ncontact_points = 127.0.0.1\n'
                  'port = %d\nconnect_timeout = 2\n'
                  '[api]\nauth_strategy = noauth\n' % port)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    for status, body in result['responses']:
        assert status == 503
        assert body['error']['code'] == 503
        assert 'store' in body['error']['message']
        assert str(port) in body['error']['message']
    assert result['opens'] == 2      # nothing cached after a failure
    assert result['files'] == [str(tmp_path / 'elastman.conf')]


def test_bad_value_stops_the_import_naming_the_option(tmp_path):
    proc = _child(tmp_path, '[api]\nmax_limit = none-at-all\n')
    assert proc.returncode != 0
    assert '[api] max_limit' in proc.stdout + proc.stderr


def test_absolute_and_several_config_files(tmp_path):
    other = tmp_path / 'other.conf'
    other.write_text('[api]\nmax_limit = 7\n')
    proc = _child(tmp_path, '[api]\nmax_limit = 5\n',
                  files='elastman.conf; %s' % other)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result['files'] == [str(tmp_path / 'elastman.conf'), str(other)]
