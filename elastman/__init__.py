"""elastman: an elasticity manager for Cassandra clusters on OpenStack."""
import warnings

# oslo.messaging and futurist import eventlet when it is installed; elastman
# runs on threads and never uses it, so its deprecation notice is only noise.
warnings.filterwarnings('ignore', message=r'\s*Eventlet is deprecated')
