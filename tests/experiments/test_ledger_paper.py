"""The rows of the paper's empirical claims (experiments/ledger_paper.py) on hand-built results whose
verdicts are known by construction: :func:`paper_files` (tests/support/ledger.py) adds to the ledger's
constructed results what every one of these rows needs to be reproduced, and each mutation below
moves one figure across its row's rule."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from support.ledger import _q, base_results

from experiments import ledger, ledger_base, ledger_paper as lp


def _base() -> dict:
    return base_results()


def _rows(tmp: Path, files: dict) -> dict:
    tmp.mkdir(parents=True, exist_ok=True)
    for name, obj in files.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(json.dumps(obj))
    return {r["id"]: r for r in ledger.evaluate(tmp)}


PAPER_IDS = [r.id for r in lp.paper_rows()]


def test_the_rows_are_in_the_ledger_and_empirical():
    ids = [r.id for r in ledger.LEDGER]
    assert set(PAPER_IDS) <= set(ids) and len(ids) == len(set(ids))
    assert all(r.kind == "empirical" for r in ledger.LEDGER if r.id in PAPER_IDS)
    assert len(PAPER_IDS) == 11


def test_every_paper_row_reproduced_on_the_constructed_results(tmp_path):
    rows = _rows(tmp_path, _base())
    bad = {k: (rows[k]["check"], rows[k]["verdict"], rows[k]["reason"]) for k in PAPER_IDS}
    bad = {k: v for k, v in bad.items() if v[:2] != ("pass", "reproduced")}
    assert not bad
    w = rows["a12_on_data"]["witness"]
    assert w["vs_flat-cosine"]["predicted"] == pytest.approx(10 / 67)
    assert w["vs_overwrite"]["predicted"] == pytest.approx(5 / 67)
    assert rows["staleness_vs_overwrite"]["witness"]["ratio"] == pytest.approx(12 / 7)
    assert rows["top10_pass"]["witness"]["pass_given_hit10"] == pytest.approx(60 / 63)


def _bench(f):
    def m(files):
        f(files["bench.json"])

    return m


def _flip(system, av, n, file="bench.json", field="passed", value=None):
    """Set ``field`` of the first n questions of ``system`` on ``av`` (default: negate it)."""

    def m(files):
        k = 0
        for q in files[file]["questions"]:
            if q["system"] == system and q["attack_vector"].startswith(av) and k < n:
                q[field] = (not q[field]) if value is None else value
                k += 1

    return m


def _per_av_set(system, av, v, file="bench.json"):
    def m(files):
        files[file]["systems"][system]["per_av"][av]["pass"] = v

    return m


def _pooled(**kw):
    def m(files):
        files[lp.CALIBRATE_FOLDS]["pooled"].update(kw)

    return m


def _jaccard(kind, rate, v):
    def m(files):
        files["sweep_noise.json"]["summary"][kind][rate]["jaccard"][0] = v

    return m


def _terms(system, activation, av="AV1"):
    def m(files):
        for q in files[lp.BENCH_PAPER]["questions"]:
            if q["system"] == system and q["attack_vector"].startswith(av):
                q["terms"] = [{"age": 1000.0, "activation": activation}]

    return m


CASES = [
    # §6.5: untyped 9 of 67 behind fr-full: CI reaches below −6 pp, excludes 0 → core fails
    ("untyped_equivalent", _flip("fr-untyped", "AV3", 9), "not reproduced"),
    # §6.5: 3 behind and 2 ahead: the CI contains 0 but reaches below −6 pp (absence of a difference is not
    # equivalence)
    (
        "untyped_equivalent",
        lambda f: _set_passed(f, "fr-untyped", {"AV3-x": 3}, {"AV2-20", "AV2-21"}),
        "not reproduced",
    ),
    # C.6: the cognitive partition ahead on 5 of 9 → behind on more than ahead
    ("cognitive_partition", _per_av_set("fr-cognitive-partition", "AV1", 0.95, lp.BENCH_PAPER), "partly reproduced"),
    (
        "cognitive_partition",
        lambda f: [_per_av_set("fr-cognitive-partition", a, 0.95, lp.BENCH_PAPER)(f) for a in ("AV1", "AV3", "AV4")],
        "not reproduced",
    ),
    # A.12: flat cosine passes 7 of its stale questions → observed gap shrinks, prediction unchanged
    ("a12_on_data", _flip("flat-cosine", "AV1", 7), "partly reproduced"),
    # A.12: fr-full passes its contaminated questions → p1 = p0 for fr-full (core)
    ("a12_on_data", _flip("fr-full", "AV2", 27, value=True), "not reproduced"),
    # §6.2: every failure had a correct edge in the top 10 (and pass given one falls to 89.6%)
    ("top10_pass", _flip("fr-full", "AV2", 27, field="outcome", value={"hit10": True}), "not reproduced"),
    # §6.2: the 3 failures with a correct edge missed it instead: pass given one is 100%
    ("top10_pass", lambda f: _miss(f, range(20, 23)), "partly reproduced"),
    # D.8: overwrite as stale as fr-full → CI not above 0, ratio 1
    ("staleness_vs_overwrite", lambda f: _restale_overwrite(f), "not reproduced"),
    # D.8: overwrite stale on one question more than fr-full: ahead, but the CI reaches 0 (ratio 1.14)
    ("staleness_vs_overwrite", lambda f: _restale_overwrite(f, 19), "not reproduced"),
    # §5: a baseline leads AV4; AV9 more than 2 pp behind
    ("av_leaders", _per_av_set("bm25", "AV4", 0.95), "partly reproduced"),
    ("av_leaders", _per_av_set("overwrite", "AV9", 0.93), "partly reproduced"),
    ("av_leaders", _per_av_set("bm25", "AV1", 0.9), "partly reproduced"),  # a tie on AV1 is no lead
    # §5: AV7 no longer the lowest (AV5 lower); then 5% moved to 40%
    ("av7_retrieval", _per_av_set("fr-full", "AV5", 0.01), "not reproduced"),
    ("av7_retrieval", _per_av_set("fr-full", "AV7", 0.4), "partly reproduced"),
    # H: the numeric switches change 2 of 20 AV8 questions: +10 pp, the CI reaches 0; then none
    ("numeric_rescue", _flip("fr-no-numeric", "AV8", 4, file=lp.BENCH_PAPER), "partly reproduced"),
    ("numeric_rescue", _flip("fr-no-numeric", "AV8", 6, file=lp.BENCH_PAPER), "not reproduced"),
    # I: the floored configuration still squats
    ("rate_squatting", _terms("fr-rates-800x-floor", 0.5), "partly reproduced"),
    # I: the 800× configuration loses 2 of 40: behind, but the CI reaches 0
    ("rate_squatting", _flip("fr-rates-800x", "AV1", 6, file=lp.BENCH_PAPER), "not reproduced"),
    # I: the 800× configuration loses nothing
    ("rate_squatting", _flip("fr-rates-800x", "AV1", 8, file=lp.BENCH_PAPER), "not reproduced"),
    # §6.7: category noise as damaging as slot keys at 0.3 (ties are not "most")
    ("noise_slot_most_damaging", _jaccard("category", "0.3", 0.77), "partly reproduced"),
    ("noise_slot_most_damaging", _jaccard("category", "0.1", 0.5), "not reproduced"),
    # holdout: a 3 pp loss out of fold (the rule reads |diff|, either sign)
    ("holdout_folds", _pooled(diff=-0.03, diff_ci=[-0.05, -0.01]), "not reproduced"),
    ("holdout_folds", _pooled(diff=0.03, diff_ci=[0.01, 0.05]), "not reproduced"),
    ("holdout_folds", _pooled(diff=0.01, diff_ci=[-0.04, 0.05]), "partly reproduced"),
]


def _miss(files, idx):
    for q in files["bench.json"]["questions"]:
        if q["system"] == "fr-full" and q["id"] in {f"AV2-{i}" for i in idx}:
            q["outcome"] = {"hit10": False}


def _restale_overwrite(files, first=20):
    for q in files["bench.json"]["questions"]:
        if q["system"] == "overwrite" and q["id"].startswith("AV2"):
            q["stale"] = int(q["id"].split("-")[1]) >= first


def _set_passed(files, system, fail: dict[str, int], passing: set[str]):
    """``system`` fails the first n of each base attack vector in ``fail`` and passes the ids in ``passing``."""
    left = dict(fail)
    for q in files["bench.json"]["questions"]:
        if q["system"] != system:
            continue
        if left.get(q["attack_vector"][:3] + "-x", 0) > 0 and not q["id"].startswith("AV2"):
            q["passed"] = False
            left[q["attack_vector"][:3] + "-x"] -= 1
        if q["id"] in passing:
            q["passed"] = True


@pytest.mark.parametrize("row,mutate,expected", CASES)
def test_row_verdict_moves_across_its_rule(tmp_path, row, mutate, expected):
    files = _base()
    mutate(files)
    r = _rows(tmp_path, files)[row]
    assert (r["check"], r["verdict"]) == ("pass", expected), r["reason"]


@pytest.mark.parametrize(
    "missing", [lp.BENCH_PAPER, lp.CALIBRATE_FOLDS, "sweep_noise.json"], ids=["bench_paper", "folds", "noise"]
)
def test_a_missing_results_file_is_a_check_error(tmp_path, missing):
    files = _base()
    del files[missing]
    rows = _rows(tmp_path, files)
    readers = {
        lp.BENCH_PAPER: {"cognitive_partition", "numeric_rescue", "rate_squatting"},
        lp.CALIBRATE_FOLDS: {"holdout_folds"},
        "sweep_noise.json": {"noise_slot_most_damaging"},
    }[missing]
    assert {k for k in PAPER_IDS if rows[k]["check"] == "error"} == readers


def test_squatting_share_needs_score_terms():
    with pytest.raises(ledger.MissingResult):
        lp.squatting_share([{"terms": []}])
    recs = [{"terms": [{"age": 720.0, "activation": 0.1}, {"age": 719.0, "activation": 1.0}]}]
    recs.append({"terms": [{"age": 5000.0, "activation": 0.099}, {"age": 5000.0, "activation": 0.2}]})
    assert lp.squatting_share(recs) == 0.5  # the first and the last item: a month old and still active


def test_mde_paired_by_hand():
    # (1.959964 + 0.841621) · √(0.2 / 100)
    assert lp.mde_paired(100, 20) == pytest.approx(2.801585 * math.sqrt(0.002), rel=1e-5)
    assert lp.mde_paired(100, 0) == lp.mde_paired(100, 1)  # none observed: one assumed
    assert lp.mde_paired(400, 80) == pytest.approx(lp.mde_paired(100, 20) / 2)
    assert math.isnan(lp.mde_paired(0, 0))


def test_the_800x_configuration_spans_the_papers_rates():
    from frcore import CATEGORY_NAMES
    from frcore.bench import SYSTEMS

    default = np.asarray(SYSTEMS["fr-full"].params().rates, dtype=np.float64)
    fast = np.asarray(SYSTEMS["fr-rates-800x"].params().rates, dtype=np.float64)
    floor = np.asarray(SYSTEMS["fr-rates-800x-floor"].params().rates, dtype=np.float64)
    i, lg = CATEGORY_NAMES.index("IDENTITY_SELF_CONCEPT"), CATEGORY_NAMES.index("LOGISTICAL_CONTEXT")
    assert fast[i] == pytest.approx(0.0001) and fast[lg] == pytest.approx(0.080)
    assert fast.max() / fast.min() == pytest.approx(800)
    assert (np.argsort(default, kind="stable") == np.argsort(fast, kind="stable")).all()  # order kept
    assert floor.min() == pytest.approx(0.003) and np.allclose(floor, np.maximum(fast, 0.003))


def test_no_numeric_switches_off_exemption_and_rescue_only():
    from dataclasses import replace

    from frcore.bench import DEFAULT_SYSTEMS, SYSTEMS

    full, off = SYSTEMS["fr-full"].pipeline, SYSTEMS["fr-no-numeric"].pipeline
    assert off.score.numeric_exemption is False and off.score.numeric_rescue is False
    assert replace(off, score=replace(off.score, numeric_exemption=True, numeric_rescue=True)) == full
    assert not {"fr-no-numeric", "fr-rates-800x", "fr-rates-800x-floor"} & set(DEFAULT_SYSTEMS)


def test_a12_prediction_uses_the_pooled_rates_by_hand(tmp_path):
    # fr-full: 8 clean (7 pass), 2 contaminated (1 pass); flat cosine: 6 clean (5 pass), 4 contaminated (1 pass)
    spec = {"fr-full": (8, 7, 2, 1), "flat-cosine": (6, 5, 4, 1), "overwrite": (8, 7, 2, 1)}
    qs = []
    for s, (nc, pc, ns, ps) in spec.items():
        flags = [(False, i < pc) for i in range(nc)] + [(True, i < ps) for i in range(ns)]
        qs += [_q(s, i, "AV1", ok, stale=z) for i, (z, ok) in enumerate(flags)]
    (tmp_path / "bench.json").write_text(json.dumps({"systems": {}, "questions": qs}))
    w = lp._a12(ledger.Results(tmp_path))
    # pooled p0 = 12/14, p1 = 2/6; predicted (0.4 − 0.2)(6/7 − 1/3) = 11/105; observed 0.8 − 0.6
    assert (w["vs_flat-cosine"]["p0"], w["vs_flat-cosine"]["p1"]) == (pytest.approx(6 / 7), pytest.approx(1 / 3))
    assert w["vs_flat-cosine"]["predicted"] == pytest.approx(11 / 105)
    assert w["vs_flat-cosine"]["observed"] == pytest.approx(0.2)
    assert w["vs_overwrite"]["predicted"] == pytest.approx(0.0)
    assert w["fr-full"] == {"n": 10, "pi": 0.2, "p0": 7 / 8, "p1": 0.5, "pass": 0.8}


def test_numeric_rescue_diagnosis_reads_sigma_against_the_rescue_threshold(tmp_path):
    files = _base()
    _flip("fr-no-numeric", "AV8", 6, file=lp.BENCH_PAPER)(files)  # the switches change nothing
    for q in files["bench.json"]["questions"]:
        if q["system"] == "fr-full" and q["attack_vector"].startswith("AV8"):  # σ = 0.9 ≥ 0.85 and 0.5 < 0.85
            q["terms"] = [{"activation": 0.0, "sim_linked": s, "sim_bm25": s} for s in (0.9, 0.5)]
    r = _rows(tmp_path, files)["numeric_rescue"]
    assert r["verdict"] == "not reproduced"
    assert "on 50.0% of fr-full's 20 AV8 top-10 items" in r["diagnosis"]["summary"]
    assert "change 0 of 20 AV8 outcomes" in r["diagnosis"]["summary"]


def test_every_paired_comparison_of_the_ledger_carries_its_mde(tmp_path):
    """experiments.ledger's paired comparisons (static_zero_cost, the D.6 ablation) report the MDE at
    their n from the discordant questions: 10 questions, 3 discordant (by construction)."""
    a = [1, 1, 1, 0, 1, 0, 1, 1, 0, 1]
    b = [1, 0, 1, 0, 0, 0, 1, 1, 1, 1]  # differs at 1, 4, 8
    qs = [
        {"system": s, "persona": "p", "id": f"q{i}", "attack_vector": "AV3", "passed": bool(v)}
        for s, col in (("fr-full", a), ("flat-cosine", b))
        for i, v in enumerate(col)
    ]
    (tmp_path / "bench.json").write_text(json.dumps({"questions": qs}))
    w = ledger_base.paired(ledger.Results(tmp_path), "fr-full", "flat-cosine")
    assert w["n"] == 10
    assert w["mde"] == pytest.approx(2.801585 * math.sqrt(0.3 / 10), rel=1e-5)
