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
"""A Neutron stand-in for the Nova lab (test use only).

Enough of the Networking API v2.0 for Nova to boot servers on a project's
own network: networks, subnets, ports with a fixed IPv4 address taken from
the network's subnet, security groups (a "default" one per project, made on
first use), and empty floating IPs, extensions and unlimited quotas. State is
kept in memory (one gunicorn worker; the lab starts afresh each time).

Who calls: behind keystonemiddleware when FAKE_NEUTRON_CONFIG names a
configuration file with a [keystone_authtoken] section (the lab with
Keystone), else the lab's token "<user>:<project>". A caller sees its
project's resources and shared networks; a caller with the admin role sees
everything.
"""
import ipaddress
import json
import os
import random
import threading
import urllib.parse
import uuid

_LOCK = threading.Lock()
_STATE = {'networks': {}, 'subnets': {}, 'ports': {}, 'security_groups': {}}
# URL collection -> (state key, singular body key)
_COLLECTIONS = {
    'networks': ('networks', 'network'),
    'subnets': ('subnets', 'subnet'),
    'ports': ('ports', 'port'),
    'security-groups': ('security_groups', 'security_group'),
}
_EMPTY = {'floatingips', 'extensions', 'security-group-rules', 'routers',
          'qos-policies', 'trunks', 'segments', 'network-ip-availabilities'}
_IGNORED_FILTERS = {'fields', 'limit', 'marker', 'sort_key', 'sort_dir',
                    'page_reverse'}


class Error(Exception):
    def __init__(self, status, kind, message):
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


def _caller(environ):
    """(project_id, is_admin) of the request."""
    if 'HTTP_X_IDENTITY_STATUS' in environ and environ.get(
            'fake_neutron.keystone'):
        if environ['HTTP_X_IDENTITY_STATUS'] != 'Confirmed':
            raise Error('401 Unauthorized', 'NotAuthenticated',
                        'authentication required')
        roles = (environ.get('HTTP_X_ROLES') or '').split(',')
        return environ.get('HTTP_X_PROJECT_ID') or '', 'admin' in roles
    token = environ.get('HTTP_X_AUTH_TOKEN') or 'admin:admin'
    user, _sep, project = token.partition(':')
    return project or user, user == 'admin'


def _visible(kind, item, project, admin):
    if admin or item.get('project_id') == project:
        return True
    return kind == 'networks' and item.get('shared')


def _matches(item, filters):
    for key, wanted in filters.items():
        if key in _IGNORED_FILTERS:
            continue
        if key == 'fixed_ips':
            ips = item.get('fixed_ips') or []
            for cond in wanted:
                name, _sep, value = cond.partition('=')
                if not any(str(ip.get(name)) == value for ip in ips):
                    return False
            continue
        if key == 'tenant_id':
            key = 'project_id'
        value = item.get(key)
        if isinstance(value, bool):
            value = 'true' if value else 'false'
            wanted = [w.lower() for w in wanted]
        if isinstance(value, list):
            if not any(w in value for w in wanted):
                return False
        elif str(value) not in wanted:
            return False
    return True


def _new(kind, body, project, admin):
    owner = body.get('project_id') or body.get('tenant_id') or project
    if owner != project and not admin:
        raise Error('403 Forbidden', 'PolicyNotAuthorized',
                    'cannot create a resource in project %s' % owner)
    item = {'id': str(uuid.uuid4()), 'name': body.get('name', ''),
            'description': body.get('description', ''),
            'project_id': owner, 'tenant_id': owner}
    return item


def _create_network(body, project, admin):
    net = _new('networks', body, project, admin)
    net.update(shared=bool(body.get('shared', False)), subnets=[],
               admin_state_up=body.get('admin_state_up', True),
               status='ACTIVE', mtu=1500, port_security_enabled=True,
               **{'router:external': False})
    return net


def _create_subnet(body, project, admin):
    network = _get('networks', body.get('network_id'), project, admin)
    try:
        cidr = ipaddress.ip_network(body.get('cidr', ''))
    except ValueError as exc:
        raise Error('400 Bad Request', 'BadRequest', 'invalid cidr: %s' % exc)
    if cidr.version != 4:
        raise Error('400 Bad Request', 'BadRequest', 'IPv4 only')
    hosts = list(cidr.hosts())
    gateway = body.get('gateway_ip', str(hosts[0]) if hosts else None)
    pools = body.get('allocation_pools') or [
        {'start': str(h[0]), 'end': str(h[-1])}
        for h in [[a for a in hosts if str(a) != gateway]] if h]
    subnet = _new('subnets', body, project, admin)
    subnet.update(network_id=network['id'], cidr=str(cidr), ip_version=4,
                  gateway_ip=gateway, allocation_pools=pools,
                  enable_dhcp=body.get('enable_dhcp', False),
                  dns_nameservers=[], host_routes=[], ipv6_ra_mode=None,
                  ipv6_address_mode=None, subnetpool_id=None)
    network['subnets'].append(subnet['id'])
    return subnet


def _create_security_group(body, project, admin):
    group = _new('security_groups', body, project, admin)
    group.update(security_group_rules=[], stateful=True)
    return group


def _default_group(project):
    for group in _STATE['security_groups'].values():
        if group['project_id'] == project and group['name'] == 'default':
            return group
    group = _create_security_group({'name': 'default'}, project, False)
    _STATE['security_groups'][group['id']] = group
    return group


def _allocate(network, wanted):
    used = {ip['ip_address'] for port in _STATE['ports'].values()
            for ip in port['fixed_ips']}
    for subnet_id in network['subnets']:
        subnet = _STATE['subnets'][subnet_id]
        if wanted and wanted.get('subnet_id') not in (None, subnet_id):
            continue
        for pool in subnet['allocation_pools']:
            start = ipaddress.ip_address(pool['start'])
            end = ipaddress.ip_address(pool['end'])
            address = start
            while address <= end:
                text = str(address)
                if text not in used and (not wanted or wanted.get(
                        'ip_address') in (None, text)):
                    return {'subnet_id': subnet_id, 'ip_address': text}
                address += 1
    raise Error('409 Conflict', 'IpAddressGenerationFailure',
                'No more IP addresses available on network %s.'
                % network['id'])


def _create_port(body, project, admin):
    network = _get('networks', body.get('network_id'), project, admin)
    port = _new('ports', body, project, admin)
    groups = body.get('security_groups')
    if groups is None:
        groups = [_default_group(port['project_id'])['id']]
    for group in groups:
        _get('security_groups', group, project, admin)
    wanted = (body.get('fixed_ips') or [None])[0]
    port.update(
        network_id=network['id'], fixed_ips=[_allocate(network, wanted)],
        mac_address='fa:16:3e:%02x:%02x:%02x' % tuple(
            random.randrange(256) for _ in range(3)),
        device_id=body.get('device_id', ''),
        device_owner=body.get('device_owner', ''),
        admin_state_up=body.get('admin_state_up', True), status='ACTIVE',
        security_groups=groups, port_security_enabled=True,
        allowed_address_pairs=[], extra_dhcp_opts=[], dns_name='',
        dns_assignment=[], qos_policy_id=None, resource_request=None,
        **{'binding:host_id': body.get('binding:host_id', ''),
           'binding:vif_type': 'ovs', 'binding:vif_details': {
               'port_filter': True}, 'binding:vnic_type': 'normal',
           'binding:profile': body.get('binding:profile') or {}})
    return port


_CREATE = {'networks': _create_network, 'subnets': _create_subnet,
           'ports': _create_port, 'security_groups': _create_security_group}
_UPDATABLE = {'name', 'description', 'device_id', 'device_owner',
              'admin_state_up', 'binding:host_id', 'binding:profile',
              'security_groups', 'dns_name', 'shared'}


def _get(kind, item_id, project, admin):
    item = _STATE[kind].get(item_id)
    if item is None or not _visible(kind, item, project, admin):
        singular = _singular(kind)
        raise Error('404 Not Found', '%sNotFound' % singular.title().replace(
            '_', ''), '%s %s could not be found.' % (
                singular.replace('_', ' ').capitalize(), item_id))
    return item


def _singular(kind):
    return {v[0]: v[1] for v in _COLLECTIONS.values()}[kind]


def _in_use(kind, item):
    ports = _STATE['ports'].values()
    if kind == 'networks':
        return any(p['network_id'] == item['id'] for p in ports)
    if kind == 'subnets':
        return any(ip['subnet_id'] == item['id'] for p in ports
                   for ip in p['fixed_ips'])
    if kind == 'security_groups':
        return any(item['id'] in p['security_groups'] for p in ports)
    return False


def _delete(kind, item_id, project, admin):
    item = _get(kind, item_id, project, admin)
    if _in_use(kind, item):
        raise Error('409 Conflict', '%sInUse' % _singular(kind).title(),
                    'Unable to complete operation on %s %s: one or more '
                    'ports use it.' % (_singular(kind), item_id))
    if kind == 'networks':
        for subnet_id in item['subnets']:
            _STATE['subnets'].pop(subnet_id, None)
    if kind == 'subnets':
        network = _STATE['networks'].get(item['network_id'])
        if network and item_id in network['subnets']:
            network['subnets'].remove(item_id)
    del _STATE[kind][item_id]


def handle(method, parts, query, body, project, admin):
    """(status, document) of one request; parts are the path below v2.0."""
    if not parts:
        return '200 OK', {'resources': [
            {'name': c, 'collection': c} for c in _COLLECTIONS]}
    collection = parts[0]
    if collection in _EMPTY:
        if method == 'GET':
            return '200 OK', {collection.replace('-', '_'): []}
        raise Error('404 Not Found', 'NotFound', 'not supported here')
    if collection == 'quotas':
        return '200 OK', {'quota': {'port': -1, 'network': -1, 'subnet': -1,
                                    'security_group': -1}}
    if collection not in _COLLECTIONS:
        raise Error('404 Not Found', 'NotFound',
                    'no such resource: %s' % collection)
    kind, singular = _COLLECTIONS[collection]
    if kind == 'security_groups' and not admin:
        _default_group(project)
    if len(parts) == 1:
        if method == 'GET':
            items = [i for i in _STATE[kind].values()
                     if _visible(kind, i, project, admin)
                     and _matches(i, query)]
            return '200 OK', {kind: items}
        if method == 'POST':
            item = _CREATE[kind]((body or {}).get(singular) or {}, project,
                                 admin)
            _STATE[kind][item['id']] = item
            return '201 Created', {singular: item}
        raise Error('405 Method Not Allowed', 'NotAllowed', method)
    item_id = parts[1]
    if method == 'GET':
        return '200 OK', {singular: _get(kind, item_id, project, admin)}
    if method == 'PUT':
        item = _get(kind, item_id, project, admin)
        changes = (body or {}).get(singular) or {}
        bad = set(changes) - _UPDATABLE
        if bad:
            raise Error('400 Bad Request', 'BadRequest',
                        'cannot update %s' % ', '.join(sorted(bad)))
        item.update(changes)
        return '200 OK', {singular: item}
    if method == 'DELETE':
        _delete(kind, item_id, project, admin)
        return '204 No Content', None
    raise Error('405 Method Not Allowed', 'NotAllowed', method)


def _application(environ, start_response):
    def reply(status, doc=None):
        data = b'' if doc is None else json.dumps(doc).encode()
        start_response(status, [('Content-Type', 'application/json'),
                                ('Content-Length', str(len(data)))])
        return [data]

    method = environ['REQUEST_METHOD']
    parts = [p for p in environ.get('PATH_INFO', '/').split('/') if p]
    if parts and parts[-1].endswith('.json'):
        parts[-1] = parts[-1][:-5]
    if not parts:
        href = '%s://%s/v2.0/' % (environ.get('wsgi.url_scheme', 'http'),
                                  environ.get('HTTP_HOST', '127.0.0.1'))
        return reply('200 OK', {'versions': [{
            'id': 'v2.0', 'status': 'CURRENT',
            'links': [{'rel': 'self', 'href': href}]}]})
    if parts[0] == 'v2.0':
        parts = parts[1:]
    query = {}
    for key, value in urllib.parse.parse_qsl(environ.get('QUERY_STRING', ''),
                                             keep_blank_values=True):
        query.setdefault(key, []).append(value)
    body = None
    length = int(environ.get('CONTENT_LENGTH') or 0)
    if length:
        try:
            body = json.loads(environ['wsgi.input'].read(length))
        except ValueError:
            return reply('400 Bad Request', {'NeutronError': {
                'type': 'BadRequest', 'message': 'malformed JSON',
                'detail': ''}})
    try:
        project, admin = _caller(environ)
        with _LOCK:
            status, doc = handle(method, parts, query, body, project, admin)
    except Error as exc:
        return reply(exc.status, {'NeutronError': {
            'type': exc.kind, 'message': exc.message, 'detail': ''}})
    return reply(status, doc)


def _build():
    path = os.environ.get('FAKE_NEUTRON_CONFIG')
    if not path:
        return _application
    from keystonemiddleware import auth_token
    from oslo_config import cfg
    conf = cfg.ConfigOpts()
    conf(args=[], project='fake-neutron', default_config_files=[path])

    def marked(environ, start_response):
        environ['fake_neutron.keystone'] = True
        return _application(environ, start_response)
    protected = auth_token.AuthProtocol(marked, {'oslo_config_config': conf})

    def application(environ, start_response):
        parts = [p for p in environ.get('PATH_INFO', '/').split('/') if p]
        if not parts:  # the version document is public, as in Neutron
            return _application(environ, start_response)
        return protected(environ, start_response)
    return application


application = _build()
