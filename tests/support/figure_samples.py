"""Small hand-written result files, one per input of paper_figures (tests/figures/test_figures_smoke.py,
tests/experiments/test_report.py): every figure and table script builds from :data:`SAMPLES`."""

from __future__ import annotations

CATS = ["IDENTITY_SELF_CONCEPT", "RELATIONAL_BONDS", "OBLIGATIONS"]


def _summ(kinds, rates):
    return {
        k: {str(r): {m: [1.0 - r / 2, 0.01] for m in ("jaccard", "tau", "displaced_per_query", "pass")} for r in rates}
        for k in kinds
    }


def _metrics(p):
    return {
        "pass": p,
        "staleness": 0.125,
        "hit@1": 0.5,
        "hit@5": 0.625,
        "hit@10": 0.75,
        "mrr": 0.5625,
        "pse": 0.0,
        "wsr": 0.5,
        "n": 8,
    }


SAMPLES = {
    "latency.json": {
        "results": [{"impl": "jax", "k": k, "median_us": 20 + 0.1 * k} for k in (1, 20, 100, 1000)],
        "slope_ns": {"jax": 100.0},
        "batched": {"B": 8, "k": 20, "scores_per_s": 1e6},
        "compile_s": 0.5,
    },
    "sweep_multiplier.json": {
        "config": {"feasible_jaccard": 0.95},
        "n_whole_range": 1,
        "per_category": {
            c: {
                "multipliers": [0.25, 1.0, 4.0],
                "jaccard": [0.9 + 0.02 * i, 1.0, 0.96],
                "tau": [0.95, 1.0, 0.97],
                "feasible": [1.0, 4.0] if i < 2 else [0.25, 4.0],
                "whole_range": i == 2,
            }
            for i, c in enumerate(CATS)
        },
    },
    "sweep_alpha.json": {
        "fr_full_pass": 0.5,
        "n_questions": 8,
        "coarse": {
            "rows": [
                {"alpha": a, "pass": 0.5 - a / 4, "ci": [-a / 2, 0.0], "mcnemar_p": 0.001 if a == 1.0 else 0.5}
                for a in (0.0, 0.5, 1.0)
            ],
            "bonferroni_threshold": 0.0167,
        },
        "fine": {
            "rows": [{"alpha": a, "pass": 0.5, "ci": [0.0, 0.0], "mcnemar_p": 1.0} for a in (0.0, 0.1)],
            "bonferroni_threshold": 0.025,
        },
        "uniform_alpha_0.3_per_av": {"AV1": 0.5, "AV8": 0.25},
        "fr_full_per_av": {"AV1": 0.5, "AV8": 0.5},
    },
    "sweep_noise.json": {"summary": _summ(["slot_key", "category"], [0.1, 0.3])},
    "sweep_labels.json": {
        "config": {"pairs": [["OBLIGATIONS", "LOGISTICAL_CONTEXT"]]},
        "summary": _summ(["label_pair"], [0.1, 0.5]),
    },
    "sweep_granularity.json": {
        "rows": [{"k": k, "pass": 0.3 + 0.02 * k} for k in range(1, 12)],
        "cognitive_3": {"pass": 0.31},
    },
    "sweep_holdout.json": {
        "default_pass_train": 0.5,
        "calibrated_pass_train": 0.625,
        "default_pass_test": 0.4375,
        "calibrated_pass_test": 0.5625,
    },
    "bench.json": {
        "suite": "hand-written",
        "n_questions": 8,
        "systems": {
            "fr-full": {"overall": _metrics(0.875), "per_av": {"AV1": _metrics(0.75)}},
            "flat-cosine": {"overall": _metrics(0.375), "per_av": {"AV1": _metrics(0.25)}},
        },
        "comparisons_vs_fr_full": {
            "flat-cosine": {"pass": {"diff": 0.5, "ci_low": 0.25, "ci_high": 0.75}, "mcnemar": {"p_value": 0.0313}}
        },
    },
    "theory.json": {
        "claims": [
            {
                "id": "thm1",
                "title": "Theorem 1",
                "paper": "P_e ≥ 1/2",
                "ours": "held on 40/40 | piped",
                "check": "pass",
                "verdict": "reproduced",
                "reason": "every part holds",
            },
            {
                "id": "a10",
                "title": "A.10",
                "paper": "99.8% infeasible",
                "ours": "97.0%",
                "check": "pass",
                "verdict": "not reproduced",
                "reason": "share differs",
            },
        ],
        "witnesses": {},
    },
}
