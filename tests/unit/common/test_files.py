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
"""Whole-file JSON replacement."""
import json
import os
import stat

import pytest

from elastman.common import files


def test_replace_json_writes_the_whole_document(tmp_path):
    path = str(tmp_path / 'node.json')
    files.replace_json(path, {'name': 'a'})
    files.replace_json(path, {'name': 'b', 'seeds': [1]}, sort_keys=True)
    with open(path) as f:
        assert json.load(f) == {'name': 'b', 'seeds': [1]}
    assert os.listdir(tmp_path) == ['node.json']
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644


def test_a_failed_write_keeps_the_old_file_and_no_temporary(tmp_path):
    path = str(tmp_path / 'node.json')
    files.replace_json(path, {'name': 'a'})
    with pytest.raises(TypeError):
        files.replace_json(path, {'name': object()})
    with open(path) as f:
        assert json.load(f) == {'name': 'a'}
    assert os.listdir(tmp_path) == ['node.json']
