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
"""OS::Elastman::Cluster through Heat's own template machinery, against the
elastman API at $ELASTMAN_TEST_API (noauth). Run by test_heat.py in a process
of its own: Heat's test base resets the global CONF.
"""
import heat.tests.common  # noqa: F401,I100  (first, before oslo.service users)
from heat.tests import common
from heat.tests import utils

import copy  # noqa: I100  (heat.tests first, see above)
import os

from heat.common import exception
from heat.common import template_format
from heat.engine import resource
from heat.engine import resources
from heat.engine import scheduler
from heat.engine import stack as heat_stack
from heat.engine import template
from oslo_config import cfg
import pytest
import requests

from elastman.heat import cluster as em_heat

ENDPOINT = os.environ.get('ELASTMAN_TEST_API')
pytestmark = pytest.mark.skipif(not ENDPOINT,
                                reason='run through test_heat.py')

TEMPLATE = '''
heat_template_version: 2021-04-16
resources:
  db:
    type: OS::Elastman::Cluster
    properties:
      name: heat-db
      seeds: ["127.0.0.21", "127.0.0.22:9043"]
      flavor: m1.small
      policy:
        slo_threshold_ms: 35
        min_size: 2
        max_size: 6
outputs:
  endpoints:
    value: {get_attr: [db, endpoints]}
  size:
    value: {get_attr: [db, size]}
'''


def _register_once():
    env = resources.global_env()
    env.registry.load({'AWS::RDS::DBInstance': 'AWS_RDS_DBInstance.yaml',
                       'AWS::CloudWatch::Alarm': 'AWS_CloudWatch_Alarm.yaml'})
    for name, cls in em_heat.resource_mapping().items():
        resource._register_class(name, cls)


_register_once()


class ElastmanClusterTest(common.HeatTestCase):

    def setUp(self):
        super().setUp()
        cfg.CONF.set_override('endpoint', ENDPOINT, 'clients_elastman')
        cfg.CONF.set_override('noauth', True, 'clients_elastman')

    def _api(self, path):
        return requests.get(ENDPOINT + path, timeout=10)

    def _stack(self, tmpl):
        return utils.parse_stack(template_format.parse(tmpl))

    def test_validate_rejects_bad_properties(self):
        for change, msg in (
                ({'image': 'i'}, 'excludes'),
                ({'seeds': None}, 'give seeds'),
                ({'policy': {'min_size': 5, 'max_size': 2}}, 'min_size'),
                ({'policy': {'slo_metric': 'bogus'}}, 'bogus'),
                ({'size': 0, 'seeds': None, 'image': 'i'}, 'size')):
            t = template_format.parse(TEMPLATE)
            props = t['resources']['db']['properties']
            for key, value in change.items():
                if value is None:
                    props.pop(key)
                else:
                    props[key] = value
            stack = utils.parse_stack(t)
            with self.assertRaises(exception.StackValidationFailed) as ctx:
                stack.validate()
            self.assertIn(msg, str(ctx.exception))

    def test_create_update_delete(self):
        stack = self._stack(TEMPLATE)
        stack.validate()
        scheduler.TaskRunner(stack.create)()
        self.assertEqual((stack.CREATE, stack.COMPLETE), stack.state,
                         stack.status_reason)
        cluster_id = stack['db'].resource_id
        shown = self._api('/v1/clusters/' + cluster_id).json()['cluster']
        self.assertEqual('heat-db', shown['name'])
        self.assertEqual(6, shown['policy']['max_size'])
        self.assertEqual(2, stack['db'].FnGetAtt('size'))
        self.assertEqual(sorted(['127.0.0.21:9042', '127.0.0.22:9043']),
                         sorted(stack['db'].FnGetAtt('endpoints')))

        t2 = template_format.parse(TEMPLATE)
        props = t2['resources']['db']['properties']
        props['name'] = 'heat-db-2'
        props['policy']['max_size'] = 8
        updated = heat_stack.Stack(stack.context, 'updated',
                                   template.Template(copy.deepcopy(t2)))
        scheduler.TaskRunner(stack.update, updated)()
        self.assertEqual((stack.UPDATE, stack.COMPLETE), stack.state,
                         stack.status_reason)
        shown = self._api('/v1/clusters/' + cluster_id).json()['cluster']
        self.assertEqual('heat-db-2', shown['name'])
        self.assertEqual(8, shown['policy']['max_size'])
        self.assertEqual(cluster_id, stack['db'].resource_id)

        scheduler.TaskRunner(stack.delete)()
        self.assertEqual((stack.DELETE, stack.COMPLETE), stack.state,
                         stack.status_reason)
        self.assertEqual(404, self._api('/v1/clusters/'
                                        + cluster_id).status_code)
