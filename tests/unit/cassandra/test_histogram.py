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
import pytest

from elastman.cassandra import histogram


def test_offsets_follow_cassandra_series():
    off = histogram.offsets(40)
    assert off[:13] == (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 17, 20)
    # values seen on a live 5.0.6 node: bucket 27 is 310 us, 34 is 1109 B
    assert off[27] == 310 and off[31] == 642 and off[34] == 1109


def test_percentile_is_bucket_upper_bound():
    buckets = [0] * 128
    buckets[27] = 90        # (258, 310]
    buckets[31] = 10        # (535, 642]
    assert histogram.percentile(buckets, 0.5) == 310
    assert histogram.percentile(buckets, 0.90) == 310
    assert histogram.percentile(buckets, 0.91) == 642
    assert histogram.percentile(buckets, 0.99) == 642
    assert histogram.percentile([0] * 10, 0.99) is None


def test_mean_uses_bucket_middles():
    buckets = [0] * 165
    buckets[34] = 4         # (924, 1109]
    assert histogram.mean(buckets) == pytest.approx((924 + 1109) / 2)
    assert histogram.mean([0, 0]) is None


def test_delta_and_reset():
    assert histogram.delta([5, 7], [2, 3]) == [3, 4]
    assert histogram.delta([1, 7], [2, 3]) is None      # restarted node
    assert histogram.delta([1, 2], None) is None
    assert histogram.delta([1, 2, 3], [1, 2]) is None


def test_add():
    assert histogram.add(None, [1, 2]) == [1, 2]
    assert histogram.add([1], [1, 2]) == [2, 2]
    assert histogram.add([1, 2], None) == [1, 2]


def test_overflow_bucket():
    buckets = [0, 0, 1]
    lower, upper = histogram.bounds(3)[-1]
    assert histogram.percentile(buckets, 0.99) == upper
    assert upper == pytest.approx(lower * 1.2)


def test_sum_percentile_of_independent_histograms():
    a = [0] * 128
    a[27], a[31] = 50, 50   # 310 us, 642 us
    b = [0] * 128
    b[0], b[8] = 50, 50     # 1 us, 10 us
    # X + Y: 311, 320, 643, 652 us, a quarter each
    assert histogram.sum_percentile(a, b, 0.25) == 311
    assert histogram.sum_percentile(a, b, 0.5) == 320
    assert histogram.sum_percentile(a, b, 0.51) == 643
    assert histogram.sum_percentile(a, b, 0.99) == 652
    assert histogram.sum_percentile(b, a, 0.99) == 652


def test_sum_percentile_never_below_either_part():
    a = [0] * 128
    a[27] = 100
    b = [0] * 128
    b[31] = 3
    assert histogram.sum_percentile(a, b, 0.99) == 310 + 642
    assert histogram.sum_percentile(a, [0] * 128, 0.99) is None
    assert histogram.sum_percentile([0] * 4, b, 0.5) is None


def test_mixtures_weigh_each_part_by_its_requests():
    ups = histogram.offsets(128)
    fast = [0] * 128
    fast[10] = 990                            # a node that served 990 reads
    slow = [0] * 128
    slow[40] = 10                             # and one that served 10, slowly
    assert histogram.weighted_quantile([histogram.distribution(fast)], 0.99) \
        == histogram.percentile(fast, 0.99) == ups[10]
    # 1% of the reads were slow: the p99 of the two together is still fast,
    # 1.1% makes it slow
    parts = [histogram.distribution(fast), histogram.distribution(slow)]
    assert histogram.weighted_quantile(parts, 0.99) == ups[10]
    assert histogram.weighted_quantile(parts, 0.989) == ups[10]
    slow[40] = 11
    parts = [histogram.distribution(fast), histogram.distribution(slow)]
    assert histogram.weighted_quantile(parts, 0.99) == ups[40]
    assert histogram.weighted_quantile(parts, 0.99) == histogram.percentile(
        histogram.add(fast, slow), 0.99)
    # X + Y weighs as many requests as X
    wait = [0] * 128
    wait[0], wait[5] = 3, 7
    values, weights = histogram.sum_distribution(slow, wait)
    assert weights.sum() == pytest.approx(11)
    assert histogram.weighted_quantile([], 0.99) is None


def test_quantile_of_a_sparse_histogram_interpolates_in_its_bucket():
    ups = histogram.offsets(100)
    i = ups.index(35425)                    # bucket (29521, 35425] us
    assert histogram.quantile({}, 0.99) is None
    assert histogram.quantile({i: 100}, 0.5) == pytest.approx(
        29521 + 0.5 * (35425 - 29521))
    # 99 fast reads and one slow one: p99 is the top of the fast bucket
    assert histogram.quantile({10: 99, i: 1}, 0.99) == pytest.approx(ups[10])
    assert histogram.quantile({10: 98, i: 2}, 0.99) > 29521
