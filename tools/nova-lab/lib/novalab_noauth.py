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
