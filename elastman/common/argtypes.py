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
"""argparse types for numbers within bounds, whose error names the bound."""
from __future__ import annotations

import argparse
from typing import Callable, TypeVar

T = TypeVar('T', int, float)


def bounded(cast: Callable[[str], T], accept: Callable[[T], bool],
            what: str) -> Callable[[str], T]:
    """An argparse type: ``cast(text)`` where ``accept`` holds for it, else
    an error saying the value is not ``what``.
    """
    def parse(text: str) -> T:
        try:
            value = cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                '%r is not %s' % (text, what)) from None
        if not accept(value):
            raise argparse.ArgumentTypeError('%r is not %s' % (text, what))
        return value
    return parse
