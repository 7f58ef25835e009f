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
"""OSC plugin hooks: ``openstack.cli.extension = elastman``."""
from __future__ import annotations

import os

from osc_lib import utils

from elastman.client import client as em_client

DEFAULT_API_VERSION = '1'
API_VERSION_OPTION = 'os_elastman_api_version'
API_NAME = 'elastman'
API_VERSIONS = {'1': 'elastman.client.client.Client'}


def make_client(instance) -> em_client.Client:
    """The elastman client for an OSC ClientManager ``instance``.

    The endpoint comes from ``--os-endpoint``/``OS_ELASTMAN_ENDPOINT_OVERRIDE``
    overrides, or from the catalog (service type ``elastman``).
    """
    endpoint = os.environ.get('OS_ELASTMAN_ENDPOINT_OVERRIDE') or \
        instance.get_endpoint_for_service_type(
            em_client.SERVICE_TYPE, region_name=instance.region_name,
            interface=instance.interface)
    return em_client.Client(session=instance.session, endpoint=endpoint,
                            region_name=instance.region_name,
                            interface=instance.interface)


def build_option_parser(parser):
    parser.add_argument(
        '--os-elastman-api-version', metavar='<elastman-api-version>',
        default=utils.env('OS_ELASTMAN_API_VERSION',
                          default=DEFAULT_API_VERSION),
        help='elastman API version, default=%s (Env: '
             'OS_ELASTMAN_API_VERSION)' % DEFAULT_API_VERSION)
    return parser
