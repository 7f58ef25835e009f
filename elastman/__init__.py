"""elastman: an elasticity manager for Cassandra clusters on OpenStack."""
