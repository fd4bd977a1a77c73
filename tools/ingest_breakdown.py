"""Where ``Bank.add``'s time goes: ``PYTHONPATH=. python tools/ingest_breakdown.py [N]`` (default 100,000).

Builds an N-fact bank as ``fr bank bench`` does (its synthetic facts, the hashing embedder at 384
dimensions, batches of 5,000, the bank's index beside it) with wall-clock timers wrapped around
each part of the add path, and prints the seconds and microseconds per fact of each. Parts nest:
``index: total`` holds the ``index: …`` lines below it, ``index: extend`` holds ``postings``
and ``append``, and ``append`` holds the segment writes, the merges and the vector
file; a merge's own segment write counts in both ``merges`` and ``segment writes``.

A developer's profiler, not an experiment: it wraps FR-Bank's private functions in timers, so it
lives beside the other tools outside the packages (whose import contract forbids reading another
layer's private modules).
"""

from __future__ import annotations

import collections
import inspect
import os
import sys
import tempfile
import time
from collections.abc import Callable

PARTS = (
    # (module path, attribute owner within it or "", attribute, label)
    ("frcore.bank._bank", "", "parse_batch", "parse and validate"),
    ("frcore.bank.storage._batch", "", "quarantine_findings", "detector (text, id, slot, speaker)"),
    ("frcore.bank._bank", "Bank", "_embed_records", "embed"),
    ("frcore.bank._bank", "", "tokenize_stored", "BM25 tokens (for the index)"),
    ("frcore.bank.storage._writes", "Writes", "_insert", "SQLite: insert rows and vectors"),
    ("frcore.bank.storage._loading", "Loads", "sync_index", "index: total"),
    ("frcore.bank.storage._loading", "Loads", "_read_new_rows", "index: read the new rows back"),
    ("frcore.bank.storage._loading", "", "_combine", "index: column arrays"),
    ("frcore.bank.storage._loading", "Loads", "_extend_index", "index: extend"),
    ("frcore.bank.storage._tables", "Tables", "get_embeddings", "index: vectors read back"),
    ("frcore.bank.search", "Postings", "build", "index: postings"),
    ("frcore.bank.storage._index", "BankIndex", "append", "index: append"),
    ("frcore.bank.storage._index", "BankIndex", "_put_vectors", "index: vectors.f32"),
    ("frcore.bank.storage._index", "BankIndex", "_merge", "index: merges (read, verify, write)"),
    ("frcore.bank.storage._index", "BankIndex", "_write", "index: segment writes"),
    ("frcore.bank.storage._index", "BankIndex", "_commit", "index: manifest"),
)


def _timed(fn: Callable, label: str, totals: dict[str, float]) -> Callable:
    def timed(*args, **kwargs):
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            totals[label] += time.perf_counter() - t

    return timed


def breakdown(n: int = 100_000, batch: int = 5_000) -> dict[str, float]:
    """Seconds per part of ingesting ``n`` synthetic facts (module docstring), and ``total``."""
    import importlib

    import frcore
    from frcore.bank import Bank
    from frcore.bank.storage import synthetic_facts

    frcore.prefer_sync_cpu_dispatch()
    totals: dict[str, float] = collections.defaultdict(float)
    for module, owner, name, label in PARTS:
        where = importlib.import_module(module)
        target = getattr(where, owner) if owner else where
        raw = inspect.getattr_static(target, name)
        timed = _timed(getattr(target, name), label, totals)
        setattr(target, name, staticmethod(timed) if isinstance(raw, staticmethod) else timed)
    facts = synthetic_facts(n, seed=0)
    with tempfile.TemporaryDirectory() as d, Bank.open(os.path.join(d, "b.db"), embedder="hash-384") as bank:
        t = time.perf_counter()
        for start in range(0, n, batch):
            bank.add(facts[start : start + batch])
        totals["total"] = time.perf_counter() - t
    return dict(totals)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    n = int(args[0]) if args else 100_000
    parts = breakdown(n)
    total = parts.pop("total")
    print(f"{n} facts: {total:.2f} s, {n / total:.0f} facts/s, {total / n * 1e6:.1f} µs per fact")
    labels = [label for *_, label in PARTS]
    for label in labels:
        if label in parts:
            print(f"  {label:44s} {parts[label]:7.2f} s  {parts[label] / n * 1e6:6.1f} µs per fact")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
