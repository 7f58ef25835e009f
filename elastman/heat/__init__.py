"""Heat resource plugins of elastman (add this directory's parent package
path to heat's ``plugin_dirs``; see doc/source/heat.rst).
"""
