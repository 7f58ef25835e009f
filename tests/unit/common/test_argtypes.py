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
"""argparse types for bounded numbers."""
import argparse

import pytest

from elastman.common import argtypes

FRACTION = argtypes.bounded(float, lambda v: 0 <= v < 1, 'a number in [0, 1)')


def test_a_value_within_its_bounds_is_cast():
    assert FRACTION('0.25') == 0.25
    assert argtypes.bounded(int, lambda v: v >= 1, 'one or more')('3') == 3


@pytest.mark.parametrize('text', ['1', '-0.1', 'nan', 'half'])
def test_a_value_outside_or_not_a_number_names_the_bound(text):
    with pytest.raises(argparse.ArgumentTypeError,
                       match=r"^'%s' is not a number in \[0, 1\)$" % text):
        FRACTION(text)


def test_argparse_reports_it_under_the_option(capsys):
    ap = argparse.ArgumentParser()
    ap.add_argument('--penalty', type=FRACTION)
    with pytest.raises(SystemExit):
        ap.parse_args(['--penalty', '2'])
    assert "--penalty: '2' is not a number in [0, 1)" in capsys.readouterr().err
