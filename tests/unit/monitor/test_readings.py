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


class FakeNetwork:
    """A virtual clock and the probes in flight on it.

    Nothing is answered before every probe of a round was sent; then each
    is answered (or fails) at its send time plus its delay on the virtual
    clock, in the order of those times, from another thread, as the
    driver's event loop would. The times measured are therefore exact
    whatever the machine's load, and a reader that waited for one answer
    before sending the next would get none.
    """

    def __init__(self, monkeypatch, expected: int):
        self.now = 0.0
        self.expected = expected
        self.flying: list = []
        monkeypatch.setattr(readings.time, 'monotonic', lambda: self.now)

    def sent(self, future: 'FakeFuture') -> None:
        future.sent_at = self.now
        self.flying.append(future)
        if len(self.flying) == self.expected:
            threading.Thread(target=self._answer, daemon=True).start()

    def _answer(self) -> None:
        due = sorted((f for f in self.flying if f.delay is not None),
                     key=lambda f: f.sent_at + f.delay)
        for future in due:
            self.now = future.sent_at + future.delay
            future.fire()


class FakeFuture:
    """A probe answered (or failed) ``delay`` virtual seconds after it is
    sent; never answered when ``delay`` is None.
    """

    def __init__(self, delay: float | None, error: Exception | None = None):
        self.delay, self.error = delay, error
        self.sent_at = None
        self.network = None

    def add_callbacks(self, callback, errback, callback_args=(),
                      errback_args=()):
        if self.error is not None:
            self.fire = lambda: errback(self.error, *errback_args)
        else:
            self.fire = lambda: callback([], *callback_args)
        self.network.sent(self)


class FakeSession:
    def __init__(self, plan, network):
        self.plan = list(plan)
        self.network = network
        self.sent = []

    def execute_async(self, query, timeout=None):
        self.sent.append((query, timeout))
        future = self.plan.pop(0)
        future.network = self.network
        return future


def _reader(monkeypatch, plan, timeout=0.5):
    reader = readings.CqlReader(timeout, frozenset())
    session = FakeSession(plan, FakeNetwork(monkeypatch, len(plan)))
    monkeypatch.setattr(reader, '_session', lambda target: session)
    return reader, session


def test_ping_times_every_probe_sent_at_once(monkeypatch):
    reader, session = _reader(monkeypatch, [
        FakeFuture(0.01), FakeFuture(0.12), FakeFuture(0.05)])
    times = reader.ping(readings.Target('10.0.0.1'), 3)
    assert session.sent == [(readings.PROBE_QUERY, 0.5)] * 3
    # sent together: each took its own time, the slowest not the sum
    assert times == pytest.approx([10.0, 50.0, 120.0])


def test_a_probe_that_fails_or_is_not_answered_counts_as_the_timeout(
        monkeypatch):
    reader, _ = _reader(monkeypatch, [
        FakeFuture(0.01), FakeFuture(0.01, RuntimeError('overloaded')),
        FakeFuture(None)], timeout=0.2)
    times = reader.ping(readings.Target('10.0.0.1'), 3)
    assert times == pytest.approx([10.0, 200.0, 200.0])


def test_ping_raises_when_no_probe_is_answered(monkeypatch):
    reader, _ = _reader(monkeypatch, [
        FakeFuture(0.01, ConnectionError('refused'))])
    with pytest.raises(ConnectionError):
        reader.ping(readings.Target('10.0.0.1'))
    reader, _ = _reader(monkeypatch, [FakeFuture(None)], timeout=0.2)
    with pytest.raises(TimeoutError, match='10.0.0.1:9042'):
        reader.ping(readings.Target('10.0.0.1'))
