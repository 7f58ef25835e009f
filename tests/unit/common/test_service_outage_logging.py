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
