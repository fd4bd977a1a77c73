"""``fr calibrate --folds K`` (issue 18, item 5): persona folds, their bounds, out-of-fold scoring
that never sees a calibration persona, and a small end-to-end run checked against the benchmark."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import given, strategies as st
from scipy import stats

import frcore as fr
from frcore.bench import generate_suites, parse_suite, run_benchmark
from theory import calibrate as cal, corpus as corpus_mod

ids_st = st.lists(
    st.text(alphabet="abcdefghij0123456789", min_size=1, max_size=6), min_size=2, max_size=30, unique=True
)


@given(ids=ids_st, data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_folds_partition_the_personas(ids, data, seed):
    k = data.draw(st.integers(2, len(ids)), label="k")
    folds = cal.persona_folds(ids, k, seed)
    assert len(folds) == k
    flat = [p for f in folds for p in f]
    assert sorted(flat) == sorted(ids)  # every persona in exactly one fold
    sizes = [len(f) for f in folds]
    assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1
    assert all(list(f) == sorted(f) for f in folds)
    shuffled = list(ids)
    random.Random(seed).shuffle(shuffled)
    assert cal.persona_folds(shuffled, k, seed) == folds  # deterministic, whatever the input order


def test_the_fold_seed_changes_the_folds():
    ids = [f"p{i:02d}" for i in range(20)]
    assert cal.persona_folds(ids, 5, 0) == cal.persona_folds(ids, 5, 0)
    assert len({tuple(cal.persona_folds(ids, 5, s)) for s in range(5)}) == 5


@pytest.mark.parametrize("k", [1, 0, -3])
def test_k_below_two_is_an_error(k):
    with pytest.raises(ValueError, match=rf"--folds: K must be ≥ 2 .*got {k}$"):
        cal.persona_folds(["a", "b", "c"], k)


def test_k_above_the_personas_and_bad_ids_are_errors():
    with pytest.raises(ValueError, match=r"--folds: K = 4 exceeds the number of personas \(3\)"):
        cal.persona_folds(["a", "b", "c"], 4)
    assert len(cal.persona_folds(["a", "b", "c"], 3)) == 3  # K = number of personas: leave-one-persona-out
    with pytest.raises(ValueError, match="--folds: K must be an integer"):
        cal.persona_folds(["a", "b"], True)
    with pytest.raises(ValueError, match="persona id 'b' appears twice"):
        cal.persona_folds(["a", "b", "b"], 2)


def _cli(argv, capsys):
    from frcore.cli import main

    rc = main(argv)
    return rc, capsys.readouterr()


def test_cli_k_bounds_fail_in_one_line(capsys, tmp_path):
    # K < 2 is refused before the suite is read (the suite path does not exist)
    rc, out = _cli(["calibrate", "--suite", str(tmp_path / "missing"), "--embedder", "hash", "--folds", "1"], capsys)
    err = [ln for ln in out.err.strip().splitlines() if "warning" not in ln]
    assert rc == 2 and len(err) == 1, out.err
    assert (
        err[0]
        == "fr calibrate: error: --folds: K must be ≥ 2 (calibrate on K − 1 folds, score the held-out one), got 1"
    )
    argv = ["calibrate", "--suite", "synthetic", "--personas", "3", "--embedder", "hash", "--folds", "4"]
    rc, out = _cli(argv, capsys)
    err = [ln for ln in out.err.strip().splitlines() if "warning" not in ln]
    assert rc == 2 and len(err) == 1 and "--folds: K = 4 exceeds the number of personas (3)" in err[0]
    rc, out = _cli(["calibrate", "--suite", "synthetic", "--embedder", "hash"], capsys)
    assert rc == 2 and "--out: required" in out.err
    rc, out = _cli(
        [
            "calibrate",
            "--suite",
            "synthetic",
            "--embedder",
            "hash",
            "--out",
            str(tmp_path / "p.json"),
            "--json",
            str(tmp_path / "f.json"),
        ],
        capsys,
    )
    assert rc == 2 and "--json: only with --folds K" in out.err and not (tmp_path / "p.json").exists()


def test_calibrate_without_folds_writes_the_file_it_always_wrote(tmp_path, capsys, hash_embedder):
    out = tmp_path / "p.json"
    rc, res = _cli(
        [
            "calibrate",
            "--suite",
            "synthetic",
            "--personas",
            "2",
            "--seed",
            "5",
            "--embedder",
            "hash",
            "--out",
            str(out),
        ],
        capsys,
    )
    assert rc == 0 and "wrote" in res.out
    suites = [parse_suite(obj, f"gen#{i}") for i, obj in enumerate(generate_suites(2, seed=5))]
    direct, cert = cal.calibrate(corpus_mod.build_corpus(suites, hash_embedder))
    np.testing.assert_allclose(np.asarray(fr.load_params(out).alpha), np.asarray(direct.alpha), atol=1e-6)
    assert json.loads(out.read_text())["certificate"]["rows_used"] == cert["rows_used"]


@pytest.fixture(scope="module")
def four_suites():
    return [parse_suite(obj, f"gen#{i}") for i, obj in enumerate(generate_suites(4, seed=5))]


def test_out_of_fold_scoring_never_sees_a_calibration_persona(four_suites, hash_embedder, monkeypatch):
    """Spy on the two places personas enter: the calibration corpus and the benchmark run."""
    seen = []
    build, bench_run = corpus_mod.build_corpus, run_benchmark

    def spy_build(suites, embedder, *a, **kw):
        c = build(suites, embedder, *a, **kw)
        seen.append(("calibrate", {s.persona for s in suites}, set(c.personas)))
        return c

    def spy_run(suites, systems, embedder, **kw):
        res = bench_run(suites, systems, embedder, **kw)
        alpha_b = np.asarray(next(s for s in systems if s.name == "b").params(None).alpha, dtype=np.float64)
        seen.append(("score", {s.persona for s in suites}, {r["persona"] for r in res["questions"]}, alpha_b))
        return res

    monkeypatch.setattr(corpus_mod, "build_corpus", spy_build)
    monkeypatch.setattr("frcore.bench.run_benchmark", spy_run)
    r = cal.calibrate_folds(four_suites, hash_embedder, 3, fold_seed=1, n_boot=200, progress=False)
    assert [x[0] for x in seen] == ["calibrate", "score"] * 3
    everyone = {s.persona for s in four_suites}
    scored = []
    for f, (c, s) in enumerate(zip(seen[::2], seen[1::2])):
        assert c[1] == c[2] and s[1] == s[2]  # the suites given are the personas used
        assert not (c[1] & s[1]) and c[1] | s[1] == everyone
        assert s[1] == set(r["folds"][f]["held_out"]) and c[1] == set(r["folds"][f]["calibrated_on"])
        cert_alpha = np.array(list(r["folds"][f]["parameter_file"]["certificate"]["alpha"].values()))
        np.testing.assert_allclose(s[3], cert_alpha, atol=1e-6)  # side b scores with this fold's calibration
        scored += sorted(s[1])
    assert sorted(scored) == sorted(everyone)  # each persona held out exactly once


def test_end_to_end_matches_the_benchmark(four_suites, hash_embedder, tmp_path, capsys):
    """`fr calibrate --folds 2` on four generated personas: the pooled pass rates are those of
    `fr bench run` (fr-full, default parameters, every persona) and of `fr bench run --params`
    with each fold's written parameter file on its held-out personas; each fold's parameter set
    is `fr calibrate` on the other fold alone; McNemar's p is the exact binomial test."""
    path = tmp_path / "f.json"
    suite = ["--suite", "synthetic", "--personas", "4", "--seed", "5", "--embedder", "hash"]  # ``four_suites``
    argv = ["calibrate", *suite, "--folds", "2", "--n-boot", "500", "--json", str(path)]
    rc, out = _cli(argv, capsys)
    assert rc == 0, out.err
    r = json.loads(path.read_text())
    n_q = sum(len(s.questions) for s in four_suites)
    assert r["k"] == 2 and r["pooled"]["n"] == r["n_questions"] == n_q
    assert "**pooled**" in out.out and "fold 2/2" in out.err

    default = run_benchmark(four_suites, ["fr-full"], hash_embedder, keep_terms=False, progress=False)
    passed_default = {(q["persona"], q["id"]): q["passed"] for q in default["questions"]}
    passed_cal = {}
    for fo in r["folds"]:
        held = [s for s in four_suites if s.persona in fo["held_out"]]
        train = [s for s in four_suites if s.persona not in fo["held_out"]]
        p_file = fr.load_params(fo["parameter_file_path"])
        assert fo["parameter_file_path"] == str(tmp_path / f"f.fold{fo['fold']}.params.json")
        p_direct, _ = cal.calibrate(corpus_mod.build_corpus(train, hash_embedder))
        np.testing.assert_allclose(np.asarray(p_file.alpha), np.asarray(p_direct.alpha), atol=1e-6)
        run = run_benchmark(held, ["fr-full"], hash_embedder, base_params=p_file, keep_terms=False, progress=False)
        passed_cal.update({(q["persona"], q["id"]): q["passed"] for q in run["questions"]})
        assert fo["pass_b"] == pytest.approx(np.mean([q["passed"] for q in run["questions"]]))
    keys = sorted(passed_default)
    a = np.array([passed_default[k] for k in keys])
    b = np.array([passed_cal[k] for k in keys])
    pooled = r["pooled"]
    assert pooled["pass_a"] == pytest.approx(a.mean()) and pooled["pass_b"] == pytest.approx(b.mean())
    a_only, b_only = int((a & ~b).sum()), int((b & ~a).sum())
    assert pooled["discordant"] == {"a_only": a_only, "b_only": b_only}
    expect_p = 1.0 if a_only + b_only == 0 else stats.binomtest(a_only, a_only + b_only, 0.5).pvalue
    assert pooled["mcnemar_p"] == pytest.approx(expect_p)
    lo, hi = pooled["diff_ci"]
    assert pooled["diff"] == pytest.approx(b.mean() - a.mean()) and lo <= pooled["diff"] <= hi
    assert sum(s["n"] for s in pooled["per_av"].values()) == n_q
