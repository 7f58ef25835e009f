"""Converting the store's timestamps."""
from __future__ import annotations

import datetime


def epoch(ts: datetime.datetime | None) -> float | None:
    """Seconds since the epoch of a store timestamp (naive means UTC, as
    cassandra-driver returns them); None stays None.
    """
    if ts is None:
        return None
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=datetime.timezone.utc)
    return ts.timestamp()
