"""[keystone_authtoken] and [oslo_policy]: the options of the libraries that
guard the API, registered up front so that a bad value fails at start-up.

Their sample text comes from the keystonemiddleware.auth_token and
oslo.policy generator namespaces, so this module has no ``list_opts``.
"""
from keystoneauth1 import loading as ks_loading
from keystonemiddleware.auth_token import _opts as authtoken_opts
from oslo_policy import opts as policy_opts


def register_opts(conf):
    for group, opts in authtoken_opts.list_opts():
        conf.register_opts(opts, group=group)
    ks_loading.register_auth_conf_options(conf, 'keystone_authtoken')
    policy_opts.set_defaults(conf)
