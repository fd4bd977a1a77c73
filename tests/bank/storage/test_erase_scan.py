"""The erase check's file scan (frcore.bank.storage._common._held_in): a string is found wherever
it lies in the file, across the chunks it is read in, and only where it lies."""

from __future__ import annotations

import io

from hypothesis import given, settings, strategies as st

from frcore.bank.storage import _common


@settings(max_examples=300, deadline=None)
@given(
    st.binary(min_size=0, max_size=200),
    st.binary(min_size=1, max_size=12),
    st.integers(0, 200),
    st.integers(1, 16),
)
def test_a_string_is_found_across_chunks(filler, needle, at, chunk):
    data = filler[:at] + needle + filler[at:]
    old = _common._SCAN_CHUNK
    _common._SCAN_CHUNK = chunk
    try:
        assert _common._held_in(io.BytesIO(data), {"s": {needle}}) == {"s"}
        other = b"\xff" * 13  # longer than any needle: absent from the data unless there
        assert _common._held_in(io.BytesIO(data), {"x": {other}}) == ({"x"} if other in data else set())
    finally:
        _common._SCAN_CHUNK = old
