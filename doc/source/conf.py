"""Sphinx configuration of elastman's documentation (``tox -e docs``)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '_exts'))

extensions = [
    'openstackdocstheme',
    'openapi_ref',
]

openstackdocs_repo_name = 'openstack/elastman'
openstackdocs_use_storyboard = False
openstackdocs_auto_name = False

project = 'elastman'
copyright = 'elastman developers'
master_doc = 'index'
source_suffix = '.rst'
exclude_patterns = []
pygments_style = 'native'
html_theme = 'openstackdocs'
html_static_path = ['_static']
