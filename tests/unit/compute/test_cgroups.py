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
import os

import pytest

from elastman.compute import cgroups


def fake_v1(root):
    os.makedirs(root)
    for name in ('cpu.cfs_quota_us', 'cpu.cfs_period_us', 'cgroup.procs'):
        (root / name).write_text('')
    return str(root)


def fake_v2(root, controllers='cpu io memory'):
    os.makedirs(root)
    (root / 'cgroup.controllers').write_text(controllers)
    (root / 'cgroup.subtree_control').write_text('')
    return str(root)


def test_detect_v1(tmp_path):
    root = fake_v1(tmp_path / 'cpu')
    assert cgroups.detect('auto', root) == ('v1', root)


def test_detect_v2(tmp_path):
    root = fake_v2(tmp_path / 'unified')
    assert cgroups.detect('v2', root) == ('v2', root)
    assert cgroups.detect('auto', root) == ('v2', root)


def test_detect_none_mode():
    assert cgroups.detect('none') == ('none', '')


def test_detect_clear_error(tmp_path):
    root = fake_v2(tmp_path / 'unified', controllers='io memory')
    with pytest.raises(cgroups.CgroupError) as err:
        cgroups.detect('auto', root)
    text = str(err.value)
    assert 'cpu controller not available' in text
    assert 'cgroup = none' in text


@pytest.mark.parametrize('version, cpus, created, lifted', [
    ('v1', 0.5,
     {'elastman/srv/cpu.cfs_quota_us': '50000',
      'elastman/srv/cpu.cfs_period_us': '100000'},
     {}),
    ('v2', 1.5,     # the cpu controller enabled on the way down
     {'cgroup.subtree_control': '+cpu',
      'elastman/cgroup.subtree_control': '+cpu',
      'elastman/srv/cpu.max': '150000 100000'},
     {'elastman/srv/cpu.max': 'max 100000'}),
], ids=['v1', 'v2'])
def test_quota_set_lifted_and_removed(tmp_path, version, cpus, created,
                                      lifted):
    """``created``/``lifted``: the files below the root after create and
    after set_quota(0).
    """
    root = tmp_path / 'cpu'
    if version == 'v1':
        fake_v1(root)
    else:
        fake_v2(root)
        (root / 'elastman').mkdir()
        (root / 'elastman/cgroup.subtree_control').write_text('')

    def files(names):
        return {name: (root / name).read_text() for name in names}
    group = cgroups.CpuCgroup(version, str(root), 'elastman', 'srv')
    group.create(cpus, 100000)
    assert files(created) == created
    assert group.quota() == cpus
    group.set_quota(0)
    assert group.quota() is None
    assert files(lifted) == lifted
    assert group.wrapper()[:2] == ['/bin/sh', '-c']
    assert group.path + '/cgroup.procs' in group.wrapper()[2]
    group.remove()
    assert not group.exists()
    group.remove()      # idempotent


def test_create_error_is_clear(tmp_path):
    group = cgroups.CpuCgroup('v1', str(tmp_path / 'missing' / 'x'),
                              'elastman', 's')
    (tmp_path / 'missing').write_text('a file, not a directory')
    with pytest.raises(cgroups.CgroupError):
        group.create(1)
