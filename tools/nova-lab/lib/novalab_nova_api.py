"""gunicorn entry point for nova-api (lab use only).

Nova hands sys.argv to oslo.config, which would reject gunicorn's own
arguments, so they are replaced before nova is imported.
"""
import sys

sys.argv = ['nova-api', '--log-file', 'nova-api.log']
from nova.wsgi.osapi_compute import application  # noqa: E402,F401
