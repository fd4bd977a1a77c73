"""``fr latency`` on a tiny grid: the JSON has exactly the documented shape, and its derived numbers
(per-candidate slopes) follow from its own measurements (no timing asserted)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from experiments.latency import IMPLS, LABELS, PEERS, run_latency
from frcore.cli import main

KEYS = {
    "results",
    "kernel_to_floor_k20",
    "numba_compile_s",
    "labels",
    "peers",
    "other_dispatch",
    "slope_ns",
    "batched",
    "compile_s",
    "compilations",
    "dispatch_floor",
    "paper",
    "machine",
}


#: SPEC §D.9's numbers as the paper states them: 47 μs median at k = 20, 1.96 μs per candidate.
PAPER_D9 = {"median_us_k20": 47, "slope_ns": 1960}


def _least_squares_slope_ns(points: list[tuple[int, float]]) -> float:
    """cov(k, t) / var(k) of median μs on k, in ns per candidate (the closed form, no solver)."""
    k = np.array([p[0] for p in points], np.float64)
    t = np.array([p[1] for p in points], np.float64)
    return float(((k - k.mean()) * (t - t.mean())).sum() / ((k - k.mean()) ** 2).sum() * 1e3)


def _check_shape(res: dict, ks: list[int]) -> None:
    assert set(res) == KEYS
    assert res["paper"] == PAPER_D9
    for impl, slope in res["slope_ns"].items():  # each slope is the fit of its own rows, in ns
        points = [(r["k"], r["median_us"]) for r in res["results"] if r["impl"] == impl]
        assert slope == pytest.approx(_least_squares_slope_ns(points), rel=1e-9, abs=1e-9), impl
    seen = {(r["impl"], r["k"]) for r in res["results"]}
    for r in res["results"]:
        assert set(r) == {"impl", "k", "median_us"}
        assert r["impl"] in IMPLS and isinstance(r["k"], int) and isinstance(r["median_us"], float)
        assert r["median_us"] > 0
    for impl in IMPLS:  # every implementation measured at every k of a tiny grid
        for k in ks:
            assert (impl, k) in seen, (impl, k)
    assert set(res["slope_ns"]) == set(IMPLS) and all(isinstance(v, float) for v in res["slope_ns"].values())
    b = res["batched"]
    assert set(b) == {"B", "k", "scores_per_s"} and (b["B"], b["k"]) == (1000, 20) and b["scores_per_s"] > 0
    assert isinstance(res["compile_s"], float) and res["compile_s"] > 0
    assert isinstance(res["compilations"], int)
    assert sorted(d["k"] for d in res["dispatch_floor"]) == sorted(ks) and all(
        d["median_us"] > 0 for d in res["dispatch_floor"]
    )
    assert isinstance(res["machine"], dict) and res["machine"]["backend"]
    # the ratio is the jax row over the dispatch floor at k = 20, from the file's own numbers
    if 20 in ks:
        jax20 = next(r["median_us"] for r in res["results"] if (r["impl"], r["k"]) == ("jax", 20))
        floor20 = next(d["median_us"] for d in res["dispatch_floor"] if d["k"] == 20)
        assert res["kernel_to_floor_k20"] == pytest.approx(jax20 / floor20, rel=1e-12)
    else:
        assert res["kernel_to_floor_k20"] is None
    assert res["labels"] == LABELS and res["peers"] == list(PEERS) == ["numpy_vectorised", "numba"]
    assert res["labels"]["float64_reference"] == "float64 reference (test oracle)"
    assert "numpy" not in res["labels"], "the float64 twin is not to be read as NumPy's speed"
    assert isinstance(res["numba_compile_s"], float) and res["numba_compile_s"] > 0
    other = res["other_dispatch"]  # the jitted rows in the other CPU dispatch mode (child process)
    assert {res["machine"]["cpu_dispatch"], other["cpu_dispatch"]} == {"sync", "async"}
    assert sorted((r["impl"], r["k"]) for r in other["results"]) == sorted(
        (i, k) for i in ("jax", "jax_from_numpy") for k in ks
    )
    assert all(r["median_us"] > 0 for r in other["results"]) and sorted(
        d["k"] for d in other["dispatch_floor"]
    ) == sorted(ks)


def test_run_latency_tiny_grid_shape():
    ks = [1, 9, 20]
    res = run_latency(quick=True, ks=ks, log=lambda *_: None)
    _check_shape(res, ks)
    # k = 1, 9, 20 fall in buckets 8, 16, 32: at most one compile per bucket
    assert res["compilations"] <= len(res["machine"]["buckets"])
    json.dumps(res)  # serialisable


def test_cli_writes_json_and_figure(tmp_path, capsys):
    out, fig = tmp_path / "lat.json", tmp_path / "lat.png"
    assert main(["latency", "--quick", "--ks", "1,20", "--json", str(out), "--fig", str(fig)]) == 0
    _check_shape(json.loads(out.read_text()), [1, 20])
    assert fig.stat().st_size > 0
    assert "paper 47" in capsys.readouterr().out


def test_cli_rejects_bad_ks(capsys):
    assert main(["latency", "--ks", "1,x"]) == 2
    assert "--ks" in capsys.readouterr().err


def test_run_latency_rejects_nonpositive_k():
    with pytest.raises(ValueError, match=r"ks: candidate counts must be ≥ 1"):
        run_latency(quick=True, ks=[0, 5])
