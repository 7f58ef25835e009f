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
import threading

import pytest

from elastman.monitor import readings


class FakeFuture:
    """Answers (or fails) ``delay`` seconds after it is sent, from another
    thread, as the driver's event loop would.
    """

    def __init__(self, delay: float | None, error: Exception | None = None):
        self.delay, self.error = delay, error

    def add_callbacks(self, callback, errback, callback_args=(),
                      errback_args=()):
        if self.delay is None:
            return                           # never answered
        if self.error is not None:
            fire = lambda: errback(self.error, *errback_args)  # noqa: E731
        else:
            fire = lambda: callback([], *callback_args)  # noqa: E731
        threading.Timer(self.delay, fire).start()


class FakeSession:
    def __init__(self, plan):
        self.plan = list(plan)
        self.sent = []

    def execute_async(self, query, timeout=None):
        self.sent.append((query, timeout))
        return self.plan.pop(0)


def _reader(monkeypatch, plan, timeout=0.5):
    reader = readings.CqlReader(timeout, frozenset())
    session = FakeSession(plan)
    monkeypatch.setattr(reader, '_session', lambda target: session)
    return reader, session


def test_ping_times_every_probe_sent_at_once(monkeypatch):
    reader, session = _reader(monkeypatch, [
        FakeFuture(0.01), FakeFuture(0.12), FakeFuture(0.05)])
    times = reader.ping(readings.Target('10.0.0.1'), 3)
    assert session.sent == [(readings.PROBE_QUERY, 0.5)] * 3
    assert len(times) == 3 and times == sorted(times)
    # sent together: the slowest took its own time, not the sum
    assert 110 <= times[-1] < 400
    assert times[0] >= 10


def test_a_probe_that_fails_or_is_not_answered_counts_as_the_timeout(
        monkeypatch):
    reader, _ = _reader(monkeypatch, [
        FakeFuture(0.01), FakeFuture(0.01, RuntimeError('overloaded')),
        FakeFuture(None)], timeout=0.2)
    times = reader.ping(readings.Target('10.0.0.1'), 3)
    assert times[0] < 200 and times[1:] == [200.0, 200.0]


def test_ping_raises_when_no_probe_is_answered(monkeypatch):
    reader, _ = _reader(monkeypatch, [
        FakeFuture(0.01, ConnectionError('refused'))])
    with pytest.raises(ConnectionError):
        reader.ping(readings.Target('10.0.0.1'))
    reader, _ = _reader(monkeypatch, [FakeFuture(None)], timeout=0.2)
    with pytest.raises(TimeoutError, match='10.0.0.1:9042'):
        reader.ping(readings.Target('10.0.0.1'))
