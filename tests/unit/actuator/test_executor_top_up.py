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
"""A scale-out that grows or shrinks while it runs: the executor takes in a
top-up the guard, or a trim the planning loop, wrote into the action
(in-memory store, driver and nodetool)."""
import pytest

from tests.unit.actuator.test_executor_cloud import Cloud
from tests.unit.actuator.test_executor_cloud import make_world

TOP_UP = {'count': 1, 'decided_at': 0.0, 'trigger': 'guard'}


class ToppingCloud(Cloud):
    """Calls ``on_create`` with the number of servers created so far."""

    on_create = None

    def create(self, name, flavor, metadata=None, **kwargs):
        server = super().create(name, flavor, metadata, **kwargs)
        if self.on_create is not None:
            self.on_create(len(self.created))
        return server


@pytest.fixture
def world(conf):
    store, cloud, _ring, executor = make_world(
        conf, ToppingCloud(project='proj-a'))
    done = executor.run(store.actions.create('c1', 'create', {'count': 1}))
    assert done['state'] == 'SUCCEEDED', done['reason']
    return store, cloud, executor


def _scale_out(store, count):
    return store.actions.create('c1', 'scale_out',
                                {'count': count, 'flavor': 'small'},
                                step='requested')


def _top_up_on_leaving_creating(store, monkeypatch, count):
    """Write a top-up of ``count`` right before the executor's first step
    out of ``creating`` (after its last read of the parameters); the
    top-ups' answers.
    """
    advance = store.actions.advance
    written = []

    def racing_advance(cluster_id, action_id, step, **kwargs):
        if step == 'joining' and not written:
            written.append(store.actions.top_up('c1', action_id, count,
                                                TOP_UP))
        return advance(cluster_id, action_id, step, **kwargs)

    monkeypatch.setattr(store.actions, 'advance', racing_advance)
    return written


def test_a_top_up_written_while_creating_adds_its_servers(world):
    store, cloud, executor = world
    action = _scale_out(store, 2)

    def top_up(created):
        if created == 2:          # the first server of the scale-out
            assert store.actions.top_up('c1', action['id'], 1, TOP_UP)

    cloud.on_create = top_up
    done = executor.run(action)
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert len(cloud.created) == 4                  # 1 + 2 + the top-up's 1
    assert done['params']['count'] == 3
    assert done['params']['top_ups'] == [TOP_UP]
    assert done['result']['plan']['add'] == 3
    assert len(done['result']['servers']) == 3
    assert len([n for n in store.nodes.list('c1') if n['state'] == 'UN']) == 4


def test_a_top_up_just_before_creating_ends_is_not_lost(world, monkeypatch):
    """The step out of ``creating`` is conditioned on the parameters the
    executor last read: a top-up that lands after that read fails it, and
    the executor creates the servers it adds.
    """
    store, cloud, executor = world
    action = _scale_out(store, 1)
    written = _top_up_on_leaving_creating(store, monkeypatch, 2)
    done = executor.run(action)
    assert written and written[0] is not None
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert len(cloud.created) == 4                  # 1 + 1 + the top-up's 2
    assert done['result']['plan']['add'] == 3


def test_a_top_up_too_late_is_refused_and_changes_nothing(world):
    store, cloud, executor = world
    action = _scale_out(store, 1)
    done = executor.run(action)
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert store.actions.top_up('c1', action['id'], 1, TOP_UP) is None
    assert store.actions.get('c1', action['id'])['params']['count'] == 1
    assert len(cloud.created) == 2


def test_a_top_up_beyond_the_quota_is_declined_and_the_rest_goes_on(world):
    store, cloud, executor = world
    action = _scale_out(store, 2)

    def top_up(created):
        if created == 2:
            cloud.quota_left = 0
            assert store.actions.top_up('c1', action['id'], 2, TOP_UP)

    cloud.on_create = top_up
    done = executor.run(action)
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert len(cloud.created) == 3                  # 1 + the 2 asked first
    assert done['result']['declined'] == 2
    assert any('top-up of 2 server(s) declined' in w and 'Quota' in w
               for w in done['result']['warnings'])


def test_a_late_top_up_beyond_the_quota_does_not_fail_the_scale_out(
        world, monkeypatch):
    store, cloud, executor = world
    action = _scale_out(store, 1)
    cloud.on_create = lambda created: setattr(cloud, 'quota_left', 0)
    _top_up_on_leaving_creating(store, monkeypatch, 1)
    done = executor.run(action)
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert len(cloud.created) == 2 and done['result']['declined'] == 1


def test_a_trim_written_while_creating_stops_the_servers_it_takes(world):
    store, cloud, executor = world
    action = _scale_out(store, 4)
    answers = []

    def trim(created):
        if created == 2:          # the first server of the scale-out
            answers.append(store.actions.trim('c1', action['id'], 2, TOP_UP))

    cloud.on_create = trim
    done = executor.run(action)
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert answers[0]['params']['count'] == 2
    assert len(cloud.created) == 3                  # 1 + 2 of the 4 asked
    assert done['result']['plan']['add'] == 2
    assert done['params']['trims'] == [dict(TOP_UP, count=2)]
    assert len([n for n in store.nodes.list('c1') if n['state'] == 'UN']) == 3


def test_a_trim_just_before_creating_ends_leaves_what_was_created(
        world, monkeypatch):
    store, cloud, executor = world
    action = _scale_out(store, 2)
    advance = store.actions.advance
    written = []

    def racing_advance(cluster_id, action_id, step, **kwargs):
        if step == 'joining' and not written:
            written.append(store.actions.trim('c1', action_id, 1, TOP_UP))
        return advance(cluster_id, action_id, step, **kwargs)

    monkeypatch.setattr(store.actions, 'advance', racing_advance)
    done = executor.run(action)
    # both servers exist by then: nothing is left to take
    assert written == [None]
    assert done['state'] == 'SUCCEEDED', done['reason']
    assert len(cloud.created) == 3 and done['result']['plan']['add'] == 2
