"""FR-Bank performance benchmark (issue 3 targets; written to JSON, never asserted in tests).

For banks of n edges (default 1k / 20k / 100k), each in a fresh subprocess so resident memory is
the bank's own: ingest rate with the hashing embedder, the first-query (snapshot + index build)
time, the median query latency *excluding* the query's embedding (the query vector is given),
and the peak resident memory after querying, with the CPU dispatch mode the process ran in (``fr``
runs JAX computations inline, :func:`frcore.prefer_sync_cpu_dispatch`; ``FR_ASYNC_DISPATCH=1``
keeps JAX's default). Separately, the median MiniLM embedding time of one
query, which is what "with the query embedding included" adds.

Targets: query median ≤ 0.5 / 2 / 10 ms at 1k / 20k / 100k; embedding adds ≤ 10 ms; ingest ≥ 2,000
facts/s; a 100k-edge bank queried with ≤ 1 GB resident.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

TARGET_MS = {1000: 0.5, 20000: 2.0, 100000: 10.0}
QUERIES = (
    "what is the latest about topic 42",
    "any upcoming obligations this week",
    "which slot changed recently",
    "synthetic fact about topic 7",
)


def measure_size(n: int, repeats: int = 200, dim: int = 384) -> dict:
    """Build an n-edge bank (hash-{dim} embedder) and time ingest and queries in this process."""
    from .._runtime import cpu_dispatch_mode
    from ._bank import Bank
    from ._store import synthetic_facts

    facts = synthetic_facts(n, seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        bank = Bank.open(os.path.join(tmp, "bench.db"), embedder=f"hash-{dim}")
        t = time.perf_counter()
        for start in range(0, n, 5000):
            bank.add(facts[start : start + 5000])
        ingest_s = time.perf_counter() - t
        at = "2025-06-01"
        qv = bank.embedder.embed(list(QUERIES))
        t = time.perf_counter()
        bank.query(QUERIES[0], at=at, query_vec=qv[0])
        first_s = time.perf_counter() - t
        lat = []
        for r in range(repeats):
            i = r % len(QUERIES)
            t = time.perf_counter()
            bank.query(QUERIES[i], at=at, query_vec=qv[i])
            lat.append(time.perf_counter() - t)
        bank.close()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    med = float(np.median(lat) * 1e3)
    return {
        "n": n,
        "ingest_facts_per_s": n / ingest_s,
        "first_query_s": first_s,
        "query_median_ms": med,
        "query_p90_ms": float(np.percentile(lat, 90) * 1e3),
        "target_ms": TARGET_MS.get(n),
        "meets_target": (med <= TARGET_MS[n]) if n in TARGET_MS else None,
        "peak_rss_mb": rss_mb,
        "cpu_dispatch": cpu_dispatch_mode(),
    }


def query_embedding_ms(repeats: int = 30) -> dict:
    from ._embed import get_embedder

    emb = get_embedder("minilm")
    emb.embed([QUERIES[0]])
    ts = []
    for r in range(repeats):
        t = time.perf_counter()
        emb.embed([QUERIES[r % len(QUERIES)]])
        ts.append(time.perf_counter() - t)
    from ._embed import benchmark_throughput

    return {
        "minilm_query_embedding_median_ms": float(np.median(ts) * 1e3),
        "target_ms": 10.0,
        "throughput": benchmark_throughput(emb, 512),  # batched; target ≥ 200 sentences/s
        "throughput_target_sentences_per_s": 200,
    }


def run(sizes=(1000, 20000, 100000), embedding: bool = True, log=print) -> dict:
    rows = []
    for n in sizes:
        # the child applies the same CPU dispatch mode as ``fr`` (before frcore.bank starts JAX)
        code = (
            "import json, frcore; frcore.prefer_sync_cpu_dispatch(); "
            f"from frcore.bank._benchmark import measure_size; print(json.dumps(measure_size({int(n)})))"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=3600)
        if out.returncode != 0:
            raise RuntimeError(f"bank benchmark n={n} failed: {out.stderr[-2000:]}")
        row = json.loads(out.stdout.strip().splitlines()[-1])
        log(
            f"n={n}: ingest {row['ingest_facts_per_s']:.0f}/s, first query {row['first_query_s']:.2f} s, median "
            f"{row['query_median_ms']:.2f} ms "
            f"(target {row['target_ms']} ms), peak RSS {row['peak_rss_mb']:.0f} MB, CPU dispatch {row['cpu_dispatch']}"
        )
        rows.append(row)
    res: dict[str, Any] = {
        "sizes": rows,
        "targets": {
            "query_ms": TARGET_MS,
            "embedding_adds_ms": 10.0,
            "ingest_facts_per_s": 2000,
            "rss_mb_at_100k": 1024,
        },
    }
    if embedding:
        res["embedding"] = query_embedding_ms()
        e = res["embedding"]
        log(
            f"MiniLM query embedding: {e['minilm_query_embedding_median_ms']:.2f} ms; batched throughput "
            f"{e['throughput']['sentences_per_s']:.0f} sentences/s (target ≥ {e['throughput_target_sentences_per_s']})"
        )
    return res
