#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.
"""The API's stored policy as the decision's ScalingPolicy."""
import pytest

from elastman.actuator import policy as policy_mod


def test_api_policy_maps_onto_scaling_policy():
    cluster = {'spec': {'flavor': 'm1.small'},
               'policy': {'slo_metric': 'read_p99_ms', 'slo_threshold_ms': 20,
                          'min_size': 3, 'max_size': 12, 'alpha': 2,
                          'beta': 0.5, 'control_period_s': 120,
                          'cooldown_s': 60, 'flavors': ['m1.small',
                                                        'm1.large'],
                          'dry_run': True, 'model': {'svm_c': 2.0}}}
    policy = policy_mod.ScalingPolicy.for_cluster(cluster)
    assert policy.slo_threshold_ms == 20
    assert (policy.min_size, policy.max_size) == (3, 12)
    assert policy.alpha == 2 and policy.dry_run
    assert policy.flavor_costs == {'m1.small': 1.0, 'm1.large': 1.0}
    assert policy.default_flavor == 'm1.small'
    assert policy.replication_factor == 3 and policy.floor == 3


def test_fields_a_stored_policy_lacks_take_the_given_defaults():
    cluster = {'policy': {'slo_threshold_ms': 20}}
    policy = policy_mod.ScalingPolicy.for_cluster(
        cluster, defaults={'slo_metric': 'read_p99_ms', 'slo_threshold_ms': 35.0})
    assert (policy.slo_metric, policy.slo_threshold_ms) == ('read_p99_ms', 20)
    assert policy_mod.ScalingPolicy.for_cluster(cluster).slo_metric == \
        policy_mod.DEFAULT_SLO_METRIC


def test_small_clusters_get_a_small_replication_floor():
    policy = policy_mod.ScalingPolicy.for_cluster({'policy': {'min_size': 1,
                                                   'max_size': 3}})
    assert policy.floor == 1


def test_invalid_policy_is_refused():
    with pytest.raises(policy_mod.InvalidPolicy):
        policy_mod.ScalingPolicy.for_cluster({'policy': {'min_size': 5, 'max_size': 2}})
