"""``fr compare`` (issue 18): paired statistics on a case with a known difference, sides by
system / file / override, and the output contract."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

import frcore as fr
from frcore.bench import run_benchmark
from frcore.bench.compare import compare_records, resolve_side, run_compare


def _records(a_pass, b_pass, avs):
    out = []
    for i, (pa, pb, av) in enumerate(zip(a_pass, b_pass, avs)):
        for side, p in (("a", pa), ("b", pb)):
            out.append(
                {
                    "system": side,
                    "persona": f"p{i % 3}",
                    "id": f"q{i}",
                    "attack_vector": av,
                    "passed": bool(p),
                    "stale": not p,
                }
            )
    return out


def test_known_difference():
    """40 questions: both pass 20, b only 12, a only 3, both fail 5 → pass_a 57.5%, pass_b 80%,
    diff +22.5 pp; exact McNemar p = 2·P(X ≤ 3 | n=15, ½); per attack vector split as built."""
    a = [1] * 20 + [0] * 12 + [1] * 3 + [0] * 5
    b = [1] * 20 + [1] * 12 + [0] * 3 + [0] * 5
    avs = ["AV1_superseded_preference"] * 20 + ["AV2_expired_logistics"] * 12 + ["AV3_stable_identity"] * 8
    r = compare_records(_records(a, b, avs))
    assert r["pass_a"] == pytest.approx(23 / 40) and r["pass_b"] == pytest.approx(32 / 40)
    assert r["diff"] == pytest.approx(9 / 40)
    assert r["discordant"] == {"a_only": 3, "b_only": 12}
    assert r["mcnemar_p"] == pytest.approx(stats.binomtest(3, 15, 0.5).pvalue) and r["mcnemar_p"] < 0.05
    lo, hi = r["diff_ci"]
    assert 0 < lo < 9 / 40 < hi < 0.5  # the difference is significant and the CI brackets it
    assert r["per_av"]["AV1"]["diff"] == 0 and r["per_av"]["AV1"]["mcnemar_p"] == 1.0
    av2 = r["per_av"]["AV2"]
    assert (av2["n"], av2["pass_a"], av2["pass_b"], av2["diff_ci"]) == (12, 0.0, 1.0, [1.0, 1.0])
    assert av2["mcnemar_p"] == pytest.approx(2 * 0.5**12)
    assert r["per_av"]["AV2"]["discordant"] == {"a_only": 0, "b_only": 12}
    assert r["per_av"]["AV3"]["discordant"] == {"a_only": 3, "b_only": 0}
    assert len(r["discordant_questions"]["b_only"]) == 12 and r["discordant_questions"]["a_only"][0]["id"] == "q32"
    # exact at any size: 30 discordant pairs would switch ``mcnemar`` to χ² by default
    big = compare_records(_records([0] * 30, [1] * 30, ["AV1"] * 30))
    assert big["mcnemar_p"] == pytest.approx(stats.binomtest(0, 30, 0.5).pvalue)


def test_identical_sides_have_no_difference():
    r = compare_records(_records([1, 0, 1, 1], [1, 0, 1, 1], ["AV1"] * 4))
    assert (
        r["diff"] == 0
        and r["diff_ci"] == [0, 0]
        and r["mcnemar_p"] == 1
        and r["discordant"] == {"a_only": 0, "b_only": 0}
    )
    with pytest.raises(ValueError, match="same questions"):
        compare_records(_records([1, 0], [1, 0], ["AV1"] * 2)[:-1])


def test_side_specs(tmp_path):
    path = fr.save_params(fr.apply_param_overrides(None, ["alpha.OBLIGATIONS=0.1"]), tmp_path / "p.json")
    s, p, d = resolve_side("default")
    assert s.name == "fr-full" and p is None
    s, p, d = resolve_side("fr-global-alpha", ["global_alpha=0.3"])
    assert s.name == "fr-global-alpha" and d["changes_from_default"] == {"global_alpha": 0.3}
    s, p, d = resolve_side(str(path))
    assert s.name == "fr-full" and d["changes_from_default"] == {"alpha.OBLIGATIONS": 0.1}
    s, p, d = resolve_side(f"fr-collapsed-3:{path}")
    assert s.name == "fr-collapsed-3" and d["params_file"] == str(path)
    with pytest.raises(fr.ParamsError, match="--b: 'fr-nope' is neither a system"):
        resolve_side("fr-nope", (), "--b")
    with pytest.raises(fr.ParamsError, match="--a-param: alpha.OBLIGATIONS: must lie in"):
        resolve_side("default", ["alpha.OBLIGATIONS=2"], "--a")


def test_run_compare_matches_the_benchmark(gen_suites, hash_embedder, tmp_path):
    """A parameter file against the defaults: the pass rates are those of two `fr bench run`s,
    and the paired numbers follow from their per-question records."""
    suites, emb = gen_suites, hash_embedder
    changed = fr.apply_param_overrides(None, ["alpha.*=1", "rate.*=0.05"])
    path = fr.save_params(changed, tmp_path / "p.json")
    r = run_compare(suites, emb, "default", str(path), progress=False, n_boot=2000)
    ref_a = run_benchmark(suites, ["fr-full"], emb, keep_terms=False, progress=False)
    ref_b = run_benchmark(suites, ["fr-full"], emb, base_params=changed, keep_terms=False, progress=False)
    pa = np.array([q["passed"] for q in ref_a["questions"]])
    pb = np.array([q["passed"] for q in ref_b["questions"]])
    assert r["pass_a"] == pytest.approx(pa.mean()) and r["pass_b"] == pytest.approx(pb.mean())
    assert pa.mean() != pb.mean(), "the two sides should differ on this suite"
    assert r["discordant"] == {"a_only": int((pa & ~pb).sum()), "b_only": int((pb & ~pa).sum())}
    assert r["n_questions"] == pa.size and r["sides"]["b"]["params_file"] == str(path)
    same = run_compare(suites, emb, "default", "fr-full", progress=False, n_boot=200)
    assert same["diff"] == 0 and same["mcnemar_p"] == 1


def test_cli_writes_the_contract(tmp_path, capsys):
    from frcore.cli import main

    out = tmp_path / "c.json"
    argv = [
        "compare",
        "--suite",
        "synthetic",
        "--personas",
        "1",
        "--embedder",
        "hash",
        "--a",
        "default",
        "--b",
        "fr-global-alpha",
        "--b-param",
        "global_alpha=0.9",
        "--n-boot",
        "500",
        "--json",
        str(out),
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "McNemar p (exact)" in printed and "| AV1 |" in printed
    r = json.loads(out.read_text())
    assert {
        "a",
        "b",
        "pass_a",
        "pass_b",
        "diff_ci",
        "mcnemar_p",
        "discordant",
        "per_av",
        "discordant_questions",
    } <= set(r)
    assert r["a"] == "default" and r["b"] == "fr-global-alpha" and set(r["discordant"]) == {"a_only", "b_only"}
    assert len(r["diff_ci"]) == 2 and r["diff_ci"][0] <= r["diff"] <= r["diff_ci"][1]
