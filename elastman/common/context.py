"""Request contexts carried by RPC calls and API requests."""
from oslo_context import context


class RequestContext(context.RequestContext):
    """An oslo.context RequestContext; elastman adds nothing yet."""


def get_admin_context() -> RequestContext:
    """Context of elastman's own periodic work (not tied to a user)."""
    return RequestContext(is_admin=True, overwrite=False)
