"""Sphinx configuration of elastman's release notes (``tox -e releasenotes``)."""

extensions = [
    'openstackdocstheme',
    'reno.sphinxext',
]

openstackdocs_repo_name = 'openstack/elastman'
openstackdocs_use_storyboard = False
openstackdocs_auto_name = False

project = 'elastman release notes'
copyright = 'elastman developers'
master_doc = 'index'
source_suffix = '.rst'
exclude_patterns = []
pygments_style = 'native'
html_theme = 'openstackdocs'
html_static_path = ['_static']
templates_path = ['_templates']
