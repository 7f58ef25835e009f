"""A small Python client of the elastman API (keystoneauth1 based)."""
from elastman.client.client import Client  # noqa: F401
from elastman.client.client import ClientError  # noqa: F401
