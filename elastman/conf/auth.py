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
