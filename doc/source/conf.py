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
"""Sphinx configuration of elastman's documentation (``tox -e docs``)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '_exts'))

# Only what differs from Sphinx's and openstackdocstheme's defaults.
extensions = [
    'openstackdocstheme',
    'openapi_ref',
]

openstackdocs_repo_name = 'openstack/elastman'
openstackdocs_auto_name = False

project = 'elastman'
copyright = 'elastman developers'
html_theme = 'openstackdocs'
html_static_path = ['_static']
