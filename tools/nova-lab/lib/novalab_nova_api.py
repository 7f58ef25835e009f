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
"""gunicorn entry point for nova-api (lab use only).

Nova hands sys.argv to oslo.config, which would reject gunicorn's own
arguments, so they are replaced before nova is imported.
"""
import sys

sys.argv = ['nova-api', '--log-file', 'nova-api.log']
from nova.wsgi.osapi_compute import application  # noqa: E402,F401
