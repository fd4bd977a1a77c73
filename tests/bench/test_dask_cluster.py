"""Every map on a real Dask cluster (issue 32, item 5): a ``dask scheduler`` and two ``dask worker``
processes started on loopback (the workers import this tree's frcore through ``PYTHONPATH``), each
command run with ``--scheduler ADDRESS`` and compared with its in-process run, field by field
(wall-clock seconds and the scheduler's own label aside). The processes are stopped at the end,
also when a test fails."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.longmemeval import tiny
from support.paths import ROOT

from frcore.cli import main as fr_main

ROOT = ROOT
SUITE = ["--suite", "synthetic", "--personas", "2", "--seed", "3", "--embedder", "hash"]


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:  # each was started in its own session: its group is it and its children
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    """The address of a scheduler with two single-threaded workers, all on 127.0.0.1."""
    d = tmp_path_factory.mktemp("dask")
    file = d / "scheduler.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(":")}
    start = {"cwd": str(d), "env": env, "start_new_session": True, "stdout": subprocess.DEVNULL}
    procs: list[subprocess.Popen] = []
    logs = []

    def log(name):
        logs.append(open(d / name, "w"))
        return logs[-1]

    try:
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0"]
                + ["--dashboard-address", ":0", "--scheduler-file", str(file)],
                stderr=log("scheduler.log"),
                **start,
            )
        )
        deadline = time.monotonic() + 60
        while not file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert file.exists(), (d / "scheduler.log").read_text()
        for i in range(2):
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", str(file)]
                    + ["--nworkers", "1", "--nthreads", "1", "--host", "127.0.0.1", "--dashboard-address", ":0"],
                    stderr=log(f"worker{i}.log"),
                    **start,
                )
            )
        from dask.distributed import Client

        with Client(scheduler_file=str(file), timeout=60) as c:
            c.wait_for_workers(2, timeout=60)
            address = c.scheduler.address
        yield address
    finally:
        from frcore.bench import disconnect

        disconnect()  # the clients the commands opened, before their scheduler goes
        _stop(procs)
        for f in logs:
            f.close()


def _without(doc, *keys):
    """``doc`` without the run's own wall-clock fields (compared: everything else)."""
    if isinstance(doc, dict):
        return {k: _without(v, *keys) for k, v in doc.items() if k not in keys}
    if isinstance(doc, list):
        return [_without(v, *keys) for v in doc]
    return doc


def _both(argv_for, scheduler, tmp_path):
    """Run ``argv_for(dir)`` in-process and with ``--scheduler``; both exit 0."""
    local, dist = tmp_path / "local", tmp_path / "dist"
    local.mkdir()
    dist.mkdir()
    assert fr_main(argv_for(local)) == 0
    assert fr_main(argv_for(dist) + ["--scheduler", scheduler]) == 0
    return local, dist


def _differences(x, y, path="") -> list[str]:
    if isinstance(x, dict) and isinstance(y, dict):
        return [d for k in sorted(set(x) | set(y)) for d in _differences(x.get(k), y.get(k), f"{path}/{k}")]
    if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        return [d for i, (u, v) in enumerate(zip(x, y)) for d in _differences(u, v, f"{path}[{i}]")]
    return [] if x == y else [f"{path}: {x!r:.80} != {y!r:.80}"]


def _same_json(a: Path, b: Path, *keys) -> dict:
    x, y = json.loads(a.read_text()), json.loads(b.read_text())
    assert not _differences(_without(x, *keys), _without(y, *keys))
    return x


def test_bench_run_personas_on_the_cluster(scheduler, tmp_path):
    local, dist = _both(
        lambda d: ["bench", "run", *SUITE, "--systems", "fr-full,bm25", "--json", str(d / "r.json")],
        scheduler,
        tmp_path,
    )
    r = _same_json(local / "r.json", dist / "r.json", "seconds")
    assert r["n_personas"] == 2 and len(r["questions"]) == 2 * r["n_questions"] > 0


def test_longmemeval_questions_on_the_cluster(scheduler, tmp_path):
    (tmp_path / "tiny.json").write_text(json.dumps(tiny()))
    argv = ["bench", "longmemeval", "--data", str(tmp_path / "tiny.json"), "--embedder", "hash", "--n-boot", "200"]
    argv += ["--systems", "fr-full,lme-bm25"]
    local, dist = _both(lambda d: [*argv, "--out", str(d / "out")], scheduler, tmp_path)
    s = _same_json(local / "out" / "summary.json", dist / "out" / "summary.json", "seconds")
    for name in s["logs"].values():
        assert (local / "out" / name).read_text() == (dist / "out" / name).read_text()
    assert s["counts"]["questions"] == 4


def test_calibrate_folds_on_the_cluster(scheduler, tmp_path):
    local, dist = _both(
        lambda d: ["calibrate", *SUITE, "--folds", "2", "--n-boot", "200", "--json", str(d / "f.json")],
        scheduler,
        tmp_path,
    )
    r = _same_json(local / "f.json", dist / "f.json", "seconds", "parameter_file_path")
    assert r["k"] == 2 and r["n_questions"] > 0


def test_appendix_sweeps_on_the_cluster(scheduler, tmp_path, monkeypatch):
    """The three maps of the appendix sweeps: chunks of parameter sets (granularity's 12, in
    chunks of 5 here; multiplier and α share the map), noise settings (labels; noise shares it)
    and the holdout calibration."""
    import experiments.candidate_table as ct

    monkeypatch.setattr(ct, "CLUSTER_CHUNK", 5)
    only = "granularity,labels,holdout"
    local, dist = _both(lambda d: ["sweep", *SUITE, "--only", only, "--quick", "--out", str(d)], scheduler, tmp_path)
    for name in only.split(","):
        r = _same_json(local / f"sweep_{name}.json", dist / f"sweep_{name}.json")
        assert r["data_source"]


def test_sweep_grid_and_its_tables_on_the_cluster(scheduler, tmp_path):
    grid = ["--param", "rate.LOGISTICAL_CONTEXT=0.004,0.008,0.016", "--param", "alpha.OBLIGATIONS=0.1,0.35,0.9"]
    local, dist = _both(
        lambda d: ["sweep", "grid", *SUITE, *grid, "--chunk", "2", "--json", str(d / "g.json")], scheduler, tmp_path
    )
    r = _same_json(local / "g.json", dist / "g.json", "seconds", "scheduler")
    assert r["n_settings"] == 9 and r["kernel_calls"] == 5


def test_a_cached_embedder_ships_as_its_recipe(tmp_path):
    """The MiniLM embedder (with its vector cache) is rebuilt on the worker, never pickled."""
    import pickle

    from frcore.bank import CachedEmbedder, Router, get_embedder
    from frcore.bench import Rebuild, portable, resolve, shipped_bytes

    emb = CachedEmbedder(get_embedder("hash-8"), tmp_path / "cache.sqlite")
    recipe = portable(Router(emb))
    assert isinstance(recipe, Rebuild) and shipped_bytes([Router(emb)]) < 1_000
    built = resolve(pickle.loads(pickle.dumps(recipe)))
    assert type(built) is Router and built.embedder.name == emb.name and built.embedder.path == emb.path
    assert resolve(pickle.loads(pickle.dumps(recipe))) is built  # once per process


def test_maps_one_after_another_share_a_value_safely(scheduler):
    """Consecutive maps scatter the same value (a sweep's candidate table); each map's shared
    value gets its own key, so one map's release cannot take the next map's data (before, about
    one map in 40 failed with "lost dependencies")."""
    from operator import getitem  # importable on the workers: getitem(table, i) is table[i]

    from frcore.bench import connect, map_tasks

    client = connect(scheduler)
    table = [10 * i for i in range(20_000)]
    for _ in range(60):
        assert map_tasks(getitem, [(i,) for i in range(4)], (table,), client=client, progress=False) == [0, 10, 20, 30]
