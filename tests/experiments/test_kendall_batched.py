"""The sweeps' Kendall τ over every (setting, question) at once equals SciPy's τ-b per pair, bit
for bit, ties, non-finite scores and degenerate vectors included."""

from __future__ import annotations

import numpy as np
from hypothesis import given, strategies as st

from experiments.candidate_table import kendall, kendall_batched

#: few distinct values (ties), and the padding / masked scores (−inf, nan)
VALUES = st.sampled_from([-np.inf, np.nan, -1.5, 0.0, 0.25, 0.25000003, 1.0, 3.0, np.float32(7.1)])


@given(st.integers(1, 3), st.integers(0, 9), st.data())
def test_batched_equals_scipy_per_pair(p, b, data):
    x = np.array(data.draw(st.lists(st.lists(VALUES, min_size=b, max_size=b), min_size=2, max_size=2)), np.float32)
    y = np.array(
        data.draw(
            st.lists(st.lists(st.lists(VALUES, min_size=b, max_size=b), min_size=2, max_size=2), min_size=p, max_size=p)
        ),
        np.float32,
    ).reshape(p, 2, b)
    got = kendall_batched(x[None], y)
    want = np.array([[kendall(x[q], y[i, q]) for q in range(2)] for i in range(p)])
    np.testing.assert_array_equal(got, want)


def test_by_hand():
    x = np.array([1.0, 2.0, 3.0, -np.inf])
    assert kendall_batched(x, x) == 1.0 and kendall_batched(x, -x) == -1.0
    assert kendall_batched(x, np.array([1.0, 1.0, 1.0, 5.0])) == 1.0  # every pair tied in y: undefined
    # 1 concordant − 2 discordant over √3·√3 (no ties)
    assert kendall_batched(np.array([1.0, 2.0, 3.0]), np.array([2.0, 3.0, 1.0])) == (1 - 2) / np.sqrt(3) / np.sqrt(3)
