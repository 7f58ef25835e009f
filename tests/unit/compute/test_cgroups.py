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


def test_v1_quota_and_remove(tmp_path):
    root = fake_v1(tmp_path / 'cpu')
    group = cgroups.CpuCgroup('v1', root, 'elastman', 'srv1')
    group.create(0.5, 100000)
    assert (tmp_path / 'cpu/elastman/srv1/cpu.cfs_quota_us').read_text() \
        == '50000'
    assert (tmp_path / 'cpu/elastman/srv1/cpu.cfs_period_us').read_text() \
        == '100000'
    assert group.quota() == 0.5
    group.set_quota(0)
    assert group.quota() is None
    assert group.wrapper()[:2] == ['/bin/sh', '-c']
    assert group.path + '/cgroup.procs' in group.wrapper()[2]
    group.remove()
    assert not group.exists()
    group.remove()      # idempotent


def test_v2_quota_enables_controller(tmp_path):
    root = fake_v2(tmp_path / 'unified')
    (tmp_path / 'unified/elastman').mkdir()
    (tmp_path / 'unified/elastman/cgroup.subtree_control').write_text('')
    group = cgroups.CpuCgroup('v2', root, 'elastman', 'srv2')
    group.create(1.5, 100000)
    assert (tmp_path / 'unified/cgroup.subtree_control').read_text() == '+cpu'
    assert (tmp_path / 'unified/elastman/cgroup.subtree_control').read_text() \
        == '+cpu'
    assert (tmp_path / 'unified/elastman/srv2/cpu.max').read_text() \
        == '150000 100000'
    assert group.quota() == 1.5
    group.set_quota(0)
    assert (tmp_path / 'unified/elastman/srv2/cpu.max').read_text() \
        == 'max 100000'
    group.remove()
    assert not group.exists()


def test_create_error_is_clear(tmp_path):
    group = cgroups.CpuCgroup('v1', str(tmp_path / 'missing' / 'x'),
                              'elastman', 's')
    (tmp_path / 'missing').write_text('a file, not a directory')
    with pytest.raises(cgroups.CgroupError):
        group.create(1)
