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
"""An offline evaluation tool's two entry points from one definition: the
``elastman-manage`` sub-command and ``python -m <module>``.
"""
from __future__ import annotations

import argparse
import dataclasses
from typing import Any, Callable, Sequence


@dataclasses.dataclass(frozen=True)
class Tool:
    """A tool's arguments and runner, and where it is reachable from."""

    command: str            # the elastman-manage sub-command
    module: str             # the module ``python -m`` runs
    help: str               # one line in elastman-manage's list
    doc: str                # the module's docstring; its first line describes it
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]

    def add_subparser(self, subparsers: Any) -> argparse.ArgumentParser:
        """``elastman-manage <command> ...``: the caller dispatches to
        ``args.func(args)``.
        """
        ap = subparsers.add_parser(self.command, help=self.help)
        self.add_arguments(ap)
        ap.set_defaults(func=self.run)
        return ap

    def main(self, argv: Sequence[str] | None = None) -> int:
        """``python -m <module> ...``; ``argv`` defaults to the command line."""
        ap = argparse.ArgumentParser(prog='python -m %s' % self.module,
                                     description=self.doc.split('\n')[0])
        self.add_arguments(ap)
        return self.run(ap.parse_args(argv))
