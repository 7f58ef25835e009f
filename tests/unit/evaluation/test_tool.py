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
"""An offline tool's sub-command and ``python -m`` entry point."""
from __future__ import annotations

import argparse

from elastman.evaluation import tool


def _tool(seen: list) -> tool.Tool:
    def add_arguments(ap: argparse.ArgumentParser) -> None:
        ap.add_argument('--seed', type=int, default=1)

    def run(args: argparse.Namespace) -> int:
        seen.append(args.seed)
        return 3
    return tool.Tool(command='demo', module='elastman.evaluation.demo',
                     help='a demo tool', doc='Demo.\n\nMore.',
                     add_arguments=add_arguments, run=run)


def test_sub_command_dispatches_to_the_runner():
    seen: list = []
    demo = _tool(seen)
    parser = argparse.ArgumentParser()
    demo.add_subparser(parser.add_subparsers(dest='command'))
    args = parser.parse_args(['demo', '--seed', '7'])
    assert args.func(args) == 3
    assert seen == [7]


def test_main_parses_the_same_arguments():
    seen: list = []
    assert _tool(seen).main(['--seed', '5']) == 3
    assert seen == [5]
