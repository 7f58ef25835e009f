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
"""Paste filter standing in for nova's removed noauth2 (lab use only).

X-Auth-Token "<user>:<project>" becomes the identity headers that
NovaKeystoneContext reads. User "admin" gets admin,member,reader; others
member,reader (an X-Roles header from the client wins). No token means
admin:admin.
"""


class NoAuth:
    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        token = environ.get('HTTP_X_AUTH_TOKEN') or 'admin:admin'
        user, _sep, project = token.partition(':')
        project = project or user
        environ.update({
            'HTTP_X_AUTH_TOKEN': token,
            'HTTP_X_USER_ID': user, 'HTTP_X_USER_NAME': user,
            'HTTP_X_PROJECT_ID': project, 'HTTP_X_PROJECT_NAME': project,
            'HTTP_X_IDENTITY_STATUS': 'Confirmed'})
        if not environ.get('HTTP_X_ROLES'):
            environ['HTTP_X_ROLES'] = ('admin,member,reader' if user == 'admin'
                                       else 'member,reader')
        return self.app(environ, start_response)


def filter_factory(global_conf, **local_conf):
    return NoAuth
