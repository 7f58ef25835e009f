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
"""A periodic task that fails through an outage: one traceback, one line per
further failure, and a line when it works again."""
import logging

from elastman.common import service


def test_outage_is_logged_once_then_recovery(caplog):
    state = {'fail': 3}

    def round_():
        if state['fail']:
            state['fail'] -= 1
            raise ConnectionError('store unreachable')

    task = service._logged(round_)
    with caplog.at_level(logging.WARNING, logger='elastman.common.service'):
        for _ in range(5):
            task()
    messages = [r.getMessage() for r in caplog.records]
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert len(tracebacks) == 1
    assert sum('failed again (ConnectionError: store unreachable)' in m
               for m in messages) == 2
    assert sum('works again after 3 failed run(s) (ConnectionError)' in m
               for m in messages) == 1
