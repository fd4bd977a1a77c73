"""Ledger rows of the paper's empirical claims that need no judge (issue 29, item 4), each with its
rule, measured on the suite ``fr reproduce`` runs: §6.5 (the untyped arm), C.6 / Table 4 (behavioral
against cognitive partition), A.12 on our data, §6.2 (pass given a correct edge in the top 10),
§6.2 / D.8 (staleness against an overwrite store), §5 / C.6 (the leader of each attack vector; AV7),
H (numeric rescue), I (rate squatting), §6.7 (the most damaging metadata noise) and the holdout
through ``fr calibrate --folds``.

Every row is ``kind="empirical"``. A verdict that rests on a paired comparison carries the
**minimal detectable effect** at its n (:func:`mde_paired`): the smallest true difference a
two-sided test at α = 0.05 finds with 80% power, given the share of discordant questions.

:func:`paper_rows` builds the rows; :mod:`experiments.ledger` appends them to its ``LEDGER``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from experiments.ledger_base import MissingResult, Results, Row, bench_regime, mde_paired, paired
from theory.verdict import Part, Rule, holds, within

#: The paper's figures these rows compare with (§6.5, §6.2, D.8, §5, C.6, H, I, A.12, §7).
PAPER_EMPIRICAL: dict[str, Any] = {
    "untyped": {"diff": -0.017, "ci": [-0.060, 0.027]},
    "cognitive": {"ahead_of_9": 7},
    "a12": {"p0": 0.758, "p1": 0.060, "pi_fr": 0.08, "pi_mem0": 0.27, "predicted_pp": 13.3, "observed_pp": 12.0},
    "top10_pass": 0.945,
    "staleness_ratio": 1.76,
    "leaders": {"leads": ("AV1", "AV3", "AV4", "AV5"), "ties": ("AV9",)},
    "av7_pass": 0.05,
    "numeric_av8": {"without": 0.81, "with": 0.94},
    "holdout": {"calibrated": 0.770, "default": 0.768},
}

#: Equivalence margin of "correctness-equivalent" (§6.5): the paper's own 95% CI, [−6.0, +2.7] pp,
#: lies inside ±6 pp, so this is the margin its evidence meets.
UNTYPED_MARGIN = 0.06
#: A.12: the largest |predicted − observed| gap still called a match (the paper: 13.3 vs 12 pp).
A12_TOLERANCE = 0.03
#: §5: a tie is a pass rate within this of the best other system's (AV9).
TIE_MARGIN = 0.02
#: Relative tolerance of the staleness ratio (the paper: 1.76×).
RATIO_RTOL = 0.25
#: I: an item squats a top-10 position when it is at least this old (hours: a month) ...
SQUAT_AGE_H = 720.0
#: ... and the decay still gives it this much activation.
SQUAT_ACTIVATION = 0.1
#: I: the floored configuration "prevents" squatting when its squatting share is at most the
#: default's plus this.
SQUAT_SLACK = 0.01
#: The holdout's equivalence margins: point (the existing holdout row's 2 pp) and 95% CI.
HOLDOUT_POINT = 0.02
HOLDOUT_CI = 0.03
#: Where ``fr reproduce`` writes the systems only these rows read, and the folds of the holdout.
BENCH_PAPER = "bench_paper.json"
CALIBRATE_FOLDS = "calibrate_folds.json"
#: The systems of :data:`BENCH_PAPER` (diagnostic ones resolve by name only).
PAPER_SYSTEMS = ("fr-full", "fr-cognitive-partition", "fr-no-numeric", "fr-rates-800x", "fr-rates-800x-floor")
#: Attack vectors, in order.
AVS = tuple(f"AV{i}" for i in range(1, 10))


# --------------------------------------------------------------------------- statistics


def _pp(x: float) -> str:
    return f"{100 * x:+.1f} pp"


def _share(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _ci(ci) -> str:
    return f"[{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]"


def _records(r: Results, system: str, file: str = "bench.json") -> list[dict]:

    out = [q for q in r.get(file).get("questions", []) if q["system"] == system]
    if not out:
        raise MissingResult(f"{file} has no per-question records of {system!r}")
    return out


# --------------------------------------------------------------------------- §6.5 untyped arm


def _untyped(r: Results) -> dict:
    return paired(r, "fr-untyped", "fr-full")


def _untyped_parts(w) -> list[Part]:
    m = UNTYPED_MARGIN
    lo, hi = w["ci"]
    detail = (
        f"fr-untyped − fr-full {_pp(w['diff'])} {_ci(w['ci'])} over {w['n']} questions (paper −1.7 pp [−6.0, +2.7]); "
        f"MDE {100 * w['mde']:.1f} pp at 80% power"
    )
    return [
        holds(f"equivalent: 95% paired CI inside ±{100 * m:.0f} pp", lo >= -m and hi <= m, detail, core=True),
        holds("no significant difference: the CI contains 0", lo <= 0 <= hi, f"McNemar p = {w['mcnemar_p']:.3g}"),
    ]


# --------------------------------------------------------------------------- C.6 / Table 4 cognitive partition


def _cognitive(r: Results) -> dict:
    full = r.system("fr-full", BENCH_PAPER)["per_av"]
    cog = r.system("fr-cognitive-partition", BENCH_PAPER)["per_av"]
    avs = [av for av in AVS if av in full and av in cog]
    per = {av: [full[av]["pass"], cog[av]["pass"]] for av in avs}
    out = {
        "per_av": per,
        "ahead": [av for av in avs if per[av][0] > per[av][1]],
        "behind": [av for av in avs if per[av][0] < per[av][1]],
        "n_avs": len(avs),
        "pooled": paired(r, "fr-full", "fr-cognitive-partition", file=BENCH_PAPER),
    }
    try:  # the cognitive rates alone (fr-cognitive, in the main table), for comparison only
        c2 = r.system("fr-cognitive")["per_av"]
        out["cognitive_rates_ahead"] = [av for av in avs if av in c2 and full[av]["pass"] > c2[av]["pass"]]
    except Exception:
        out["cognitive_rates_ahead"] = None
    return out


def _cognitive_parts(w) -> list[Part]:
    a, b, n = len(w["ahead"]), len(w["behind"]), w["n_avs"]
    p = w["pooled"]
    detail = (
        f"ahead on {a} ({', '.join(w['ahead']) or 'none'}), behind on {b} ({', '.join(w['behind']) or 'none'}) of {n}; "
        f"pooled {_pp(p['diff'])} {_ci(p['ci'])}, MDE {100 * p['mde']:.1f} pp"
    )
    return [
        holds("the behavioral ontology is ahead on more attack vectors than behind", a > b, detail, core=True),
        holds(
            f"ahead on at least {PAPER_EMPIRICAL['cognitive']['ahead_of_9']} of 9 attack vectors",
            a >= PAPER_EMPIRICAL["cognitive"]["ahead_of_9"],
            f"ours {a} of {n}",
        ),
    ]


# --------------------------------------------------------------------------- A.12 on our data


def _decomposition(recs: list[dict]) -> dict:
    """π (share stale), p0 (pass | clean), p1 (pass | contaminated) and the pass rate of records."""
    z = np.array([q["stale"] for q in recs], dtype=bool)
    y = np.array([q["passed"] for q in recs], dtype=bool)
    return {
        "n": int(z.size),
        "pi": float(z.mean()),
        "p0": float(y[~z].mean()) if (~z).any() else None,
        "p1": float(y[z].mean()) if z.any() else None,
        "pass": float(y.mean()),
    }


def _a12(r: Results) -> dict:
    from theory.identities import predicted_gap

    full = _records(r, "fr-full")
    out: dict[str, Any] = {"fr-full": _decomposition(full)}
    for other in ("flat-cosine", "overwrite"):
        recs = _records(r, other)
        out[other] = _decomposition(recs)
        pooled = _decomposition(full + recs)  # the shared (p0, p1) the paper's prediction assumes
        if pooled["p0"] is None or pooled["p1"] is None:
            out[f"vs_{other}"] = {"not_measurable": "no clean or no contaminated question"}
            continue
        pred = predicted_gap(out["fr-full"]["pi"], out[other]["pi"], pooled["p0"], pooled["p1"])
        out[f"vs_{other}"] = {
            "p0": pooled["p0"],
            "p1": pooled["p1"],
            "predicted": float(pred),
            "observed": out["fr-full"]["pass"] - out[other]["pass"],
        }
    return out


def _a12_parts(w) -> list[Part]:
    parts = []
    rates = {s: w[s] for s in ("fr-full", "flat-cosine", "overwrite")}
    ok = all(v["p0"] is not None and v["p1"] is not None and v["p1"] < v["p0"] for v in rates.values())
    parts.append(
        holds(
            "contamination lowers the pass rate for every system (p1 < p0)",
            ok,
            "; ".join(
                f"{s}: π {100 * v['pi']:.1f}%, p0 "
                + ("–" if v["p0"] is None else f"{100 * v['p0']:.1f}%")
                + ", p1 "
                + ("–" if v["p1"] is None else f"{100 * v['p1']:.1f}%")
                for s, v in rates.items()
            )
            + " (paper p0 75.8%, p1 6.0%)",
            core=True,
        )
    )
    for other in ("flat-cosine", "overwrite"):
        g = w[f"vs_{other}"]
        if "not_measurable" in g:
            parts.append(
                holds(f"predicted gap against {other} within ±3 pp of the observed", False, g["not_measurable"])
            )
            continue
        parts.append(
            holds(
                f"predicted gap against {other} within ±{100 * A12_TOLERANCE:.0f} pp of the observed",
                abs(g["predicted"] - g["observed"]) <= A12_TOLERANCE,
                f"predicted (π_{other} − π_fr)(p0 − p1) = {_pp(g['predicted'])} at pooled p0 {100 * g['p0']:.1f}%, "
                f"p1 {100 * g['p1']:.1f}%; observed {_pp(g['observed'])} (paper 13.3 vs 12 pp)",
            )
        )
    return parts


# --------------------------------------------------------------------------- §6.2 top-10


def _top10(r: Results) -> dict:
    recs = _records(r, "fr-full")
    hit = [q for q in recs if q["outcome"]["hit10"]]
    fails = [q for q in recs if not q["passed"]]
    return {
        "n": len(recs),
        "n_hit10": len(hit),
        "pass_given_hit10": float(np.mean([q["passed"] for q in hit])) if hit else None,
        "n_fail": len(fails),
        "share_fail_missed": float(np.mean([not q["outcome"]["hit10"] for q in fails])) if fails else None,
    }


def _top10_parts(w) -> list[Part]:
    s = w["share_fail_missed"]
    return [
        holds(
            "retrieval recall is the bottleneck: most failures have no correct edge in the top 10",
            s is not None and s > 0.5,
            f"{_share(s)} of fr-full's {w['n_fail']} failures",
            core=True,
        ),
        within(
            "pass rate when a correct edge is in the top 10",
            w["pass_given_hit10"],
            PAPER_EMPIRICAL["top10_pass"],
            atol=0.03,
            scale=100,
            unit="%",
        ),
    ]


# --------------------------------------------------------------------------- §6.2 / D.8 staleness


def _staleness(r: Results) -> dict:
    d = paired(r, "overwrite", "fr-full", field="stale")
    d["ratio"] = d["a"] / d["b"] if d["b"] > 0 else float("inf")
    return d


def _staleness_parts(w) -> list[Part]:
    return [
        holds(
            "fr-full is less stale than the overwrite store (95% paired CI of overwrite − fr-full above 0)",
            w["ci"][0] > 0,
            f"staleness overwrite {100 * w['a']:.1f}% vs fr-full {100 * w['b']:.1f}%: {_pp(w['diff'])} {_ci(w['ci'])} "
            f"over {w['n']} questions; MDE {100 * w['mde']:.1f} pp",
            core=True,
        ),
        within(
            "staleness ratio overwrite / fr-full",
            w["ratio"] if math.isfinite(w["ratio"]) else None,
            PAPER_EMPIRICAL["staleness_ratio"],
            rtol=RATIO_RTOL,
            unit="×",
        ),
    ]


# --------------------------------------------------------------------------- §5 / C.6 leaders, AV7


def _leaders(r: Results) -> dict:
    from frcore.bench import BASELINES

    systems = ("fr-full",) + BASELINES
    per = {s: {av: v["pass"] for av, v in r.system(s)["per_av"].items()} for s in systems}
    out: dict[str, Any] = {"systems": list(systems), "per_av": {}}
    for av in AVS:
        if av not in per["fr-full"]:
            continue
        row: dict[str, float] = {s: per[s][av] for s in systems if per[s].get(av) is not None}
        best = max(row.values())
        out["per_av"][av] = {
            "fr_full": row["fr-full"],
            "best_other": max(v for s, v in row.items() if s != "fr-full"),
            "leaders": sorted(s for s, v in row.items() if v == best),
        }
    return out


def _leaders_parts(w) -> list[Part]:
    parts = []
    for av in PAPER_EMPIRICAL["leaders"]["leads"]:
        x = w["per_av"].get(av)
        parts.append(
            holds(
                f"fr-full leads {av} outright",
                x is not None and x["fr_full"] > x["best_other"],
                "–" if x is None else f"fr-full {100 * x['fr_full']:.1f}%, best baseline {100 * x['best_other']:.1f}%",
            )
        )
    for av in PAPER_EMPIRICAL["leaders"]["ties"]:
        x = w["per_av"].get(av)
        parts.append(
            holds(
                f"fr-full ties or leads {av} (within {100 * TIE_MARGIN:.0f} pp of the best baseline or above)",
                x is not None and x["fr_full"] >= x["best_other"] - TIE_MARGIN,
                "–" if x is None else f"fr-full {100 * x['fr_full']:.1f}%, best baseline {100 * x['best_other']:.1f}%",
            )
        )
    return parts


def _av7(r: Results) -> dict:
    per = {av: v["pass"] for av, v in r.system("fr-full")["per_av"].items()}
    if "AV7" not in per:
        return {"not_measurable": "no AV7 question in the suite"}
    return {"av7": per["AV7"], "lowest": min(per, key=lambda k: per[k]), "per_av": per}


def _av7_parts(w) -> list[Part]:
    return [
        holds(
            "AV7 (selective forgetting) is fr-full's lowest attack vector",
            w["per_av"]["AV7"] <= min(w["per_av"].values()),
            f"AV7 {100 * w['av7']:.1f}%; lowest {w['lowest']} {100 * w['per_av'][w['lowest']]:.1f}%",
            core=True,
        ),
        within("AV7 retrieval pass", w["av7"], PAPER_EMPIRICAL["av7_pass"], atol=0.10, scale=100, unit="%"),
    ]


# --------------------------------------------------------------------------- H numeric rescue


def _numeric(r: Results) -> dict:
    return paired(r, "fr-full", "fr-no-numeric", file=BENCH_PAPER, avs=("AV8",))


def _numeric_parts(w) -> list[Part]:
    p = PAPER_EMPIRICAL["numeric_av8"]
    return [
        holds(
            "AV8 rises by at least 5 pp with the numeric exemption and the 0.95× floor (paper 81% → 94%)",
            w["diff"] >= 0.05,
            f"without {100 * w['b']:.1f}% → with {100 * w['a']:.1f}% ({_pp(w['diff'])}) over {w['n']} AV8 questions",
            core=True,
        ),
        holds(
            "the rise is significant (95% paired CI above 0)",
            w["ci"][0] > 0,
            f"CI {_ci(w['ci'])}; MDE {100 * w['mde']:.1f} pp (paper {100 * (p['with'] - p['without']):+.0f} pp)",
        ),
    ]


def _diag_numeric(r: Results, w: dict) -> dict:
    """Where the numeric rescue can act: σ of fr-full's AV8 top-10 items against its threshold."""

    reg = bench_regime(r, avs=("AV8",))
    if not reg.get("items"):
        return {"score_regime": reg, "summary": reg.get("note", "")}
    return {
        "score_regime": reg,
        "summary": f"σ reaches the numeric rescue threshold (0.85) on {100 * reg['share_rescue_threshold']:.1f}% of "
        f"fr-full's {reg['items']} AV8 top-10 items (max σ {reg['sigma_max']:.2f}); the two switches change "
        f"{w['discordant']} of {w['n']} AV8 outcomes",
    }


# --------------------------------------------------------------------------- I squatting


def squatting_share(recs: list[dict]) -> float:
    """Share of top-10 positions held by an item at least :data:`SQUAT_AGE_H` old whose activation
    is still ≥ :data:`SQUAT_ACTIVATION` (a month-old fact the decay keeps alive), over records
    with score terms."""
    held = total = 0
    for q in recs:
        for t in q.get("terms") or []:
            total += 1
            held += t["age"] >= SQUAT_AGE_H and t["activation"] >= SQUAT_ACTIVATION
    if total == 0:
        raise MissingResult("no score terms in the records (run with terms kept)")
    return held / total


def _squatting(r: Results) -> dict:
    share = {
        s: squatting_share(_records(r, s, BENCH_PAPER)) for s in ("fr-full", "fr-rates-800x", "fr-rates-800x-floor")
    }
    return {
        "squatting": share,
        "fast_vs_default": paired(r, "fr-rates-800x", "fr-full", file=BENCH_PAPER),
        "floor_vs_default": paired(r, "fr-rates-800x-floor", "fr-full", file=BENCH_PAPER),
    }


def _squatting_parts(w) -> list[Part]:
    s, f, g = w["squatting"], w["fast_vs_default"], w["floor_vs_default"]
    share = ", ".join(f"{k} {100 * v:.1f}%" for k, v in s.items())
    return [
        holds(
            "the 800× configuration loses pass rate against the default (95% paired CI below 0)",
            f["ci"][1] < 0,
            f"800× − default {_pp(f['diff'])} {_ci(f['ci'])} over {f['n']} questions; MDE {100 * f['mde']:.1f} pp",
            core=True,
        ),
        holds(
            "it squats: more top-10 positions held by month-old items still active than under the default",
            s["fr-rates-800x"] > s["fr-full"],
            f"share of top-10 positions with age ≥ {SQUAT_AGE_H:.0f} h and activation ≥ {SQUAT_ACTIVATION}: {share}",
        ),
        holds(
            "a slowest rate of 0.003 prevents it: squatting at most the default's + 1 pp and no significant loss "
            "against the default (McNemar p ≥ 0.05 or ahead)",
            s["fr-rates-800x-floor"] <= s["fr-full"] + SQUAT_SLACK and (g["diff"] >= 0 or g["mcnemar_p"] >= 0.05),
            f"floored − default {_pp(g['diff'])} {_ci(g['ci'])}, p = {g['mcnemar_p']:.3g}, MDE {100 * g['mde']:.1f} pp",
        ),
    ]


# --------------------------------------------------------------------------- §6.7 metadata noise


def _noise_kinds(r: Results) -> dict:
    s = r.get("sweep_noise.json")["summary"]
    kinds = [k for k in ("slot_key", "category", "retraction", "event_time") if k in s]
    rates = sorted(set.intersection(*(set(s[k]) for k in kinds)), key=float) if kinds else []
    if "slot_key" not in kinds or len(kinds) < 2 or not rates:
        raise MissingResult("sweep_noise.json: needs slot_key and another kind at a shared rate")
    return {"kinds": kinds, "rates": rates, "jaccard": {k: {q: s[k][q]["jaccard"][0] for q in rates} for k in kinds}}


def _noise_kinds_parts(w) -> list[Part]:
    j, rates = w["jaccard"], w["rates"]

    def worst(vals: dict[str, float]) -> str:
        return min(vals, key=lambda k: vals[k])

    mean = {k: float(np.mean([j[k][q] for q in rates])) for k in w["kinds"]}
    parts = [
        holds(
            "slot-key corruption lowers Jaccard@10 most, averaged over the shared rates",
            worst(mean) == "slot_key" and all(mean["slot_key"] < v for k, v in mean.items() if k != "slot_key"),
            ", ".join(f"{k} {v:.3f}" for k, v in mean.items()) + f" (rates {', '.join(rates)})",
            core=True,
        )
    ]
    for q in rates:
        at = {k: j[k][q] for k in w["kinds"]}
        parts.append(
            holds(
                f"slot-key corruption lowers Jaccard@10 most at rate {q}",
                all(at["slot_key"] < v for k, v in at.items() if k != "slot_key"),
                ", ".join(f"{k} {v:.3f}" for k, v in at.items()),
            )
        )
    return parts


# --------------------------------------------------------------------------- holdout through folds


def _folds(r: Results) -> dict:
    d = r.get(CALIBRATE_FOLDS)
    p = d["pooled"]
    disc = p["discordant"]["a_only"] + p["discordant"]["b_only"]
    return {
        "k": d["k"],
        "n": p["n"],
        "default": p["pass_a"],
        "calibrated": p["pass_b"],
        "diff": p["diff"],
        "ci": list(p["diff_ci"]),
        "mcnemar_p": p["mcnemar_p"],
        "discordant": disc,
        "mde": mde_paired(p["n"], disc),
        "feasible": [f["feasible"] for f in d["folds"]],
    }


def _folds_parts(w) -> list[Part]:
    lo, hi = w["ci"]
    return [
        holds(
            f"calibrated α generalises: pooled out-of-fold pass within {100 * HOLDOUT_POINT:.0f} pp of the default",
            abs(w["diff"]) <= HOLDOUT_POINT,
            f"calibrated {100 * w['calibrated']:.1f}% vs default {100 * w['default']:.1f}% ({_pp(w['diff'])}) over "
            f"{w['n']} questions in {w['k']} folds (paper 77.0 vs 76.8%)",
            core=True,
        ),
        holds(
            f"the 95% paired CI lies inside ±{100 * HOLDOUT_CI:.0f} pp",
            lo >= -HOLDOUT_CI and hi <= HOLDOUT_CI,
            f"CI {_ci(w['ci'])}; McNemar p = {w['mcnemar_p']:.3g}; MDE {100 * w['mde']:.1f} pp",
        ),
    ]


# --------------------------------------------------------------------------- the rows


def paper_rows() -> tuple[Row, ...]:
    """The rows, each ``kind="empirical"`` (built on call: :class:`~experiments.ledger.Row` lives
    in the module that appends them)."""

    def row(**kw) -> Row:
        return Row(kind="empirical", **kw)

    return (
        row(
            id="untyped_equivalent",
            paper="the untyped arm is correctness-equivalent to the full stack (Δ −1.7 pp, 95% CI [−6.0, +2.7])",
            where="§6.5",
            rule=Rule(
                "an equivalence claim: reproduced if the 95% paired-bootstrap CI of fr-untyped − fr-full lies inside "
                "±6 pp (core; the paper's own CI lies inside that margin) and contains 0",
                _untyped_parts,
            ),
            measure=_untyped,
            ours=lambda w: (
                f"fr-untyped − fr-full {_pp(w['diff'])} {_ci(w['ci'])} (n {w['n']}, MDE {100 * w['mde']:.1f} pp)"
            ),
        ),
        row(
            id="cognitive_partition",
            paper="the behavioral ontology beats the cognitive partition on 7 of 9 attack vectors",
            where="C.6, Table 4",
            rule=Rule(
                "fr-full against fr-cognitive-partition (the 11 categories collapsed to the episodic / semantic / "
                "procedural 3-partition, the same pipeline) per attack vector: reproduced if fr-full's pass rate is "
                "higher on more attack vectors than it is lower (core) and higher on at least 7 of 9",
                _cognitive_parts,
            ),
            measure=_cognitive,
            ours=lambda w: (
                f"ahead on {len(w['ahead'])}, behind on {len(w['behind'])} of {w['n_avs']}; pooled "
                f"{_pp(w['pooled']['diff'])} {_ci(w['pooled']['ci'])}"
            ),
            part="benchmark (paper claims)",
        ),
        row(
            id="a12_on_data",
            paper="clean 75.8% vs contaminated 6.0%; π 0.08 vs 0.27 predict 13.3 pp against 12 pp observed",
            where="A.12, on our data",
            rule=Rule(
                "per system π = share of questions with a wrong item in the top 10, p0 / p1 = pass rate of the clean / "
                "contaminated ones; reproduced if p1 < p0 for fr-full, flat cosine and overwrite (core) and the "
                "predicted gap (π_b − π_fr)(p0 − p1), with (p0, p1) pooled over the two systems' questions (the shared "
                "rates the prediction assumes), lies within ±3 pp of the observed pass-rate gap, against flat cosine "
                "and against overwrite",
                _a12_parts,
            ),
            measure=_a12,
            ours=lambda w: (
                "; ".join(
                    f"vs {o}: predicted {_pp(w[f'vs_{o}']['predicted'])}, observed {_pp(w[f'vs_{o}']['observed'])}"
                    for o in ("flat-cosine", "overwrite")
                    if "predicted" in w[f"vs_{o}"]
                )
                + f"; fr-full π {100 * w['fr-full']['pi']:.1f}%"
            ),
        ),
        row(
            id="top10_pass",
            paper="94.5% pass when a correct edge is in the top 10: retrieval recall is the bottleneck",
            where="§6.2",
            rule=Rule(
                "fr-full: reproduced if more than half of its failures have no correct (support) item in the top 10 "
                "(core) and its pass rate over the questions with one lies within ±3 pp of 94.5%",
                _top10_parts,
            ),
            measure=_top10,
            ours=lambda w: f"pass | correct in top 10: {_share(w['pass_given_hit10'])} ({w['n_hit10']} of {w['n']})",
        ),
        row(
            id="staleness_vs_overwrite",
            paper="1.76× lower staleness than Mem0",
            where="§6.2, D.8",
            rule=Rule(
                "overwrite (an overwrite store deleting on update: Mem0's UPDATE) stands for Mem0; reproduced if "
                "fr-full's staleness is lower, with the 95% paired-bootstrap CI of overwrite − fr-full above 0 (core), "
                "and the ratio overwrite / fr-full lies within ±25% of 1.76",
                _staleness_parts,
            ),
            measure=_staleness,
            ours=lambda w: (
                f"staleness fr-full {100 * w['b']:.1f}% vs overwrite {100 * w['a']:.1f}% ({w['ratio']:.2f}×)"
            ),
        ),
        row(
            id="av_leaders",
            paper="FR-Bank leads AV1, AV3, AV4, AV5 outright and ties AV9",
            where="§5, C.6",
            rule=Rule(
                "against our baselines (flat cosine, BM25, uniform decay, overwrite): reproduced if fr-full's pass "
                "rate is strictly the highest on AV1, AV3, AV4 and AV5 and within 2 pp of the best baseline or above "
                "on AV9 (one part each; the paper's other systems are not ours)",
                _leaders_parts,
            ),
            measure=_leaders,
            ours=lambda w: ", ".join(f"{av} {'/'.join(x['leaders'])}" for av, x in w["per_av"].items()),
        ),
        row(
            id="av7_retrieval",
            paper="FR-Bank scores only 5% retrieval pass on AV7 (selective forgetting)",
            where="§5, C.6",
            rule=Rule(
                "reproduced if AV7 is fr-full's lowest-passing attack vector (core) and its pass rate lies within "
                "±10 pp of 5%",
                _av7_parts,
            ),
            measure=_av7,
            ours=lambda w: w.get("not_measurable") or f"AV7 {100 * w['av7']:.1f}% (lowest: {w['lowest']})",
        ),
        row(
            id="numeric_rescue",
            paper="AV8 81% → 94% with the numeric exemption and the 0.95× floor",
            where="H",
            rule=Rule(
                "AV8 questions, fr-full against fr-no-numeric (no numeric exemption from the supersession and expiry "
                "filters, no 0.95× numeric rescue floor): reproduced if AV8 pass rises by at least 5 pp (core) with a "
                "95% paired-bootstrap CI above 0",
                _numeric_parts,
            ),
            measure=_numeric,
            diagnose=_diag_numeric,
            ours=lambda w: f"AV8 without {100 * w['b']:.1f}% → with {100 * w['a']:.1f}% ({_pp(w['diff'])}, n {w['n']})",
            part="benchmark (paper claims)",
        ),
        row(
            id="rate_squatting",
            paper="the initial 800× rates (λ 0.0001 … 0.080) let categories squat; a slowest rate of 0.003 prevents it",
            where="I",
            rule=Rule(
                "fr-rates-800x (the default rates stretched log-linearly onto 0.0001 … 0.080) and fr-rates-800x-floor "
                "(the same, no rate below 0.003) against fr-full: reproduced if the 800× configuration loses pass rate "
                "(95% paired CI below 0; core), holds more top-10 positions with month-old (age ≥ 720 h) items still "
                "active (activation ≥ 0.1) than the default, and the floored configuration holds at most 1 pp more "
                "such positions than the default with no significant loss against it (McNemar p ≥ 0.05 or ahead)",
                _squatting_parts,
            ),
            measure=_squatting,
            ours=lambda w: (
                f"800× {_pp(w['fast_vs_default']['diff'])}, floored {_pp(w['floor_vs_default']['diff'])} against the "
                "default; squatting " + ", ".join(f"{k} {100 * v:.1f}%" for k, v in w["squatting"].items())
            ),
            part="benchmark (paper claims)",
        ),
        row(
            id="noise_slot_most_damaging",
            paper="metadata noise is most damaging for slot-key corruption",
            where="§6.7",
            rule=Rule(
                "the metadata-noise sweep's kinds (slot key, category, retraction, event time) at the rates they "
                "share: reproduced if slot-key corruption gives the lowest mean Jaccard@10 against the unperturbed "
                "ranking averaged over the shared rates (core) and at every shared rate",
                _noise_kinds_parts,
            ),
            measure=_noise_kinds,
            ours=lambda w: "; ".join(
                f"{q}: " + ", ".join(f"{k} {w['jaccard'][k][q]:.3f}" for k in w["kinds"]) for q in w["rates"]
            ),
        ),
        row(
            id="holdout_folds",
            paper="20/20 persona holdout: 77.0% vs 76.8%",
            where="§4, §7 (through fr calibrate --folds)",
            rule=Rule(
                "fr calibrate --folds K (5; 2 with --quick): α_c calibrated on K − 1 folds of personas, every question "
                "scored once by the fold that held it out; reproduced if the pooled calibrated − default pass rate is "
                "within ±2 pp (core) and its 95% paired-bootstrap CI lies inside ±3 pp",
                _folds_parts,
            ),
            measure=_folds,
            ours=lambda w: (
                f"calibrated {100 * w['calibrated']:.1f}% vs default {100 * w['default']:.1f}% ({_pp(w['diff'])} "
                f"{_ci(w['ci'])}, {w['k']} folds)"
            ),
            part="holdout (folds)",
        ),
    )
