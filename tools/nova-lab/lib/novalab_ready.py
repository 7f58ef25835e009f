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
"""Wait for the lab's services, then seed it with an image and flavours.

Run by lab.sh with the lab's virtualenv (standard library only):
  python novalab_ready.py --nova URL --glance URL --placement URL \
      --neutron URL --since ISO8601 --computes "compute1 compute2" \
      --timeout 180 --flavor name:vcpus:ram_mb:disk_gb[:cpu_quota] ...
      [--keystone URL --user NAME --project NAME]

With --keystone, the admin token comes from Keystone (the password in
$NOVA_LAB_KEYSTONE_PASSWORD); else the lab's token "admin:admin" serves.
A flavour's cpu_quota becomes its extra specs quota:cpu_quota (and
quota:cpu_period 100000).
"""
import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request

IMAGE_ID = '11111111-2222-3333-4444-555555555555'
HEADERS = {'X-Auth-Token': 'admin:admin',
           'X-OpenStack-Nova-API-Version': '2.95',
           'Content-Type': 'application/json'}


def call(method, url, body=None, data=None, headers=None):
    if body is not None:
        data = json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers=dict(HEADERS, **(headers or {})))
    with urllib.request.urlopen(req, timeout=10) as resp:
        raw = resp.read()
        return json.loads(raw) if raw else None


def keystone_token(url, user, project):
    body = {'auth': {'identity': {'methods': ['password'], 'password': {
        'user': {'name': user, 'domain': {'id': 'default'},
                 'password': os.environ['NOVA_LAB_KEYSTONE_PASSWORD']}}},
        'scope': {'project': {'name': project, 'domain': {'id': 'default'}}}}}
    req = urllib.request.Request(
        url.rstrip('/') + '/auth/tokens', data=json.dumps(body).encode(),
        method='POST', headers={'Content-Type': 'application/json'})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.headers['X-Subject-Token']


def until(what, predicate, deadline):
    while True:
        try:
            if predicate():
                return
        except (OSError, urllib.error.URLError, ValueError, KeyError):
            pass
        if time.monotonic() > deadline:
            sys.exit('nova-lab: timed out waiting for %s' % what)
        time.sleep(0.3)


def compute_up(nova, host, since):
    services = call('GET', '%s/os-services?binary=nova-compute&host=%s'
                    % (nova, host))['services']
    return bool(services and services[0]['state'] == 'up'
                and (services[0]['updated_at'] or '') > since)


def seed(nova, glance, flavors):
    try:
        call('GET', '%s/v2/images/%s' % (glance, IMAGE_ID))
    except urllib.error.HTTPError:
        call('POST', '%s/v2/images' % glance, {
            'id': IMAGE_ID, 'name': 'fake-image', 'disk_format': 'raw',
            'container_format': 'bare', 'visibility': 'public'})
        call('PUT', '%s/v2/images/%s/file' % (glance, IMAGE_ID),
             data=b'\0' * 1024,
             headers={'Content-Type': 'application/octet-stream'})
    existing = {f['name'] for f in call('GET', nova + '/flavors')['flavors']}
    for spec in flavors:
        name, vcpus, ram, disk, *quota = spec.split(':')
        if name not in existing:
            call('POST', nova + '/flavors', {'flavor': {
                'name': name, 'id': name, 'vcpus': int(vcpus),
                'ram': int(ram), 'disk': int(disk)}})
            if quota:
                call('POST', '%s/flavors/%s/os-extra_specs' % (nova, name),
                     {'extra_specs': {'quota:cpu_quota': quota[0],
                                      'quota:cpu_period': '100000'}})


def main():
    p = argparse.ArgumentParser()
    for opt in ('nova', 'glance', 'placement', 'neutron', 'since',
                'computes'):
        p.add_argument('--' + opt, required=True)
    p.add_argument('--timeout', type=float, default=180)
    p.add_argument('--flavor', action='append', default=[])
    p.add_argument('--keystone')
    p.add_argument('--user', default='nova')
    p.add_argument('--project', default='service')
    p.add_argument('--phase', choices=['services', 'computes', 'seed'],
                   required=True)
    args = p.parse_args()
    deadline = time.monotonic() + args.timeout
    if args.keystone:
        HEADERS['X-Auth-Token'] = keystone_token(args.keystone, args.user,
                                                 args.project)
    if args.phase == 'services':
        for name, url in (('placement', args.placement),
                          ('glance', args.glance + '/versions'),
                          ('neutron', args.neutron),
                          ('nova-api', args.nova)):
            until(name, lambda u=url: call('GET', u) is not None, deadline)
    elif args.phase == 'computes':
        for host in args.computes.split():
            until('nova-compute on ' + host,
                  lambda h=host: compute_up(args.nova, h, args.since),
                  deadline)
    else:
        seed(args.nova, args.glance, args.flavor)


if __name__ == '__main__':
    main()
