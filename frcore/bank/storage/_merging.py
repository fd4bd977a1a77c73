"""When the bank's index merges its segments (:mod:`frcore.bank.storage._index`): a pure policy."""

from __future__ import annotations

from collections.abc import Sequence

#: how many segments one merge joins (:func:`merge_count`)
MERGE_FAN_IN = 4


def merge_count(sizes: Sequence[int], fan_in: int = MERGE_FAN_IN) -> int:
    """How many of the last segments (of row counts ``sizes``, in store order) to merge now: the
    last F = ``fan_in`` when the oldest of them holds at most F - 1 times the newest's rows, else 0.

    Merging until it gives 0 after every add keeps ``s[i] > (F - 1) · s[i + F - 1]`` for every F
    consecutive segments, so at most F - 1 segments per factor F - 1 of size (for F ≥ 3, about
    (F - 1) log_{F-1} n of them); with adds of one size the segments are the digits of a base-F
    counter (every row rewritten at most log_F(adds) times). F = 2 is binary-counter merging
    (the older not larger than the newer)."""
    if fan_in < 2 or len(sizes) < fan_in:
        return 0
    return fan_in if sizes[-fan_in] <= (fan_in - 1) * sizes[-1] else 0
