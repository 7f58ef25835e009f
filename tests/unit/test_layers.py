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
"""Imports between elastman's packages point down the layers only.

conf, common; then capacity, cassandra, client; store and compute (which
may use the layer below them); the workers, which never import each other;
lifecycle (a cluster's create, register, scale and delete); api; evaluation
and the client plug-ins; cmd at the top. See doc/source/architecture.rst,
"A cluster's lifecycle".
"""
from __future__ import annotations

import ast
import pathlib

import elastman

LAYERS = {
    'version': 0, 'conf': 0,
    'common': 1,
    'capacity': 2, 'cassandra': 2, 'client': 2,
    'store': 3, 'compute': 3,
    'monitor': 4, 'trainer': 4, 'predictor': 4, 'actuator': 4,
    'hostagent': 4,
    'lifecycle': 5,
    'api': 6,
    'evaluation': 7, 'osc': 7, 'heat': 7, 'wsgi': 7,
    'cmd': 8,
}
ROOT = pathlib.Path(elastman.__file__).parent


def _imports(path: pathlib.Path) -> set[str]:
    """The elastman packages ``path`` imports (absolute imports only)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + ['%s.%s' % (node.module, a.name) for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split('.')
            if parts[0] == 'elastman' and len(parts) > 1 and parts[1] in LAYERS:
                found.add(parts[1])
    return found


def _package(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT).parts
    return rel[0] if len(rel) > 1 else rel[0][:-3]


def violations() -> list[str]:
    out = []
    for path in sorted(ROOT.rglob('*.py')):
        pkg = _package(path)
        if pkg == '__init__':
            continue
        assert pkg in LAYERS, 'package %s has no layer in %s' % (pkg, __file__)
        for target in _imports(path) - {pkg}:
            if LAYERS[target] >= LAYERS[pkg]:
                out.append('%s imports elastman.%s (layer %d -> %d)' % (
                    path.relative_to(ROOT.parent), target, LAYERS[pkg],
                    LAYERS[target]))
    return out


def test_imports_point_down():
    assert violations() == []


def test_the_check_sees_an_upward_import(tmp_path, monkeypatch):
    bad = ROOT / 'store' / '_layer_probe.py'
    monkeypatch.setattr(pathlib.Path, 'rglob',
                        lambda self, pattern: iter([bad]))
    monkeypatch.setattr(pathlib.Path, 'read_text',
                        lambda self: 'from elastman.api import app\n')
    assert violations() == [
        'elastman/store/_layer_probe.py imports elastman.api (layer 3 -> 6)']


def test_lifecycle_sits_between_the_workers_and_the_api():
    assert (max(LAYERS[w] for w in ('monitor', 'trainer', 'predictor',
                                    'actuator', 'hostagent'))
            < LAYERS['lifecycle'] < LAYERS['api'] < LAYERS['cmd'])
