"""Compute drivers: how elastman gets and releases the servers of a cluster.

The actuator talks to :class:`elastman.compute.base.ComputeDriver`; drivers are
loaded from the ``elastman.compute_drivers`` stevedore namespace.
"""
