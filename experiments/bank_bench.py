"""``fr bank bench``: the FR-Bank performance benchmark (written to JSON, never asserted in tests).

An action of ``fr bank`` declared in the entry-point group ``frcore.bank.commands``, so that
frcore never imports experiments/.

For banks of n facts (default 1k / 20k / 100k; ``--sizes``), with the hashing embedder at 384
dimensions:

- a first process builds the bank file (its index beside it) with :meth:`Bank.add_batches` in
  batches of 5,000 (each its own transaction, the next one prepared by a worker process while
  one is stored): the ingest rate and that process's peak resident memory;
- after one process that queries it once (filling JAX's compilation cache and the kernel's
  executables, as any earlier use on the machine would), a fresh process opens it as an agent
  or the CLI would: ``first_query_s`` is
  :meth:`Bank.open` plus the first query (the interpreter and the imports excluded; they are
  ``import_s``), then the median and 90th percentile of 200 queries *excluding* the query's
  embedding (the query vector is given), and this process's peak resident memory
  (``peak_rss_mb``; after the queries, ``rss_anon_mb`` its own memory and ``rss_file_mb`` the
  pages of the files it maps: the vectors' with the exact cosine, not with the approximate index,
  whose queries read the rows they multiply with ``pread``), with the CPU dispatch mode it ran in
  (``fr`` runs JAX computations inline, :func:`frcore.prefer_sync_cpu_dispatch`;
  ``FR_ASYNC_DISPATCH=1`` keeps JAX's default);
- ``cli_query_wall_s``: the median wall time of ``fr bank query`` on a 1,000-fact bank (5 runs
  after one that fills JAX's compilation cache and the kernel's executable), everything included,
  with Python's bytecode cache on (as by default), cold (``FR_NO_WARM=1``);
  ``cli_query_warm_wall_s`` the same answered by ``fr bank serve-local`` (:mod:`frcore.bank.warm`),
  and ``cli_query.cli_query_warm_equal`` whether its output equals the cold one.

Separately, the median MiniLM embedding time of one query, which is what "with the query
embedding included" adds.

With ``ann`` (``fr bank bench --ann``) the banks are built and queried with the approximate
index (:mod:`frcore.bank.search._ann`; from 50,000 facts): the ingest includes building and extending
it, and a third process measures ``ann_recall_at_10`` and ``ann_results_equal``
(:func:`ann_recall`).

Targets: query median ≤ 0.5 / 2 / 10 / 20 ms at 1k / 20k / 100k / 1M; first query of a fresh
process ≤ 0.5 s at 100k; ``fr bank query`` ≤ 1 s on a 1k bank; embedding adds ≤ 10 ms; ingest
≥ 2,000 facts/s; ≤ 1 GB resident at 100k, ≤ 2 GB at 1M.
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

TARGET_MS = {1000: 0.5, 20000: 2.0, 100000: 10.0, 1000000: 20.0}
FIRST_QUERY_TARGET_S = {100000: 0.5}
CLI_TARGET_S = 1.0
QUERIES = (
    "what is the latest about topic 42",
    "any upcoming obligations this week",
    "which slot changed recently",
    "synthetic fact about topic 7",
)
AT = "2025-06-01"


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _rss_parts_mb() -> dict:
    """This process's resident memory now, by kind (Linux): ``rss_anon_mb`` (its own: Python
    objects, arrays) and ``rss_file_mb`` (pages of files it maps, such as the index's vectors:
    the page cache, shared with other processes and dropped by the kernel under pressure);
    empty where ``/proc`` has no such lines."""
    out = {}
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key in ("RssAnon", "RssFile"):
                    out[f"rss_{key[3:].lower()}_mb"] = int(value.split()[0]) / 1024.0
    except OSError:
        pass
    return out


def build_bank(
    path: str, n: int, dim: int = 384, batch: int = 5000, ann: bool = False, embedder: str | None = None
) -> dict:
    """Create the n-fact bank at ``path`` (hash-{dim} embedder, or ``embedder``) in this process:
    ingest figures (``ann``: the approximate index built and extended as the bank grows, its time
    included)."""
    from frcore.bank import Bank
    from frcore.bank.storage import synthetic_facts

    facts = synthetic_facts(n, seed=0)
    with Bank.open(path, embedder=embedder or f"hash-{dim}", ann=ann) as bank:
        t = time.perf_counter()
        bank.add_batches(facts[start : start + batch] for start in range(0, n, batch))
        if ann:
            bank.update_ann()  # the approximate index over every row (added since it was last extended too)
        ingest_s = time.perf_counter() - t
    return {"ingest_facts_per_s": n / ingest_s, "ingest_peak_rss_mb": _rss_mb()}


def query_bank(path: str, repeats: int = 200, ann: bool = False) -> dict:
    """Open the bank at ``path`` in this (fresh) process and time the first and later queries."""
    from frcore import cpu_dispatch_mode
    from frcore.bank import Bank

    t = time.perf_counter()
    bank = Bank.open(path, readonly=True, ann=ann)
    qv = bank.embedder.embed(list(QUERIES))  # the hashing embedder: microseconds
    bank.query(QUERIES[0], at=AT, query_vec=qv[0])
    first_s = time.perf_counter() - t
    lat = []
    for r in range(repeats):
        i = r % len(QUERIES)
        t = time.perf_counter()
        bank.query(QUERIES[i], at=AT, query_vec=qv[i])
        lat.append(time.perf_counter() - t)
    loaded = bank.store.loads.load()
    found = bank.approximate.index(bank.ann) if bank.approximate is not None and bank.ann is not None else None
    bank.close()
    return {
        **({"ann_rows": found.rows if found is not None else 0} if ann else {}),
        "first_query_s": first_s,
        "query_median_ms": float(np.median(lat) * 1e3),
        "query_p90_ms": float(np.percentile(lat, 90) * 1e3),
        "peak_rss_mb": _rss_mb(),
        **_rss_parts_mb(),
        "indexed_rows": loaded.indexed,
        "cpu_dispatch": cpu_dispatch_mode(),
    }


def recall_queries(n: int, count: int = 100, seed: int = 1) -> list[str]:
    """The queries ``ann_recall_at_10`` is measured on: the benchmark's own, then texts naming a
    topic or a fact number of the n-fact synthetic bank (each has many near-equal neighbours)."""
    rng = np.random.default_rng(seed)
    out = list(QUERIES)
    while len(out) < count:
        k = len(out)
        out.append(
            f"what about topic {int(rng.integers(1000))}" if k % 2 else f"synthetic fact number {int(rng.integers(n))}"
        )
    return out


def ann_recall(path: str, count: int = 100) -> dict:
    """How near the approximate index's candidates are, against the exact cosine over every row:

    - ``ann_recall_at_10``: the mean over :func:`recall_queries` of the share of the 10 rows of
      highest exact cosine among the approximate index's candidates whose cosine reaches the 10th highest of
      the whole bank (a row tied with it counts: the bank has many equal cosines);
    - ``ann_results_equal``: the share of those queries whose FR-full results (ids and scores)
      are the same with the approximate index as with the exact cosine.
    """
    from frcore import parse_time
    from frcore.bank import Bank

    approx = Bank.open(path, readonly=True, ann=True)
    exact = Bank.open(path, readonly=True)
    texts = recall_queries(exact.store.count(), count)
    qv = exact.embedder.embed(texts)
    index = approx.approximate.index(approx.ann) if approx.approximate is not None and approx.ann is not None else None
    sources = exact.store.read(parse_time(AT)).sources  # the index's vectors of every row
    if index is None or sources is None or approx.ann is None:
        raise RuntimeError(f"{path}: no approximate index to measure")
    matrix = sources[0]
    recall, same = [], []
    for text, q in zip(texts, qv):
        full = np.asarray(matrix @ q)
        kth = np.partition(full, full.size - 10)[full.size - 10]
        found = index.search(q, approx.ann.candidates)
        best = np.sort(full[found])[-10:]
        recall.append(float(np.mean(best >= kth)))
        a, e = approx.query(text, at=AT, query_vec=q), exact.query(text, at=AT, query_vec=q)
        same.append([(r["id"], r["score"]) for r in a.results] == [(r["id"], r["score"]) for r in e.results])
    approx.close()
    exact.close()
    return {
        "ann_recall_at_10": float(np.mean(recall)),
        "ann_recall_min": float(np.min(recall)),
        "ann_results_equal": float(np.mean(same)),
        "ann_queries": len(texts),
    }


def measure_size(n: int, repeats: int = 200, dim: int = 384, tmp: str | None = None, ann: bool = False) -> dict:
    """Build an n-fact bank in one subprocess, query it from a fresh one (module docstring);
    ``ann``: with the approximate index, and its recall measured in a third process."""
    with tempfile.TemporaryDirectory(dir=tmp) as d:
        path = os.path.join(d, "bench.db")
        row: dict[str, Any] = {"n": n}
        build = f"build_bank({path!r}, {int(n)}, dim={int(dim)}, ann={bool(ann)})"
        row |= {k: v for k, v in _child(build).items() if k != "import_s"}
        # one process first, as any earlier use on this machine: it fills JAX's compilation cache
        # and the kernel's executables for this bank's candidate shapes
        _child(f"query_bank({path!r}, repeats=1, ann={bool(ann)})")
        # its import_s: frcore and frcore.bank
        row |= _child(f"query_bank({path!r}, repeats={int(repeats)}, ann={bool(ann)})")
        if ann:
            row["ann"] = True
            if row.get("ann_rows"):
                row |= {k: v for k, v in _child(f"ann_recall({path!r})").items() if k != "import_s"}
    med = row["query_median_ms"]
    row["target_ms"] = TARGET_MS.get(n)
    row["meets_target"] = (med <= TARGET_MS[n]) if n in TARGET_MS else None
    row["first_query_target_s"] = FIRST_QUERY_TARGET_S.get(n)
    return row


def _child(call: str) -> dict:
    """Run ``experiments.bank_bench.<call>`` in a fresh interpreter set up as ``fr`` is."""
    code = (
        "import time; t0 = time.perf_counter(); "
        "import json, frcore; frcore.prefer_sync_cpu_dispatch(); frcore.enable_compilation_cache(); "
        "import frcore.bank; from experiments.bank_bench import ann_recall, build_bank, query_bank; "
        "import_s = time.perf_counter() - t0; "
        f"print(json.dumps({call} | {{'import_s': import_s}}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=7200)
    if out.returncode != 0:
        raise RuntimeError(f"bank benchmark {call} failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _walls(cmd: list[str], env: dict[str, str], runs: int) -> tuple[list[float], str]:
    """Wall times of ``runs`` runs of ``cmd`` after one uncounted run, and the last one's stdout."""
    walls, out = [], ""
    for i in range(runs + 1):  # the first run fills JAX's compilation cache and the kernel's executable
        t = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, check=True, timeout=600, env=env, text=True).stdout
        if i:
            walls.append(time.perf_counter() - t)
    return walls, out


def cli_query_wall_s(
    n: int = 1000, runs: int = 5, tmp: str | None = None, warm: bool = True, embedder: str = "hash-384"
) -> dict:
    """Median wall time of ``fr bank query`` (a new process each time: interpreter, imports,
    open, query, output) on an n-fact bank with ``embedder``: cold (``FR_NO_WARM=1``),
    and (``warm``) answered by ``fr bank serve-local`` over its socket, with whether the warm
    output equals the cold one."""
    fr = [sys.executable, "-c", "import sys; from frcore_warm import run; sys.exit(run())"]  # as the console script
    # as Python runs by default: modules' bytecode cached once (PYTHONDONTWRITEBYTECODE compiles
    # every module from source in every process)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory(dir=tmp) as d:
        path = os.path.join(d, "cli.db")
        _child(f"build_bank({path!r}, {int(n)}, embedder={embedder!r})")
        cmd = fr + ["bank", "query", path, QUERIES[0], "--at", AT]
        walls, cold_out = _walls(cmd, {**env, "FR_NO_WARM": "1"}, runs)
        res: dict[str, Any] = {
            "cli_query_wall_s": float(np.median(walls)),
            "cli_query_wall_runs_s": walls,
            "n": n,
            "embedder": embedder,
        }
        if warm:
            res.update(_warm_walls(fr, path, cmd, env, runs, cold_out))
    return res


def _warm_walls(fr: list[str], path: str, cmd: list[str], env: dict[str, str], runs: int, cold_out: str) -> dict:
    """:func:`cli_query_wall_s` with ``fr bank serve-local`` answering (its own runtime dir; stopped after)."""
    import frcore_warm

    with tempfile.TemporaryDirectory() as rt:
        os.chmod(rt, 0o700)
        env = {**env, frcore_warm.RUNTIME_DIR_ENV: rt}
        env.pop(frcore_warm.NO_WARM_ENV, None)
        server = subprocess.Popen(
            fr + ["bank", "serve-local", path], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        try:
            deadline = time.monotonic() + 600
            while not any(name.endswith(".pid") for name in os.listdir(rt)):
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"fr bank serve-local did not start: {server.stderr.read() if server.stderr else ''}"
                    )
                time.sleep(0.05)
            walls, _ = _walls(cmd, env, runs)
            answer = _ask(os.path.join(rt, frcore_warm.bank_key(path) + ".sock"), cmd[3:], env)
        finally:
            server.terminate()
            server.wait(timeout=60)
            if server.stderr:
                server.stderr.close()
    return {
        "cli_query_warm_wall_s": float(np.median(walls)),
        "cli_query_warm_wall_runs_s": walls,
        "cli_query_warm_equal": answer.get("rc") == 0 and answer.get("stdout") == cold_out,
    }


def _ask(sock_path: str, argv: list[str], env: dict[str, str]) -> dict:
    """The warm server's own answer to ``fr ARGV`` (not the cold path's, which the console script
    would fall back to)."""
    import socket

    import frcore_warm

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        frcore_warm.handshake(s, sock_path, timeout=600)  # the server's hello, then the request
        s.settimeout(600)
        frcore_warm.send(s, {"argv": argv, "cwd": os.getcwd(), "env": frcore_warm.answer_environment(env)})
        return frcore_warm.receive(s)


def query_embedding_ms(repeats: int = 30) -> dict:
    from frcore.bank import get_embedder

    emb = get_embedder("minilm")
    emb.embed([QUERIES[0]])
    ts = []
    for r in range(repeats):
        t = time.perf_counter()
        emb.embed([QUERIES[r % len(QUERIES)]])
        ts.append(time.perf_counter() - t)
    from frcore.bank.search import benchmark_throughput

    return {
        "minilm_query_embedding_median_ms": float(np.median(ts) * 1e3),
        "target_ms": 10.0,
        "throughput": benchmark_throughput(emb, 512),  # batched; target ≥ 200 sentences/s
        "throughput_target_sentences_per_s": 200,
    }


def run(sizes=(1000, 20000, 100000), embedding: bool = True, log=print, ann: bool = False) -> dict:
    rows = []
    for n in sizes:
        row = measure_size(n, ann=ann)
        log(
            f"n={n}: ingest {row['ingest_facts_per_s']:.0f}/s, first query of a fresh process "
            f"{row['first_query_s']:.2f} s (imports {row['import_s']:.2f} s more), median "
            f"{row['query_median_ms']:.2f} ms (target {row['target_ms']} ms), peak RSS {row['peak_rss_mb']:.0f} MB "
            + (
                f"(after the queries {row['rss_anon_mb']:.0f} MB own, {row['rss_file_mb']:.0f} MB of mapped files) "
                if "rss_anon_mb" in row and "rss_file_mb" in row
                else ""
            )
            + f"(ingest {row['ingest_peak_rss_mb']:.0f} MB), CPU dispatch {row['cpu_dispatch']}"
        )
        if ann:
            log(
                f"n={n}: approximate index over {row.get('ann_rows', 0)} rows"
                + (
                    f", recall@10 {row['ann_recall_at_10']:.3f} (lowest {row['ann_recall_min']:.2f}), FR-full results "
                    f"equal to exact on {100 * row['ann_results_equal']:.0f}% of {row['ann_queries']} queries"
                    if "ann_recall_at_10" in row
                    else " (below its min_rows: exact)"
                )
            )
        rows.append(row)
    cli = cli_query_wall_s(1000)  # the output contract: on a 1,000-fact bank, whatever the sizes
    log(
        f"fr bank query on a {cli['n']}-fact bank: {cli['cli_query_wall_s']:.2f} s wall cold, "
        f"{cli['cli_query_warm_wall_s']:.2f} s answered by fr bank serve-local (medians of 5; same output: "
        f"{cli['cli_query_warm_equal']})"
    )
    res: dict[str, Any] = {
        "sizes": rows,
        "cli_query_wall_s": cli["cli_query_wall_s"],
        "cli_query_warm_wall_s": cli["cli_query_warm_wall_s"],
        "cli_query": cli,
        "targets": {
            "query_ms": TARGET_MS,
            "first_query_s": FIRST_QUERY_TARGET_S,
            "cli_query_wall_s": CLI_TARGET_S,
            "embedding_adds_ms": 10.0,
            "ingest_facts_per_s": 2000,
            "rss_mb": {100000: 1024, 1000000: 2048},
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


def register(actions) -> None:
    """Add ``bench`` to the actions of ``fr bank`` (:mod:`frcore.bank.cli`)."""
    sp = actions.add_parser("bench", help="benchmark ingest, query latency and memory at several bank sizes (JSON)")
    sp.add_argument("--sizes", default="1000,20000,100000")
    sp.add_argument("--no-embedding", action="store_true", help="skip the MiniLM query-embedding timing")
    sp.add_argument(
        "--ann",
        action="store_true",
        help="with the approximate index (from 50,000 facts): ingest includes building it; adds ann_recall_at_10",
    )
    sp.add_argument("--json")
    sp.set_defaults(func=_command)


def _command(args) -> int:
    from frcore.bank.cli import write_out

    res = run(tuple(int(x) for x in args.sizes.split(",")), embedding=not args.no_embedding, ann=args.ann)
    if args.json:
        write_out(args.json, json.dumps(res, indent=1))
    return 0
