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
"""Sphinx configuration of elastman's release notes (``tox -e releasenotes``)."""

# Only what differs from Sphinx's and openstackdocstheme's defaults.
extensions = [
    'openstackdocstheme',
    'reno.sphinxext',
]

openstackdocs_repo_name = 'openstack/elastman'
openstackdocs_auto_name = False

project = 'elastman release notes'
copyright = 'elastman developers'
html_theme = 'openstackdocs'
html_static_path = ['_static']
templates_path = ['_templates']
