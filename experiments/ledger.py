"""The reproduction ledger (SPEC §8): each paper claim, the rule that decides its verdict, our
figure from a ``fr reproduce`` results folder, and a diagnosis where it is not reproduced.

A row's **check** is ``pass`` when the results it reads exist and parse (``error`` otherwise:
the part that should have written them failed); its **verdict** is decided by the row's
:class:`~theory.verdict.Rule`, stated here before any run. Rows that restate a theory claim
take that claim's check, verdict, reason and diagnosis from ``theory.json``.

The paper's own figures live here once (:data:`PAPER`); sweeps and figure scripts read them.
"""

from __future__ import annotations

import json
import math
import traceback
from pathlib import Path
from typing import Any

import numpy as np

from experiments.ledger_base import MissingResult, Results, Row, bench_regime, paired
from experiments.ledger_paper import paper_rows
from theory.rule_record import provenance
from theory.verdict import (
    EMPIRICAL,
    ERROR,
    FORMAL,
    NOT_COMPARABLE,
    PASS,
    REPRODUCED,
    Rule,
    headline,
    holds,
    unverified,
    within,
)

#: The paper's figures each ledger row is compared with (§D.9, §I, §K, §B.1.2, §6.7, §6.6, §D.6, §7, §T).
PAPER: dict[str, dict] = {
    "latency": {"median_us_k20": 47.0, "slope_ns": 1960.0, "linear_to_k": 1000},
    "multiplier": {"n_whole_range": 10, "RELATIONAL_BONDS": [0.33, 4.0], "whole_range": [0.25, 4.0]},
    "alpha": {"fine_all_fail_bonferroni": True, "bonferroni_threshold": 0.0056, "uniform_alpha_0.3_AV8": 0.125},
    "noise": {"slot_key": {"tau": 0.997, "jaccard": 0.76}},
    "labels": {
        "0.1": {"jaccard": 0.974, "jaccard_sd": 0.002, "displaced": 0.29},
        "0.5": {"jaccard": 0.905, "tau": 0.897},
    },
    "granularity": {"saturates_near": 7},
    "ablation_d6": {"fr-full": 72.9, "fr-no-routing": 66.7, "fr-uniform-decay": 66.5, "flat-cosine": 60.7},
    "ablation_d6_names": {
        "fr-full": "full",
        "fr-no-routing": "no-routing",
        "fr-uniform-decay": "uniform decay",
        "flat-cosine": "baseline",
    },
    "floors": {"hit1_without": 0.19, "hit1_with": 0.31},
    "holdout": {"calibrated": 0.770, "default": 0.768},
}

#: The attack vectors of the paper's "zero cost on static retrieval" (nothing changes in them).
STATIC_AVS = ("AV3", "AV5", "AV8")
#: Non-inferiority margin of "zero cost": the largest loss against flat cosine still called none.
STATIC_MARGIN = 0.05


# --------------------------------------------------------------------------- helpers


def _pct(x) -> str:
    return "–" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{100 * float(x):.1f}%"


def _per_av(results: Results, system: str, file: str = "bench.json") -> dict[str, float]:
    return {k: v["pass"] for k, v in results.system(system, file)["per_av"].items()}


def sigma_variant(results: Results) -> dict | None:
    """The σ-scale diagnosis run (``diagnosis_sigma.json``: the same suite with σ max-normalised per
    query), per system overall and per attack vector; None if it was not run."""
    d = results.optional("diagnosis_sigma.json")
    if not d:
        return None
    return {
        name: {
            "pass": s["overall"]["pass"],
            "staleness": s["overall"]["staleness"],
            "hit@1": s["overall"]["hit@1"],
            "per_av": {k: v["pass"] for k, v in s["per_av"].items()},
        }
        for name, s in d["systems"].items()
    }


# --------------------------------------------------------------------------- rows


def _latency(r: Results) -> dict:
    d = r.get("latency.json")
    pts = sorted((x["k"], x["median_us"]) for x in d.get("results", []) if x.get("impl") == "jax")
    k20 = next((m for k, m in pts if k == 20), None)
    if k20 is None:
        raise MissingResult("latency.json has no jax row at k = 20")
    lin = [(k, m) for k, m in pts if k <= PAPER["latency"]["linear_to_k"]]
    k, m = np.array(lin, dtype=np.float64).T
    fit = np.polyfit(k, m, 1)
    ss_res = float(((m - np.polyval(fit, k)) ** 2).sum())
    ss_tot = float(((m - m.mean()) ** 2).sum())
    loglog = float(np.polyfit(np.log(k), np.log(m), 1)[0]) if len(k) > 1 else float("nan")
    return {
        "median_us_k20": k20,
        "slope_ns": d.get("slope_ns", {}).get("jax"),
        "r2_to_1000": 1 - ss_res / ss_tot if ss_tot > 0 else 1.0,
        "loglog_slope_to_1000": loglog,
        "ks": [int(x) for x in k],
        "cpu_dispatch": (d.get("machine") or {}).get("cpu_dispatch"),
    }


#: the linear-fit part of "linear to k = 1,000": a least-squares line explains at least this share of variance
LATENCY_R2 = 0.9
#: the O(k) part: the log–log slope of the median on k is at most this
LATENCY_LOGLOG = 1.1


def _latency_median(w):
    return holds(
        "median at k = 20 at most the paper's 47 μs",
        w["median_us_k20"] <= PAPER["latency"]["median_us_k20"],
        f"ours {w['median_us_k20']:.1f} μs",
    )


def _latency_slope(w):
    return holds(
        "per-candidate slope at most the paper's 1.96 μs",
        w["slope_ns"] is not None and w["slope_ns"] <= PAPER["latency"]["slope_ns"],
        f"ours {w['slope_ns']:.1f} ns" if w["slope_ns"] is not None else "ours –",
    )


def _latency_linear_fit(w):
    return holds(
        f"linear in k up to 1,000 (R² ≥ {LATENCY_R2} of a least-squares line)",
        w["r2_to_1000"] >= LATENCY_R2,
        f"R² = {w['r2_to_1000']:.3f} over k = {w['ks'][0]}…{w['ks'][-1]}",
    )


def _latency_loglog(w):
    return holds(
        f"at most linear in k up to 1,000 (log–log slope of the median on k ≤ {LATENCY_LOGLOG})",
        w["loglog_slope_to_1000"] <= LATENCY_LOGLOG,
        f"log–log slope {w['loglog_slope_to_1000']:.3f} over k = {w['ks'][0]}…{w['ks'][-1]}",
    )


def _latency_parts(w):
    """Median and slope bounds, and both parts of "linear to k = 1,000": a straight line fits
    (R² ≥ 0.9) and the growth is at most linear (log–log slope ≤ 1.1; a flat curve passes this
    part alone)."""
    return [_latency_median(w), _latency_slope(w), _latency_linear_fit(w), _latency_loglog(w)]


def _multiplier(r: Results) -> dict:
    d = r.get("sweep_multiplier.json")
    per = d["per_category"]
    return {
        "n_whole_range": d["n_whole_range"],
        "not_whole": {c: v["feasible"] for c, v in per.items() if not v["whole_range"]},
        "min_jaccard": {c: min(v["jaccard"]) for c, v in per.items()},
    }


def _multiplier_parts(w):
    nw = w["not_whole"]
    return [
        holds(
            "at least 10 of 11 categories tolerate 0.25x–4x (Jaccard@10 ≥ 0.95)",
            w["n_whole_range"] >= 10,
            f"ours {w['n_whole_range']} of 11",
            core=True,
        ),
        holds(
            "the exception is RELATIONAL_BONDS at 0.33x–4x",
            list(nw) == ["RELATIONAL_BONDS"] and nw["RELATIONAL_BONDS"] == [0.33, 4.0],
            "ours: " + (", ".join(f"{c} {v}" for c, v in nw.items()) or "no exception"),
        ),
    ]


def _labels(r: Results) -> dict:
    s = r.get("sweep_labels.json")["summary"]["label_pair"]
    return {rate: {m: s[rate][m][0] for m in ("jaccard", "tau", "displaced_per_query")} for rate in s}


def _labels_parts(w):
    p = PAPER["labels"]
    return [
        within("Jaccard@10 at 10% perturbation", w.get("0.1", {}).get("jaccard"), p["0.1"]["jaccard"], atol=0.02),
        within("Jaccard@10 at 50%", w.get("0.5", {}).get("jaccard"), p["0.5"]["jaccard"], atol=0.03),
        within("Kendall τ at 50%", w.get("0.5", {}).get("tau"), p["0.5"]["tau"], atol=0.03),
    ]


def _noise(r: Results) -> dict:
    s = r.get("sweep_noise.json")["summary"]["slot_key"]
    top = max(s, key=float)
    return {
        "rate": float(top),
        "tau": s[top]["tau"][0],
        "jaccard": s[top]["jaccard"][0],
        "all": {k: {m: v[m][0] for m in ("tau", "jaccard")} for k, v in s.items()},
    }


def _granularity(r: Results) -> dict:
    d = r.get("sweep_granularity.json")
    rows = {int(x["k"]): x["pass"] for x in d["rows"]}
    best = max(rows.values())
    k_sat = min(k for k, v in rows.items() if v >= best - 0.01)
    return {"pass_by_k": rows, "best": best, "k_saturation": k_sat, "cognitive_3": d.get("cognitive_3", {}).get("pass")}


def _ablation(r: Results) -> dict:
    out = {"pass": {s: r.system(s)["overall"]["pass"] for s in PAPER["ablation_d6"]}}
    out["paired"] = {s: paired(r, "fr-full", s) for s in ("fr-no-routing", "fr-uniform-decay", "flat-cosine")}
    return out


def _ablation_parts(w):
    names = PAPER["ablation_d6_names"]
    return [
        holds(
            f"full above {names[s]} (95% paired-bootstrap CI above 0)",
            w["paired"][s]["ci"][0] > 0,
            f"ours {100 * w['paired'][s]['diff']:+.1f} pp [{100 * w['paired'][s]['ci'][0]:+.1f}, "
            f"{100 * w['paired'][s]['ci'][1]:+.1f}], paper "
            f"{PAPER['ablation_d6']['fr-full'] - PAPER['ablation_d6'][s]:+.1f} pp",
        )
        for s in ("fr-no-routing", "fr-uniform-decay", "flat-cosine")
    ]


def _floors(r: Results) -> dict:
    return {
        "hit1_with": r.system("fr-full")["overall"]["hit@1"],
        "hit1_without": r.system("fr-no-floors")["overall"]["hit@1"],
    }


def _floors_parts(w):
    d = w["hit1_with"] - w["hit1_without"]
    return [
        holds(
            "floors raise Hit@1 by ≥ 5 pp (paper 19% → 31%)",
            d >= 0.05,
            f"ours {_pct(w['hit1_without'])} → {_pct(w['hit1_with'])} ({100 * d:+.1f} pp)",
            core=True,
        )
    ]


def _uniform_alpha(r: Results) -> dict:
    d = r.get("sweep_alpha.json")
    return {"av8_uniform_0_3": d["uniform_alpha_0.3_per_av"].get("AV8"), "av8_fr_full": d["fr_full_per_av"].get("AV8")}


def _uniform_alpha_parts(w):
    u, f = w["av8_uniform_0_3"], w["av8_fr_full"]
    return [
        holds(
            "AV8 falls by ≥ 30 pp under a uniform α = 0.3",
            u is not None and f is not None and f - u >= 0.30,
            f"ours {_pct(f)} → {_pct(u)}",
            core=True,
        ),
        within(
            "AV8 pass at uniform α = 0.3", u, PAPER["alpha"]["uniform_alpha_0.3_AV8"], atol=0.10, scale=100, unit="%"
        ),
    ]


def _bonferroni(r: Results) -> dict:
    d = r.get("sweep_alpha.json")["fine"]
    return {
        "threshold": d["bonferroni_threshold"],
        "significant": [x["alpha"] for x in d["rows"] if x["significant_bonferroni"]],
        "min_p": min(x["mcnemar_p"] for x in d["rows"]),
        "n": len(d["rows"]),
    }


def _bonferroni_parts(w):
    return [
        holds(
            "no fine-grid α differs from FR-full after Bonferroni",
            not w["significant"],
            f"ours smallest McNemar p = {w['min_p']:.3g} against {w['threshold']:.4f}; significant at α = "
            f"{w['significant'] or 'none'}",
            core=True,
        )
    ]


def _static(r: Results) -> dict:
    out: dict[str, dict | None] = {"pooled": paired(r, "fr-full", "flat-cosine", avs=STATIC_AVS)}
    for av in STATIC_AVS:
        try:
            out[av] = paired(r, "fr-full", "flat-cosine", avs=(av,))
        except MissingResult:
            out[av] = None
    return out


def _static_parts(w):
    p = w["pooled"]
    parts = [
        holds(
            "no cost on the pooled static questions (non-inferiority: 95% CI of fr-full − flat-cosine above "
            f"−{100 * STATIC_MARGIN:.0f} pp)",
            p["ci"][0] > -STATIC_MARGIN,
            f"ours {100 * p['diff']:+.1f} pp [{100 * p['ci'][0]:+.1f}, {100 * p['ci'][1]:+.1f}] over {p['n']} "
            "questions",
            core=True,
        )
    ]
    return parts + _static_per_av(w)


def _static_per_av(w):
    return [
        holds(
            f"{av}: no significant loss (McNemar p ≥ 0.05 or fr-full ahead)",
            w[av]["diff"] >= 0 or w[av]["mcnemar_p"] >= 0.05,
            f"ours {_pct(w[av]['a'])} vs {_pct(w[av]['b'])}, p = {w[av]['mcnemar_p']:.3g}, n = {w[av]['n']}",
        )
        for av in STATIC_AVS
        if w[av] is not None
    ]


def _holdout(r: Results) -> dict:
    d = r.get("sweep_holdout.json")
    return {
        "calibrated": d["calibrated_pass_test"],
        "default": d["default_pass_test"],
        "margin": d.get("calibration_margin"),
    }


def _holdout_parts(w):
    diff = w["calibrated"] - w["default"]
    return [
        holds(
            "calibrated α generalises: held-out pass within 2 pp of the default (paper +0.2 pp)",
            abs(diff) <= 0.02,
            f"ours {_pct(w['calibrated'])} vs {_pct(w['default'])} ({100 * diff:+.1f} pp; calibration margin "
            f"{w['margin']:.3g})",
            core=True,
        )
    ]


#: Where ``fr reproduce`` writes the LongMemEval run (``fr bench longmemeval --out``) in a results folder.
LME_SUMMARY = "longmemeval/summary.json"
#: Neutrality margin of "aggregate-neutral": the largest difference still called none.
LME_NEUTRAL_MARGIN = 0.03


def _lme_pair(r: Results, group: str, metric: str = "recall_all@10", level: str = "turn") -> dict:
    """fr-full − fr-lifecycle-off on one group of the LongMemEval summary's comparisons."""
    d = r.get(LME_SUMMARY)
    for c in d.get("comparisons", []):
        if (c["a"], c["b"], c["group"], c["level"], c["metric"]) == (
            "fr-full",
            "fr-lifecycle-off",
            group,
            level,
            metric,
        ):
            return c
    raise MissingResult(f"{LME_SUMMARY} has no {level} {metric} comparison of fr-full and fr-lifecycle-off on {group}")


def _lme_neutral(r: Results) -> dict:
    c = _lme_pair(r, "pooled")
    return {"diff": c["diff"], "ci": [c["ci_low"], c["ci_high"]], "n": c["n"], "on": c["mean_a"], "off": c["mean_b"]}


def _lme_neutral_parts(w):
    lo, hi = w["ci"]
    m = LME_NEUTRAL_MARGIN
    return [
        within(
            "point difference inside ±3 pp (paper +2.2 pp)", w["diff"], 0.0, atol=m, unit=" pp", scale=100, core=True
        ),
        holds(
            "95% paired-bootstrap CI inside ±3 pp",
            lo >= -m and hi <= m,
            f"CI [{100 * lo:+.1f}, {100 * hi:+.1f}] pp over {w['n']} questions",
        ),
    ]


def _lme_ku(r: Results) -> dict:
    try:
        c = _lme_pair(r, "knowledge-update")
    except MissingResult:
        if r.get(LME_SUMMARY).get("systems"):
            return {"not_measurable": "no knowledge-update question with gold evidence in the data"}
        raise
    ku = {s: r.get(LME_SUMMARY)["systems"][s]["knowledge_update"] for s in ("fr-full", "fr-lifecycle-off")}
    return {
        "diff": c["diff"],
        "ci": [c["ci_low"], c["ci_high"]],
        "n": c["n"],
        "on": c["mean_a"],
        "off": c["mean_b"],
        "newest_above_older": {s: v.get("newest_above_older_rate") for s, v in ku.items()},
        "n_dated": ku["fr-full"].get("n"),
    }


def _lme_ku_parts(w):
    lo, hi = w["ci"]
    return [
        holds(
            "direction: lifecycle on retrieves less on knowledge-update questions",
            w["diff"] < 0,
            f"fr-full {_pct(w['on'])} vs fr-lifecycle-off {_pct(w['off'])} ({100 * w['diff']:+.1f} pp, {w['n']} "
            "questions)",
            core=True,
        ),
        holds("95% paired-bootstrap CI below 0", hi < 0, f"CI [{100 * lo:+.1f}, {100 * hi:+.1f}] pp"),
    ]


def _lme_ku_ours(w) -> str:
    if "not_measurable" in w:
        return w["not_measurable"]
    nao = w["newest_above_older"]
    return (
        f"recall_all@10 fr-full {_pct(w['on'])} vs fr-lifecycle-off {_pct(w['off'])}: {100 * w['diff']:+.1f} pp "
        f"[{100 * w['ci'][0]:+.1f}, {100 * w['ci'][1]:+.1f}] over {w['n']} questions; newest evidence above the older "
        f"{_pct(nao['fr-full'])} vs {_pct(nao['fr-lifecycle-off'])} ({w['n_dated']} questions with evidence on two "
        "or more dates)"
    )


def _lme_absolute(r: Results) -> dict:
    s = r.get(LME_SUMMARY)["systems"]
    return {
        name: {
            "n": s[name]["pooled_evaluable"]["n"],
            **{k: s[name]["pooled_evaluable"]["turn"][k] for k in ("recall_any@10", "recall_all@10")},
        }
        for name in ("fr-full", "fr-lifecycle-off", "lme-bm25")
        if name in s
    }


# --------------------------------------------------------------------------- diagnoses


def _regime_diagnosis(results: Results, w: dict, *, avs=None, note: str = "") -> dict:
    out: dict[str, Any] = {"score_regime": bench_regime(results, avs=avs)}
    sv = sigma_variant(results)
    if sv:
        out["sigma_max_variant"] = sv
    out["summary"] = note.format_map(_regime_numbers(out, results)) if note else ""
    return out


def _regime_numbers(out: dict, results: Results) -> dict:
    reg = out["score_regime"]
    sv = out.get("sigma_max_variant") or {}
    nums = {
        "a0": _pct(reg.get("share_activation_below_0_01")),
        "smax": f"{reg.get('sigma_max', float('nan')):.2f}",
        "sp99": f"{reg.get('sigma_p99', float('nan')):.2f}",
        "floor": _pct(reg.get("share_floor_can_fire")),
    }
    for name, s in sv.items():
        key = name.replace("-", "_")
        nums[f"{key}_hit1"] = _pct(s["hit@1"])
        nums[f"{key}_pass"] = _pct(s["pass"])
        for av, v in s["per_av"].items():
            nums[f"{key}_{av}"] = _pct(v)
    for sysname in ("fr-global-alpha", "flat-cosine", "fr-full"):
        try:
            s = results.system(sysname)
            nums[f"{sysname.replace('-', '_')}_pass"] = _pct(s["overall"]["pass"])
            for av, v in s["per_av"].items():
                nums[f"{sysname.replace('-', '_')}_{av}"] = _pct(v["pass"])
        except MissingResult:
            pass
    return _Default(nums)


class _Default(dict):
    def __missing__(self, key):
        return "–"


def _diag_floors(results, w):
    return _regime_diagnosis(
        results,
        w,
        note=(
            "σ never reaches the floor's 0.95 on this suite (max {smax}, 99th percentile {sp99} over fr-full's top-10; "
            "floor can fire on "
            "{floor} of items), so floors change nothing. With σ max-normalised per query (σ scale) Hit@1 is "
            "{fr_sigma_max_hit1} with "
            "floors and {fr_sigma_max_no_floors_hit1} without."
        ),
    )


def _diag_static(results, w):
    return _regime_diagnosis(
        results,
        w,
        note=(
            "activation is below 0.01 for {a0} of fr-full's top-10 items: for an old stable fact the blend is (1 − "
            "α_c)·σ, while a fresh "
            "turn keeps α·a ≈ α, so recency lifts fresh distractors over stable facts. flat cosine AV3 "
            "{flat_cosine_AV3} / AV5 "
            "{flat_cosine_AV5} / AV8 {flat_cosine_AV8}; fr-full {fr_full_AV3} / {fr_full_AV5} / {fr_full_AV8}; σ "
            "max-normalised "
            "(σ scale) {fr_sigma_max_AV3} / {fr_sigma_max_AV5} / {fr_sigma_max_AV8}; one global α (the score) "
            "{fr_global_alpha_AV3} / "
            "{fr_global_alpha_AV5} / {fr_global_alpha_AV8}."
        ),
    )


def _diag_collapsed(results, w):
    return _regime_diagnosis(
        results,
        w,
        note=(
            "activation is below 0.01 for {a0} of fr-full's top-10 items, so decay rates barely reach the ranking and "
            "a high α_c acts as "
            "a per-category penalty (1 − α_c)·σ: one global α passes {fr_global_alpha_pass} against fr-full's "
            "{fr_full_pass}. With σ "
            "max-normalised per query (σ scale) fr-full passes {fr_sigma_max_pass}."
        ),
    )


def _diag_uniform_alpha(results, w):
    return _regime_diagnosis(
        results,
        w,
        avs=("AV8",),
        note=(
            "on AV8 questions activation is below 0.01 for {a0} of top-10 items: a uniform α = 0.3 then scales every σ "
            "by 0.7 and keeps "
            "the σ order, which is flat cosine's order (AV8 {flat_cosine_AV8}); the paper's drop needs activations "
            "that differ across "
            "the numeric facts and their competitors."
        ),
    )


def _diag_multiplier(results, w):
    out = _regime_diagnosis(
        results,
        w,
        note=(
            "activation is below 0.01 for {a0} of fr-full's top-10 items, so a category's rate reaches the ranking "
            "only through its "
            "recent facts; "
        ),
    )
    worst = {c: round(w["min_jaccard"][c], 4) for c in w["not_whole"]}
    out["summary"] += (
        "the categories outside 0.25x–4x and their lowest mean Jaccard@10: "
        + (str(worst) if worst else "none")
        + " (the paper's exception is RELATIONAL_BONDS at 0.33x)"
    )
    return out


def _diag_labels(results, w):
    return _regime_diagnosis(
        results,
        w,
        note=(
            "moving a fact to its confused partner changes its α_c, floor and rate; with activation below 0.01 for "
            "{a0} of fr-full's "
            "top-10 items and the floor never reached (σ max {smax}), only the factor (1 − α_c) of its blend moves, so "
            "the measured "
            "Jaccard and τ reflect α differences inside the confused pairs."
        ),
    )


def _diag_holdout(results, w):
    out = _regime_diagnosis(results, w)
    m = w.get("margin")
    out["summary"] = (
        f"the calibration program is infeasible on the training half (max-margin t = {m:.3g} < 0; theory A.15), so "
        "the 'calibrated' α is the least-violating point of an infeasible program, not a calibration that meets its "
        "requirements; its held-out pass differs from the default's by more than the paper's 0.2 pp"
        if m is not None and m < 0
        else "calibration feasible on the training half; the held-out difference is data"
    )
    return out


def _diag_latency(results, w):
    import frcore

    d = results.get("latency.json")
    pts = sorted(
        (x["k"], x["median_us"])
        for x in d.get("results", [])
        if x.get("impl") == "jax" and x["k"] <= PAPER["latency"]["linear_to_k"]
    )
    b, m = np.array([(frcore.bucket_size(k), t) for k, t in pts], dtype=np.float64).T
    fit = np.polyfit(b, m, 1)
    ss_res, ss_tot = float(((m - np.polyval(fit, b)) ** 2).sum()), float(((m - m.mean()) ** 2).sum())
    r2 = 1 - ss_res / ss_tot if ss_tot > 0 else 1.0
    floor = [x["median_us"] for x in d.get("dispatch_floor", []) if x.get("k") == 20]
    ks = [k for k, _ in pts]
    drops = [(ks[n], ks[n + 1]) for n in range(len(pts) - 1) if m[n + 1] < m[n]]
    return {
        "r2_on_k": w["r2_to_1000"],
        "r2_on_bucket_size": r2,
        "dispatch_floor_us_k20": floor[0] if floor else None,
        "decreasing_steps": drops,
        "summary": f"R² of a line is {w['r2_to_1000']:.3f} on k and {r2:.3f} on the padded bucket size the kernel runs "
        "on; "
        f"{len(drops)} of {len(pts) - 1} steps in k are faster than the step before ({drops}), i.e. timing noise of "
        "the same size as the kernel's own cost, above a dispatch floor of "
        + (f"{floor[0]:.1f} μs" if floor else "–")
        + " at k = 20 (a trivial executable on the same inputs)",
    }


LEDGER: tuple[Row, ...] = (
    Row(
        "latency",
        "47 μs median at k=20; 1.96 μs/candidate; linear to k=1000",
        "latency scaling",
        EMPIRICAL,
        Rule(
            "reproduced if our jitted kernel's median at k = 20 is at most 47 μs, its per-candidate slope at most 1.96 "
            "μs, and median latency up to k = 1,000 is linear in k (R² ≥ 0.9 of a least-squares line) and grows at "
            "most linearly (log–log slope ≤ 1.1), both parts of 'linear to k = 1,000'; timings are of this machine, "
            "so only 'at most' is compared",
            _latency_parts,
        ),
        _latency,
        lambda w: (
            f"{w['median_us_k20']:.1f} μs at k=20; {w['slope_ns']:.1f} ns/candidate; R² of a line "
            f"{w['r2_to_1000']:.3f}, log–log slope {w['loglog_slope_to_1000']:.2f} to k=1,000"
        ),
        _diag_latency,
    ),
    Row("thm1", "P_e ≥ 1/2 for (σ, Δt) scorers", "theory", FORMAL, claim="thm1"),
    Row("thm2", "basis (c, κ, ξ, h) sufficient and minimal", "theory", FORMAL, claim="thm2"),
    Row("thm3p", "Theorem 3′ event-time oblivion", "theory", FORMAL, claim="thm3p"),
    Row("thm3pp", "Theorem 3″ retraction oblivion", "theory", FORMAL, claim="thm3pp"),
    Row(
        "a10_global_alpha",
        "99.8% of 1,566 cross-pairs infeasible under global α; 0 feasible 11x11 cells",
        "theory A.10",
        EMPIRICAL,
        claim="a10_global_alpha",
    ),
    Row(
        "a10_category_alpha",
        "category-specific α restores feasibility",
        "theory A.10",
        EMPIRICAL,
        claim="a10_category_alpha",
    ),
    Row(
        "multiplier",
        "10 of 11 categories tolerate 0.25x-4x at Jaccard ≥ 0.95",
        "multiplier sweep",
        EMPIRICAL,
        Rule(
            "reproduced if at least 10 of 11 categories keep mean Jaccard@10 ≥ 0.95 over the whole 0.25x–4x range "
            "(core: no "
            "category on a sensitivity cliff) and the one exception is RELATIONAL_BONDS at 0.33x–4x",
            _multiplier_parts,
        ),
        _multiplier,
        lambda w: (
            f"{w['n_whole_range']} of 11 tolerate the whole range"
            + (f"; exceptions {w['not_whole']}" if w["not_whole"] else "")
        ),
        _diag_multiplier,
    ),
    Row("a12_decomposition", "13.3pp predicted vs 12pp observed", "theory A.12", FORMAL, claim="a12_decomposition"),
    Row(
        "a5_partition",
        "partition variances 3.60e-3 / 2.09e-2 / 4.69e-2; 4.2x",
        "theory A.5",
        EMPIRICAL,
        claim="a5_partition",
    ),
    Row(
        "labels",
        "10% label noise → Jaccard 0.974; 50% → 0.905, τ 0.897",
        "label perturbation",
        EMPIRICAL,
        Rule(
            "reproduced if Jaccard@10 at 10% confused-pair perturbation is within ±0.02 of 0.974, and Jaccard and τ at "
            "50% within "
            "±0.03 of 0.905 and 0.897",
            _labels_parts,
        ),
        _labels,
        lambda w: "; ".join(
            f"{r}: J {v['jaccard']:.3f}, τ {v['tau']:.3f}, {v['displaced_per_query']:.2f} displaced/query"
            for r, v in sorted(w.items(), key=lambda kv: float(kv[0]))
        ),
        _diag_labels,
    ),
    Row(
        "slot_noise",
        "slot-key noise: τ ≈ 0.997 while Jaccard falls to 0.76",
        "metadata-noise sweep",
        EMPIRICAL,
        Rule(
            "not comparable: the paper states no slot-key corruption rate, so its τ and Jaccard@10 have no rate of "
            "ours to be compared at, and the qualitative part (τ stays high while Jaccard falls by a margin) depends "
            "on the rate (at rate 0 both are 1); our figures at every rate of the sweep are ours",
            not_comparable="the paper gives τ ≈ 0.997 and Jaccard 0.76 under slot-key corruption without the "
            "corruption rate; figures that depend on the rate cannot be compared at a rate the paper does not state",
        ),
        _noise,
        lambda w: (
            f"at rate {w['rate']:g}: τ {w['tau']:.3f}, Jaccard {w['jaccard']:.3f}; "
            + ", ".join(
                f"{r}: τ {v['tau']:.3f}, J {v['jaccard']:.3f}"
                for r, v in sorted(w["all"].items(), key=lambda kv: float(kv[0]))
            )
        ),
    ),
    Row(
        "granularity",
        "gains saturate near 7 clusters",
        "granularity sweep",
        EMPIRICAL,
        Rule(
            'not comparable: the paper\'s "gains saturate near 7 clusters" is its BEAM result (§6.6), and the '
            "granularity sweep here runs on LifecycleBench, another benchmark; our pass rate per k is ours",
            not_comparable="the paper's saturation near k = 7 is measured on BEAM (§6.6; the paper calls BEAM's runs "
            "not commensurable with LifecycleBench's, §7), this sweep on LifecycleBench",
        ),
        _granularity,
        lambda w: (
            ", ".join(f"k={k}: {_pct(v)}" for k, v in sorted(w["pass_by_k"].items()))
            + f"; cognitive-3 {_pct(w['cognitive_3'])}"
        ),
    ),
    Row(
        "ablation",
        "full 72.9 / no-routing 66.7 / uniform 66.5 / baseline 60.7 (all gaps significant)",
        "ablation table",
        EMPIRICAL,
        Rule(
            "absolute pass rates are not comparable (the paper uses LLM extraction and an LLM judge); reproduced if "
            "fr-full "
            "is above fr-no-routing, fr-uniform-decay and flat cosine, each with a 95% paired-bootstrap CI above 0",
            _ablation_parts,
        ),
        _ablation,
        lambda w: " / ".join(f"{s} {_pct(v)}" for s, v in w["pass"].items()),
        _diag_collapsed,
    ),
    Row(
        "floors",
        "floors: Hit@1 19% → 31%",
        "ablations",
        EMPIRICAL,
        Rule(
            "reproduced if FR-full's Hit@1 exceeds fr-no-floors' by at least 5 pp (the paper's +12 pp)", _floors_parts
        ),
        _floors,
        lambda w: f"Hit@1 without floors {_pct(w['hit1_without'])} → with {_pct(w['hit1_with'])}",
        _diag_floors,
    ),
    Row(
        "uniform_alpha_av8",
        "uniform α = 0.3 drops AV8 to 12.5%",
        "α sweep",
        EMPIRICAL,
        Rule(
            "reproduced if AV8 pass falls by at least 30 pp from FR-full under a uniform α = 0.3 (core) and lands "
            "within ±10 pp of 12.5%",
            _uniform_alpha_parts,
        ),
        _uniform_alpha,
        lambda w: f"AV8 fr-full {_pct(w['av8_fr_full'])} → uniform α = 0.3 {_pct(w['av8_uniform_0_3'])}",
        _diag_uniform_alpha,
    ),
    Row(
        "a14_corpus",
        "66.8% of entries have primary weight < 0.90; 2.0 categories per entry",
        "corpus statistics",
        EMPIRICAL,
        claim="a14_corpus",
    ),
    Row(
        "alpha_bonferroni",
        "fine-grained α sweep: every p-value fails Bonferroni at p < 0.0056",
        "α sweeps",
        EMPIRICAL,
        Rule(
            "reproduced if no α of the fine grid differs from FR-full at the Bonferroni-corrected level (exact "
            "McNemar)",
            _bonferroni_parts,
        ),
        _bonferroni,
        lambda w: f"{len(w['significant'])} of {w['n']} significant; smallest p {w['min_p']:.3g}",
    ),
    Row(
        "static_zero_cost",
        '"zero cost on static retrieval" (AV3, AV5, AV8 against flat cosine)',
        "ablation table, per AV",
        EMPIRICAL,
        Rule(
            '"zero cost" is an equivalence claim, so it is tested as non-inferiority: reproduced if over the pooled '
            "AV3 + AV5 + AV8 "
            "questions the 95% paired-bootstrap CI of fr-full − flat cosine lies above −5 pp (core; absence of a "
            "significant loss "
            "alone would pass by lack of power) and no single one of them shows a significant loss (exact McNemar p < "
            "0.05 with "
            "fr-full behind)",
            _static_parts,
        ),
        _static,
        lambda w: (
            f"pooled {100 * w['pooled']['diff']:+.1f} pp [{100 * w['pooled']['ci'][0]:+.1f}, "
            f"{100 * w['pooled']['ci'][1]:+.1f}] (MDE {100 * w['pooled'].get('mde', float('nan')):.1f} pp); "
            + ", ".join(f"{av} {_pct(w[av]['a'])} vs {_pct(w[av]['b'])}" for av in STATIC_AVS if w[av])
        ),
        _diag_static,
    ),
    Row(
        "holdout",
        "20/20 persona holdout: 77.0% vs 76.8%",
        "holdout sweep",
        EMPIRICAL,
        Rule(
            "absolute levels are not compared; reproduced if α calibrated on one half of the personas passes within 2 "
            "pp of the "
            "default parameters on the other half",
            _holdout_parts,
        ),
        _holdout,
        lambda w: f"held-out half: calibrated {_pct(w['calibrated'])} vs default {_pct(w['default'])}",
        _diag_holdout,
    ),
    Row(
        "lme_aggregate_neutral",
        "LongMemEval-S: the lifecycle layer is aggregate-neutral (+2.2 pp on a 317-question matched subset)",
        "LongMemEval §6.1, D.2",
        EMPIRICAL,
        Rule(
            "judge-free analogue on LongMemEval retrieval: turn-level recall_all@10 (every evidence message in the top "
            "10) of fr-full − fr-lifecycle-off, paired bootstrap over the questions with evidence among the user "
            "messages (abstention excluded); reproduced if the 95% CI lies inside ±3 pp (core: the point difference "
            "lies inside ±3 pp)",
            _lme_neutral_parts,
        ),
        _lme_neutral,
        lambda w: (
            f"recall_all@10 fr-full {_pct(w['on'])} vs fr-lifecycle-off {_pct(w['off'])}: {100 * w['diff']:+.1f} pp "
            f"[{100 * w['ci'][0]:+.1f}, {100 * w['ci'][1]:+.1f}] over {w['n']} questions"
        ),
        part="longmemeval",
    ),
    Row(
        "lme_knowledge_update",
        "LongMemEval-S: knowledge-update questions lose 6.4 pp with lifecycle on",
        "LongMemEval D.2",
        EMPIRICAL,
        Rule(
            "judge-free analogue: on knowledge-update questions (abstention excluded), turn-level recall_all@10 of "
            "fr-full − fr-lifecycle-off, paired bootstrap; reproduced if it is negative (core: the direction) with a "
            "95% CI below 0; the size is not compared (the paper's figure is answer accuracy with an LLM reader and "
            "judge)",
            _lme_ku_parts,
        ),
        _lme_ku,
        _lme_ku_ours,
        part="longmemeval",
    ),
    Row(
        "lme_absolute",
        "75.2% on full LongMemEval-S",
        "LongMemEval §1, §6.1, D.1",
        EMPIRICAL,
        Rule(
            "not comparable: the paper's figure is answer accuracy graded by an LLM judge, frcore's are judge-free "
            "retrieval metrics",
            not_comparable="the paper's 75.2% is answer accuracy of an LLM reader graded by an LLM judge on all 500 "
            "questions; frcore measures retrieval without a reader or judge (evidence recall in the benchmark's "
            "metrics) on the questions it is given",
        ),
        _lme_absolute,
        lambda w: (
            "; ".join(
                f"{s} recall_any@10 {_pct(v['recall_any@10'])}, recall_all@10 {_pct(v['recall_all@10'])}"
                for s, v in w.items()
            )
            + f" (turn level, {next(iter(w.values()))['n']} questions with gold)"
        ),
        part="longmemeval",
    ),
)


LEDGER = LEDGER + paper_rows()


def _static_parts_before_non_inferiority(w):
    """The first rule's parts: the pooled CI reaching 0 (absence of a significant loss) as the core."""
    p = w["pooled"]
    pooled = holds(
        "no loss on the pooled static questions (95% CI of fr-full − flat-cosine reaches 0)",
        p["ci"][1] >= 0,
        f"ours {100 * p['diff']:+.1f} pp [{100 * p['ci'][0]:+.1f}, {100 * p['ci'][1]:+.1f}] over {p['n']} questions",
        core=True,
    )
    return [pooled, *_static_per_av(w)]


def _noise_parts_3943dde(w):
    p = PAPER["noise"]["slot_key"]
    return [
        holds(
            "ranking order survives while the set changes (τ ≥ 0.95 and τ − Jaccard ≥ 0.1 at the highest rate)",
            w["tau"] >= 0.95 and w["tau"] - w["jaccard"] >= 0.1,
            f"ours at rate {w['rate']:g}: τ {w['tau']:.3f}, Jaccard {w['jaccard']:.3f}",
            core=True,
        ),
        within("τ", w["tau"], p["tau"], atol=0.01),
        within("Jaccard@10", w["jaccard"], p["jaccard"], atol=0.05),
    ]


def _granularity_parts_3943dde(w):
    rows = w["pass_by_k"]
    return [
        holds(
            "finer ontologies gain (best k ≥ 1 pp above k = 1)",
            w["best"] - rows[1] >= 0.01,
            f"ours k = 1: {_pct(rows[1])}, best {_pct(w['best'])}",
            core=True,
        ),
        holds(
            "gains saturate near 7 (smallest k within 1 pp of the best lies in 5–9)",
            5 <= w["k_saturation"] <= 9,
            f"ours k = {w['k_saturation']}",
        ),
    ]


#: The earlier rules of ledger rows revised after the row had a verdict, each executable on
#: today's witness (texts exactly as ``theory/rule_record.json`` lists them under ``earlier``).
REVISIONS: dict[str, tuple[Rule, ...]] = {
    "latency": (
        # 3943dde: a straight line (R² ≥ 0.9) was the whole of "linear to k = 1,000"
        Rule(
            "reproduced if our jitted kernel's median at k = 20 is at most 47 μs, its per-candidate slope at most "
            "1.96 μs, and median latency is linear in k up to 1,000 (R² ≥ 0.9); timings are of this machine, so "
            "only 'at most' is compared",
            lambda w: [_latency_median(w), _latency_slope(w), _latency_linear_fit(w)],
        ),
        # 4b99ac9: the line replaced by O(k) (log–log slope ≤ 1.1), which a flat curve also passes
        Rule(
            "reproduced if our jitted kernel's median at k = 20 is at most 47 μs, its per-candidate slope at most 1.96 "
            "μs, and median latency grows at most linearly in k up to 1,000 (O(k): log–log slope ≤ 1.1); timings are "
            "of this machine, so only 'at most' is compared",
            lambda w: [_latency_median(w), _latency_slope(w), _latency_loglog(w)],
        ),
    ),
    "slot_noise": (
        # 3943dde: judged at our highest corruption rate, though the paper states none
        Rule(
            "reproduced if at our highest slot-key corruption rate τ stays ≥ 0.95 while Jaccard@10 is ≥ 0.1 below it "
            "(core), τ within ±0.01 of 0.997 and Jaccard within ±0.05 of 0.76 (the paper does not state its "
            "corruption rate)",
            _noise_parts_3943dde,
        ),
    ),
    "granularity": (
        # 3943dde: the paper's BEAM result compared with a LifecycleBench sweep
        Rule(
            "reproduced if the best collapsed ontology passes ≥ 1 pp more than k = 1 (core: granularity helps) and "
            "the smallest k within 1 pp of the best lies in 5–9",
            _granularity_parts_3943dde,
        ),
    ),
    "static_zero_cost": (
        # 3943dde: no significant loss (the CI reaching 0), which passes by lack of power
        Rule(
            "reproduced if over the pooled AV3 + AV5 + AV8 questions the 95% paired-bootstrap CI of fr-full − "
            "flat cosine reaches 0 (core: no significant loss) and no single one of them shows a significant loss "
            "(exact McNemar p < 0.05 with fr-full behind)",
            _static_parts_before_non_inferiority,
        ),
    ),
}


def evaluate(results_dir: str | Path) -> list[dict]:
    """Every ledger row against one results folder: ``{id, kind, paper, where, ours, check,
    verdict, rule, rule_commit, rule_date, rule_revised, revisions, reason, parts, diagnosis}``
    (``revisions``: each earlier rule with its commit and its verdict on the same witness)."""
    r = Results(results_dir)
    out = []
    for row in LEDGER:
        rec: dict[str, Any] = {
            "id": row.id,
            "kind": row.kind,
            "paper": row.paper,
            "where": row.where,
            "diagnosis": None,
            "part": row.part,
        }
        if row.claim:
            try:
                c = r.claim(row.claim)
            except (MissingResult, json.JSONDecodeError) as e:
                v = unverified(ERROR, str(e))
                rec.update(
                    ours="–",
                    check=ERROR,
                    verdict=v.verdict,
                    rule=f"theory claim {row.claim}",
                    reason=v.reason,
                    parts=[],
                    rule_commit=None,
                    rule_date=None,
                    rule_revised=False,
                    revisions=[],
                )
            else:
                summ = (c.get("diagnosis") or {}).get("summary")
                rec.update(
                    ours=c["ours"],
                    check=c["check"],
                    verdict=c["verdict"],
                    rule=c["rule"],
                    reason=c["reason"],
                    parts=c.get("parts", []),
                    diagnosis={"see": f"theory claim {row.claim}", "summary": summ} if summ else None,
                    rule_commit=c.get("rule_commit"),
                    rule_date=c.get("rule_date"),
                    rule_revised=bool(c.get("rule_revised")),
                    revisions=c.get("revisions") or [],
                )
                if c.get("rule_unrecorded"):
                    rec["rule_unrecorded"] = c["rule_unrecorded"]
            out.append(rec)
            continue
        rule, measure, ours_of = row.rule, row.measure, row.ours
        assert rule is not None and measure is not None and ours_of is not None, f"ledger row {row.id}: no rule"
        rec["rule"] = rule.text
        try:
            w = measure(r)
            ours = ours_of(w)
        except (MissingResult, KeyError, ValueError, TypeError, json.JSONDecodeError) as e:
            v = unverified(ERROR, f"{type(e).__name__}: {e}")
            rec.update(ours="–", check=ERROR, verdict=v.verdict, reason=v.reason, parts=[])
            rec.update(provenance(row.id, rule, REVISIONS.get(row.id, ()), None))
            out.append(rec)
            continue
        v = rule.decide(w)
        rec.update(
            ours=ours, check=PASS, verdict=v.verdict, reason=v.reason, parts=[p.as_dict() for p in v.parts], witness=w
        )
        rec.update(provenance(row.id, rule, REVISIONS.get(row.id, ()), w))
        if row.diagnose and v.verdict not in (REPRODUCED, NOT_COMPARABLE):
            try:
                rec["diagnosis"] = row.diagnose(r, w)
            except Exception as e:
                rec["diagnosis"] = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc(limit=4)}
        out.append(rec)
    return out


def anchor(cid: str) -> str:
    """The HTML anchor of a claim's details section in REPORT.md."""
    return f"claim-{cid}"


def revision_flag(x: dict) -> str:
    """``rule revised in COMMIT (earlier rule: VERDICT; …)`` for a claim whose rule was revised after
    it had a verdict, else ''."""
    if not x.get("rule_revised"):
        return ""
    earlier = "; ".join(f"{(e['commit'] or '')[:7]}: {e['verdict'] or '–'}" for e in x.get("revisions") or [])
    return f"rule revised in {(x.get('rule_commit') or '?')[:7]} (earlier rule {earlier})"


def verdict_table(rows: list[dict], theory_claims: list[dict] | None = None, *, link: bool = False) -> list[str]:
    """Markdown: claim · kind · paper · ours · check · verdict · reason — every ledger row, then
    every theory claim the ledger does not restate. A revised rule is flagged in the verdict cell
    with the earlier rule's verdict; ``link``: each claim links to its details section
    (:func:`anchor`)."""

    def esc(s):
        return str(s).replace("|", "\\|").replace("\n", " ")

    def line(x):
        why = x["reason"] if x["verdict"] != REPRODUCED else "every part holds"
        d = x.get("diagnosis") or {}
        if d.get("summary"):
            why += f" — **cause:** {d['summary']}"
        cid = f"[{x['id']}](#{anchor(x['id'])})" if link else esc(x["id"])
        flag = revision_flag(x)
        verdict = f"**{x['verdict']}**" + (f" ⚑ {esc(flag)}" if flag else "")
        return (
            f"| {cid} | {x.get('kind', '–')} | {esc(x['paper'])} | {esc(x['ours'])} | {x['check']} | {verdict} | "
            f"{esc(why)} |"
        )

    lines = ["| claim | kind | paper | ours | check | verdict | reason |", "|---|---|---|---|---|---|---|"]
    lines += [line(x) for x in rows]
    shown = {x["id"] for x in rows}
    lines += [line(c) for c in theory_claims or [] if c["id"] not in shown]
    return lines


def every_claim(rows: list[dict], theory_claims: list[dict] | None) -> list[dict]:
    """The ledger rows, then every theory claim the ledger does not restate (each claim once)."""
    shown = {x["id"] for x in rows}
    return rows + [c for c in theory_claims or [] if c["id"] not in shown]


def _cli(args) -> int:
    rows = evaluate(args.results)
    theory = Results(args.results).optional("theory.json") or {}
    print(headline(every_claim(rows, theory.get("claims"))))
    print("\n".join(verdict_table(rows, theory.get("claims"))))
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows}, indent=1, default=str))
    return 1 if any(x["check"] != PASS for x in rows) else 0


def register(subparsers) -> None:
    p = subparsers.add_parser("ledger", help="verdict of every paper claim from a fr reproduce results folder")
    p.add_argument("results", help="results folder (e.g. paper_figures/out/results)")
    p.add_argument("--json", help="also write {rows: [...]} here")
    p.set_defaults(func=_cli)
