"""Hand-written results whose ledger verdicts are known by construction (tests/experiments/test_ledger.py,
tests/experiments/test_ledger_paper.py, tests/experiments/test_report.py,
tests/experiments/test_rule_record.py): :func:`base_results`
reproduces every row, the directly measured ones from :func:`_base_results` and the paper's empirical
ones from what :func:`paper_files` adds; :func:`_latency_curve` replaces the latency curve."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from experiments import ledger, ledger_paper as lp


def _metrics(p, hit1=0.3):
    return {
        "pass": p,
        "staleness": 0.1,
        "hit@1": hit1,
        "hit@5": 0.5,
        "hit@10": 0.6,
        "mrr": 0.4,
        "pse": 0.0,
        "wsr": 0.1,
        "n": 10,
    }


def _questions(system, avs_passed):
    """Per-question records: avs_passed = [(attack vector, passed), ...]."""
    return [
        {"system": system, "persona": "p", "id": f"q{i}", "attack_vector": f"{av}_x", "passed": ok, "terms": []}
        for i, (av, ok) in enumerate(avs_passed)
    ]


STATIC = [("AV3", True)] * 10 + [("AV5", True)] * 10 + [("AV8", True)] * 10 + [("AV1", True)] * 10


def _lme_comparison(group, diff, lo, hi, n=40):
    return {
        "a": "fr-full",
        "b": "fr-lifecycle-off",
        "group": group,
        "level": "turn",
        "metric": "recall_all@10",
        "diff": diff,
        "ci_low": lo,
        "ci_high": hi,
        "mean_a": 0.5 + diff,
        "mean_b": 0.5,
        "n": n,
    }


def _lme_summary() -> dict:
    """A LongMemEval summary: pooled neutral (CI inside ±3 pp), knowledge-update losing (CI below 0)."""
    ku = {"n": 8, "newest_above_older_rate": 0.5, "stale_only@10_rate": 0.25}
    pooled = {"turn": {"recall_any@10": 0.8, "recall_all@10": 0.6}}
    return {
        "systems": {
            s: {"pooled": pooled, "pooled_evaluable": {**pooled, "n": 40}, "knowledge_update": ku}
            for s in ("fr-full", "fr-lifecycle-off", "lme-bm25")
        },
        "comparisons": [
            _lme_comparison("pooled", 0.005, -0.02, 0.025),
            _lme_comparison("knowledge-update", -0.1, -0.2, -0.01, n=10),
            {**_lme_comparison("pooled", 0.5, 0.4, 0.6), "b": "flat-cosine"},  # another pair: never read
        ],
    }


def base_results() -> dict:
    """Results on which every directly measured row is reproduced (the paper's empirical rows'
    inputs added by :func:`paper_files`)."""
    return paper_files(_base_results())


def _base_results() -> dict:
    sysnames = ["fr-full", "fr-no-routing", "fr-uniform-decay", "flat-cosine", "fr-no-floors", "fr-global-alpha"]
    qs = []
    for s in sysnames:
        if s == "fr-full":
            qs += _questions(s, STATIC)
        else:  # every other system fails the 10 AV1 questions fr-full passes
            qs += _questions(s, STATIC[:30] + [("AV1", False)] * 10)
    systems = {
        s: {
            "overall": _metrics(0.8 if s == "fr-full" else 0.6, hit1=0.31 if s == "fr-full" else 0.19),
            "per_av": {av: _metrics(1.0) for av in ("AV1", "AV3", "AV5", "AV8")},
        }
        for s in sysnames
    }
    return {
        "latency.json": {
            "results": [{"impl": "jax", "k": k, "median_us": 10 + 0.01 * k} for k in (1, 10, 20, 100, 500, 1000)],
            "slope_ns": {"jax": 10.0},
            "dispatch_floor": [{"k": 20, "median_us": 9.0}],
        },
        "sweep_multiplier.json": {
            "n_whole_range": 10,
            "per_category": {
                **{f"C{i}": {"jaccard": [1.0], "feasible": [0.25, 4.0], "whole_range": True} for i in range(10)},
                "RELATIONAL_BONDS": {"jaccard": [0.9], "feasible": [0.33, 4.0], "whole_range": False},
            },
        },
        "sweep_labels.json": {
            "summary": {
                "label_pair": {
                    "0.1": {"jaccard": [0.97, 0], "tau": [0.99, 0], "displaced_per_query": [0.3, 0]},
                    "0.5": {"jaccard": [0.90, 0], "tau": [0.90, 0], "displaced_per_query": [1.0, 0]},
                }
            }
        },
        "sweep_noise.json": {
            "summary": {
                "slot_key": {
                    "0.1": {"tau": [0.999, 0], "jaccard": [0.9, 0]},
                    "0.3": {"tau": [0.995, 0], "jaccard": [0.77, 0]},
                }
            }
        },
        "sweep_granularity.json": {
            "rows": [{"k": k, "pass": min(0.5 + 0.02 * k, 0.64)} for k in range(1, 12)],
            "cognitive_3": {"pass": 0.5},
        },
        "sweep_alpha.json": {
            "fine": {
                "bonferroni_threshold": 0.0056,
                "rows": [{"alpha": a, "mcnemar_p": 0.3, "significant_bonferroni": False} for a in (0.1, 0.2)],
            },
            "uniform_alpha_0.3_per_av": {"AV8": 0.125},
            "fr_full_per_av": {"AV8": 0.9},
        },
        "sweep_holdout.json": {"calibrated_pass_test": 0.770, "default_pass_test": 0.768, "calibration_margin": 0.01},
        "bench.json": {"systems": systems, "questions": qs},
        "longmemeval/summary.json": _lme_summary(),
        "theory.json": {
            "claims": [
                {
                    "id": c,
                    "paper": "p",
                    "ours": f"ours {c}",
                    "check": "pass",
                    "verdict": "reproduced",
                    "rule": "r",
                    "reason": "every part holds",
                    "parts": [],
                    "diagnosis": None,
                }
                for c in (
                    "thm1",
                    "thm2",
                    "thm3p",
                    "thm3pp",
                    "a10_global_alpha",
                    "a10_category_alpha",
                    "a12_decomposition",
                    "a5_partition",
                    "a14_corpus",
                )
            ]
        },
    }


def _write(tmp: Path, files: dict) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    for name, obj in files.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(json.dumps(obj))
    return tmp


def _rows(tmp, files) -> dict:
    return {r["id"]: r for r in ledger.evaluate(_write(tmp, files))}


# --------------------------------------------------------------------------- the paper's empirical rows


def _q(system, i, av, passed, stale=False, hit10=None, terms=None):
    return {
        "system": system,
        "persona": "p",
        "id": f"{av}-{i}",
        "attack_vector": f"{av}_x",
        "passed": passed,
        "stale": stale,
        "outcome": {"hit10": passed if hit10 is None else hit10},
        "terms": terms or [],
    }


def _per_av(values: dict[str, float]) -> dict:
    return {av: {"pass": v, "staleness": 0.1, "n": 10} for av, v in values.items()}


def _extras(system: str) -> list[dict]:
    """27 AV2 questions: fr-full (and every system but flat cosine and overwrite) passes 20 clean
    ones, fails 3 stale with a correct edge in the top 10 and 4 stale without one."""
    out = []
    for i in range(27):
        if system == "overwrite":  # stale on fr-full's 7 and 5 more: 12 stale, all failing
            ok, stale = i < 15, i >= 15
        else:
            ok, stale = i < 20, i >= 20
        hit = ok or (20 <= i < 23 and system not in ("overwrite",))
        out.append(_q(system, i, "AV2", ok, stale=stale, hit10=hit))
    return out


def paper_files(files: dict) -> dict:
    """``files`` (the ledger's constructed results) with everything the paper's empirical rows read,
    each row reproduced: the pooled (p0, p1) are (1, 0), so A.12's prediction equals the observed gap."""
    files = copy.deepcopy(files)
    bench = files["bench.json"]
    qs = []
    for q in bench["questions"]:
        fail = not q["passed"]
        # the questions a system fails in the base results (AV1 for everything but fr-full) are stale
        qs.append({**q, "stale": fail, "outcome": {"hit10": q["passed"]}})
    for s in sorted({q["system"] for q in qs}):
        qs += _extras(s)
    full = [q for q in qs if q["system"] == "fr-full"]
    qs += [{**q, "system": "fr-untyped"} for q in full]
    for s in ("bm25", "uniform-decay"):
        qs += [{**q, "system": s} for q in full]
    base = [q for q in full if not q["id"].startswith("AV2")]
    qs += [{**q, "system": "overwrite"} for q in base] + _extras("overwrite")
    bench["questions"] = qs
    top = {f"AV{i}": 0.9 for i in range(1, 10)} | {"AV7": 0.05}
    low = {f"AV{i}": 0.8 for i in range(1, 10)} | {"AV7": 0.5, "AV9": 0.9}
    for s in ("fr-full", "flat-cosine", "bm25", "uniform-decay", "overwrite", "fr-untyped"):
        summary = bench["systems"].get(s) or copy.deepcopy(bench["systems"]["flat-cosine"])
        bench["systems"][s] = {**summary, "per_av": _per_av(top if s == "fr-full" else low)}
    bench["systems"]["fr-cognitive"] = copy.deepcopy(bench["systems"]["flat-cosine"])

    squat = [{"age": 1000.0, "activation": 0.5}]
    quiet = [{"age": 1000.0, "activation": 0.0}]
    paper_qs = []
    for s in lp.PAPER_SYSTEMS:
        for i in range(20):
            fail8 = s == "fr-no-numeric" and i < 6
            paper_qs.append(_q(s, i, "AV8", not fail8, terms=quiet))
        for i in range(20):
            fail1 = (s == "fr-rates-800x" and i < 8) or (s == "fr-cognitive-partition" and i < 5)
            paper_qs.append(_q(s, i, "AV1", not fail1, terms=squat if s == "fr-rates-800x" else quiet))
    cog = {f"AV{i}": 0.8 for i in range(1, 10)} | {"AV2": 0.95, "AV6": 0.95}
    files[lp.BENCH_PAPER] = {
        "systems": {
            s: {"per_av": _per_av(cog if s == "fr-cognitive-partition" else {f"AV{i}": 0.9 for i in range(1, 10)})}
            for s in lp.PAPER_SYSTEMS
        },
        "questions": paper_qs,
    }
    noise = files["sweep_noise.json"]["summary"]
    for kind, j in (("category", 0.95), ("retraction", 0.97), ("event_time", 0.99)):
        noise[kind] = {r: {"tau": [0.999, 0], "jaccard": [j, 0]} for r in ("0.1", "0.3")}
    files[lp.CALIBRATE_FOLDS] = {
        "k": 5,
        "pooled": {
            "n": 100,
            "pass_a": 0.768,
            "pass_b": 0.770,
            "diff": 0.002,
            "diff_ci": [-0.01, 0.015],
            "mcnemar_p": 1.0,
            "discordant": {"a_only": 1, "b_only": 1},
        },
        "folds": [{"feasible": False}] * 5,
    }
    return files


# --------------------------------------------------------------------------- latency: both parts of "linear"

FLAT = [12.0, 11.5, 12.2, 11.8, 12.1, 12.0]  # a dispatch floor with noise: no line, no growth


def _latency_curve(medians):
    def f(d):
        ks = (1, 10, 20, 100, 500, 1000)
        d["latency.json"]["results"] = [{"impl": "jax", "k": k, "median_us": m} for k, m in zip(ks, medians)]

    return f
