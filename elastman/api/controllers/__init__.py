"""Resource controllers of /v1."""
