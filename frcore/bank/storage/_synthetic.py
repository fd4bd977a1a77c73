"""Synthetic facts for benchmarks and tests, and the store's ingest benchmark."""

from __future__ import annotations

import os
import time
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from ._store import Store


def synthetic_facts(n: int, seed: int = 0, prefix: str = "bench") -> list[dict[str, Any]]:
    """``n`` synthetic fact dicts (random categories, slots, times; some links) for benchmarks."""
    from ..._ontology import CATEGORY_NAMES

    rng = np.random.default_rng(seed)
    t0 = datetime(2024, 1, 1)
    out = []
    for i in range(n):
        c = rng.choice(len(CATEGORY_NAMES), size=2, replace=False)
        w = float(rng.uniform(0.5, 1.0))
        cats = {CATEGORY_NAMES[c[0]]: w, CATEGORY_NAMES[c[1]]: 1.0 - w} if w < 1.0 else {CATEGORY_NAMES[c[0]]: 1.0}
        said = t0 + timedelta(hours=float(rng.uniform(0, 24 * 500)))
        fact: dict[str, Any] = {
            "id": f"{prefix}.{i}",
            "text": f"synthetic fact number {i} about topic {int(rng.integers(1000))}",
            "categories": cats,
            "said_at": said.isoformat(),
            "slot": f"slot{int(rng.integers(max(1, n // 4)))}" if rng.random() < 0.5 else None,
            "confidence": 1.0 if rng.random() < 0.8 else 0.4,
            "session": int(rng.integers(35)),
        }
        if rng.random() < 0.2:
            fact["event_time"] = (said + timedelta(days=float(rng.uniform(-5, 60)))).isoformat()
        if i > 0 and rng.random() < 0.05:
            fact["links"] = {"retracts": f"{prefix}.{int(rng.integers(i))}"}
        out.append(fact)
    return out


def benchmark_ingest(n: int = 20_000, batch: int = 1_000, path: str | None = None) -> dict[str, float]:
    """Ingest ``n`` synthetic facts in batches of ``batch`` into a fresh store; report facts/s
    (validation + one fsynced transaction per batch) and the time of a first (uncached) and a
    second (cached) snapshot."""
    import tempfile

    facts = synthetic_facts(n)
    with tempfile.TemporaryDirectory() as tmp:
        p = path or os.path.join(tmp, "bench.db")
        with Store.open(p) as store:
            t = time.perf_counter()
            for k in range(0, n, batch):
                store.add_facts(facts[k : k + batch])
            ingest = time.perf_counter() - t
            at = datetime(2026, 1, 1)
            t = time.perf_counter()
            snap = store.snapshot(at)
            first = time.perf_counter() - t
            t = time.perf_counter()
            store.snapshot(at)
            cached = time.perf_counter() - t
            t = time.perf_counter()
            store.snapshot(datetime(2025, 1, 1))
            other_at = time.perf_counter() - t
    return {
        "n": n,
        "batch": batch,
        "ingest_s": ingest,
        "facts_per_s": n / ingest,
        "snapshot_first_s": first,
        "snapshot_cached_s": cached,
        "snapshot_other_at_s": other_at,
        "snapshot_rows": len(snap),
    }
