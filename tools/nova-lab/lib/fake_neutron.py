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
"""A tiny stand-in for the Neutron API (lab use only).

Nova calls Neutron even for servers booted with networks='none' (showing a
server lists its ports, deleting one lists them again). Collection GET gives an
empty list, item GET 404, DELETE 204, anything else 400.
"""
import json


def application(environ, start_response):
    method = environ['REQUEST_METHOD']
    parts = [p for p in environ.get('PATH_INFO', '/').split('/') if p]
    if parts and parts[-1].endswith('.json'):
        parts[-1] = parts[-1][:-5]

    def reply(status, body=None):
        data = b'' if body is None else json.dumps(body).encode()
        start_response(status, [('Content-Type', 'application/json'),
                                ('Content-Length', str(len(data)))])
        return [data]

    if not parts:
        host = environ.get('HTTP_HOST', '127.0.0.1')
        return reply('200 OK', {'versions': [{
            'id': 'v2.0', 'status': 'CURRENT',
            'links': [{'rel': 'self', 'href': 'http://%s/v2.0/' % host}]}]})
    if parts[0] == 'v2.0':
        parts = parts[1:]
    if not parts:
        return reply('200 OK', {'resources': []})
    if method == 'DELETE':
        return reply('204 No Content')
    if method != 'GET':
        return reply('400 Bad Request', {'NeutronError': {
            'type': 'BadRequest', 'message': 'fake neutron is read-only',
            'detail': ''}})
    if len(parts) == 1:
        return reply('200 OK', {parts[0].replace('-', '_'): []})
    return reply('404 Not Found', {'NeutronError': {
        'type': 'NotFound', 'message': 'not found', 'detail': ''}})
