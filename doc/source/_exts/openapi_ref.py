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
"""Sphinx directive that renders elastman's OpenAPI document as reference.

``.. openapi-reference:: ../../elastman/api/openapi.yaml`` produces one
section per operation (method, path, summary, parameters, the request body's
fields, the responses) and one section per component schema, each field with
its type, whether it is required, its range and its description. The page is
generated at build time, so it cannot drift from the document the API tests
check.
"""
from __future__ import annotations

import os

from docutils import nodes
from docutils.parsers.rst import directives
from docutils import statemachine
from sphinx.util import docutils as sphinx_docutils
from sphinx.util import nodes as sphinx_nodes
import yaml

METHODS = ('get', 'put', 'post', 'patch', 'delete', 'head')


def _ref_name(ref: str) -> str:
    return ref.rsplit('/', 1)[-1]


def _schema_anchor(name: str) -> str:
    return 'api-schema-%s' % name.lower()


class _Renderer:
    """Turns the OpenAPI document into reStructuredText lines."""

    def __init__(self, spec: dict) -> None:
        self.spec = spec
        self.components = spec.get('components', {})
        self.lines: list[str] = []

    # -- helpers -------------------------------------------------------------
    def _resolve(self, obj: dict) -> dict:
        while isinstance(obj, dict) and '$ref' in obj:
            kind, name = obj['$ref'].split('/')[-2:]
            obj = self.components[kind][name]
        return obj

    def emit(self, line: str = '') -> None:
        self.lines.append(line)

    def heading(self, title: str, char: str) -> None:
        self.emit(title)
        self.emit(char * len(title))
        self.emit()

    @staticmethod
    def _text(value) -> str:
        return ' '.join(str(value).split())

    def type_of(self, schema: dict) -> str:
        if '$ref' in schema:
            name = _ref_name(schema['$ref'])
            return ':ref:`%s <%s>`' % (name, _schema_anchor(name))
        for key in ('anyOf', 'oneOf'):
            if key in schema:
                return ' or '.join(self.type_of(s) for s in schema[key])
        if 'allOf' in schema:
            return ' and '.join(self.type_of(s) for s in schema['allOf'])
        if 'enum' in schema:
            return 'one of %s' % ', '.join('``%s``' % v
                                           for v in schema['enum'])
        kind = schema.get('type', 'any')
        if isinstance(kind, list):
            return ' or '.join(kind)
        if kind == 'array':
            items = schema.get('items')
            return 'array of %s' % (self.type_of(items) if items else 'any')
        if kind == 'object' and 'additionalProperties' in schema \
                and isinstance(schema['additionalProperties'], dict) \
                and not schema.get('properties'):
            return 'object of %s' % self.type_of(
                schema['additionalProperties'])
        return kind

    @staticmethod
    def range_of(schema: dict) -> str:
        parts = []
        for key, fmt in (('minimum', '>= %s'), ('exclusiveMinimum', '> %s'),
                         ('maximum', '<= %s'), ('exclusiveMaximum', '< %s'),
                         ('minLength', 'length >= %s'),
                         ('maxLength', 'length <= %s'),
                         ('minItems', 'items >= %s'),
                         ('maxItems', 'items <= %s')):
            if key in schema:
                parts.append(fmt % schema[key])
        if 'pattern' in schema:
            parts.append('matches ``%s``' % schema['pattern'])
        if 'default' in schema:
            parts.append('default ``%s``' % (schema['default'],))
        return '; '.join(parts)

    def fields_table(self, schema: dict, indent: str = '') -> None:
        schema = self._resolve(schema)
        props = schema.get('properties') or {}
        if not props:
            self.emit(indent + 'Type: %s.' % self.type_of(schema))
            self.emit()
            return
        required = set(schema.get('required', ()))
        self.emit(indent + '.. list-table::')
        self.emit(indent + '   :header-rows: 1')
        self.emit(indent + '   :widths: 20 25 10 45')
        self.emit()
        self.emit(indent + '   * - Field')
        self.emit(indent + '     - Type')
        self.emit(indent + '     - Required')
        self.emit(indent + '     - Range and meaning')
        for name, sub in props.items():
            parts = (self.range_of(sub),
                     self._text(sub.get('description', '')))
            about = '; '.join(p for p in parts if p)
            needed = 'yes' if name in required else 'no'
            self.emit(indent + '   * - ``%s``' % name)
            self.emit(indent + '     - %s' % self.type_of(sub))
            self.emit(indent + '     - %s' % needed)
            self.emit(indent + '     - %s' % (about or ''))
        self.emit()

    # -- sections ------------------------------------------------------------
    def operation(self, path: str, method: str, op: dict,
                  shared_params: list) -> None:
        self.heading('%s %s' % (method.upper(), path), '-')
        if op.get('summary'):
            self.emit(self._text(op['summary']))
            self.emit()
        if op.get('description'):
            self.emit(self._text(op['description']))
            self.emit()
        if op.get('security') == []:
            self.emit('No authentication needed.')
            self.emit()
        params = [self._resolve(p)
                  for p in shared_params + op.get('parameters', [])]
        if params:
            self.emit('**Parameters**')
            self.emit()
            for param in params:
                about = '; '.join(p for p in (
                    param['in'],
                    'required' if param.get('required') else 'optional',
                    self.type_of(param.get('schema', {})),
                    self.range_of(param.get('schema', {})),
                    self._text(param.get('description', ''))) if p)
                self.emit('* ``%s``: %s' % (param['name'], about))
            self.emit()
        body = op.get('requestBody')
        if body:
            body = self._resolve(body)
            schema = body.get('content', {}).get(
                'application/json', {}).get('schema')
            if schema is not None:
                self.emit('**Request body**')
                self.emit()
                self.fields_table(schema)
        self.emit('**Responses**')
        self.emit()
        for status, resp in sorted(op.get('responses', {}).items()):
            resp = self._resolve(resp)
            self.emit('* ``%s``: %s' % (status, self._text(
                resp.get('description', ''))))
            schema = resp.get('content', {}).get(
                'application/json', {}).get('schema')
            if schema is not None and str(status).startswith('2'):
                self.emit()
                self.fields_table(schema, indent='  ')
        self.emit()

    def render(self) -> list[str]:
        info = self.spec.get('info', {})
        if info.get('description'):
            self.emit(self._text(info['description']))
            self.emit()
        self.emit('OpenAPI %s document, API version %s.' % (
            self.spec.get('openapi', '?'), info.get('version', '?')))
        self.emit()
        self.heading('Operations', '=')
        for path, item in self.spec.get('paths', {}).items():
            shared = item.get('parameters', [])
            for method in METHODS:
                if method in item:
                    self.operation(path, method, item[method], shared)
        self.heading('Schemas', '=')
        for name, schema in self.components.get('schemas', {}).items():
            self.emit('.. _%s:' % _schema_anchor(name))
            self.emit()
            self.heading(name, '-')
            if schema.get('description'):
                self.emit(self._text(schema['description']))
                self.emit()
            self.fields_table(schema)
        return self.lines


class OpenAPIReference(sphinx_docutils.SphinxDirective):
    """``.. openapi-reference:: <path to openapi.yaml>``"""

    required_arguments = 1
    option_spec = {'encoding': directives.encoding}

    def run(self) -> list[nodes.Node]:
        rel, path = self.env.relfn2path(self.arguments[0])
        self.env.note_dependency(rel)
        with open(path, encoding=self.options.get('encoding', 'utf-8')) as f:
            spec = yaml.safe_load(f)
        lines = _Renderer(spec).render()
        source = os.path.basename(path)
        content = statemachine.StringList(
            lines, source=source)
        node = nodes.section()
        node.document = self.state.document
        sphinx_nodes.nested_parse_with_titles(self.state, content, node)
        return node.children


def setup(app):
    app.add_directive('openapi-reference', OpenAPIReference)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
