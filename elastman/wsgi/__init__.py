"""WSGI entry points of elastman's HTTP services, for uwsgi, mod_wsgi and
gunicorn (``elastman.wsgi.api:application``).
"""
