"""oslo.policy defaults of elastman, in code.

``list_rules`` is the ``oslo.policy.policies`` entry point that
``oslopolicy-sample-generator`` reads (etc/elastman/policy.yaml.sample).
"""
import itertools

from elastman.common.policies import base
from elastman.common.policies import clusters
from elastman.common.policies import hosts


def list_rules():
    return list(itertools.chain(base.list_rules(), clusters.list_rules(),
                                hosts.list_rules()))
