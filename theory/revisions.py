"""The earlier rules of theory claims whose rule was revised after the claim had a verdict, each
kept executable so a report can give the earlier rule's verdict on the same witness beside the
current one. Texts are those ``theory/rule_record.json`` lists as ``earlier`` (matched exactly);
the statement names are the ones the claim's witness still carries."""

from __future__ import annotations

from .verdict import Rule, holds, statements, within

#: claim id → its earlier rules (any order; matched to the record by text)
REVISIONS: dict[str, tuple[Rule, ...]] = {
    # 542beaa: a SymPy simplification for n = 2…5 only; the merged-group part was not core
    "a6_identity": (
        statements(
            "reproduced if the pairwise identity and the merged-group decomposition simplify to 0 in SymPy",
            ("pairwise variance identity", "merged-group decomposition"),
            core=("pairwise variance identity",),
        ),
    ),
    # 542beaa: the same two statements, worded for an age-only view rather than the view without h
    "thm3p": (
        statements(
            "reproduced if age-only views of the upcoming and the expired obligation are equal, so a deterministic "
            "age-only ranker errs on ≥ 1/2 of the two queries, and frcore ranks every task right",
            ("age-only scorers err on ≥ 1/2", "event time lets frcore distinguish them"),
            core=("age-only scorers err on ≥ 1/2", "event time lets frcore distinguish them"),
        ),
    ),
}


# --------------------------------------------------------------------------- earlier parts (542beaa)
# The parts functions of rules revised in issue 29's relabelling, as they were: the current
# rules dropped or replaced them (theory/corpus_claims.py), so they live here, with their texts.


def _a7_1_parts_542beaa(w):
    lo, up = w["alpha_lower_median"], w["alpha_upper_median"]
    return [
        holds(
            "no single α (median suppression bound > median preservation bound)",
            lo > up,
            f"ours α ≥ {lo:.3f} vs α ≤ {up:.3f}; paper α ≥ 0.138 vs α ≤ 0.065",
            core=True,
        ),
        within("preservation bound", up, 0.065, atol=0.05),
        within("suppression bound", lo, 0.138, atol=0.05),
    ]


def _a5_parts_542beaa(w):
    return [
        holds(
            "behavioral < cognitive < uniform",
            w["v_behavioral"] < w["v_cognitive"] < w["v_uniform"],
            f"ours {w['v_behavioral']:.2e} / {w['v_cognitive']:.2e} / {w['v_uniform']:.2e}",
            core=True,
        ),
        within("behavioral variance", w["v_behavioral"], 3.60e-3, rtol=0.25),
        within("cognitive variance", w["v_cognitive"], 2.09e-2, rtol=0.25),
        within("uniform variance", w["v_uniform"], 4.69e-2, rtol=0.25),
        within("cognitive / optimal 3-partition", w["cognitive_over_optimal_3"], 4.2, rtol=0.25, unit="x"),
    ]


def _a6_parts_542beaa(w):
    return [
        holds(
            "measured gap exceeds the analytical bound",
            w["gap_measured"] > w["gap_analytic"] + 1e-9,
            f"ours measured {100 * w['gap_measured']:.1f}% vs analytical {100 * w['gap_analytic']:.1f}%; paper 36.9% "
            "vs 10.1%",
            core=True,
        ),
        within("measured gap", w["gap_measured"], 0.369, atol=0.05, scale=100, unit="%"),
        within("analytical bound", w["gap_analytic"], 0.101, atol=0.05, scale=100, unit="%"),
    ]


def _a14_parts_542beaa(w):
    f = w["facts"]
    return [
        within(
            "share of entries with primary weight < 0.90",
            f["share_primary_below_0_90"],
            0.668,
            atol=0.05,
            scale=100,
            unit="%",
        ),
        within("categories per entry (weight > 0.05)", f["mean_categories_above_0_05"], 2.0, atol=0.2),
    ]


REVISIONS.update(
    {
        # 542beaa: "partly" whenever the bounds conflict, though a suppression bound above 1 leaves no α at all
        "a7_1_witness": (
            Rule(
                "reproduced if the median LOGISTICAL suppression lower bound exceeds the median FINANCIAL "
                "preservation upper bound (core) and each median is within ±0.05 of the paper's",
                _a7_1_parts_542beaa,
            ),
        ),
        # 542beaa: the ordering part, which no corpus can fail, was the core
        "a5_partition": (
            Rule(
                "reproduced if behavioral < cognitive < uniform (core) and each of the three variances and the "
                "cognitive / optimal-3 ratio is within ±25% of the paper's. (\"The behavioral partition attains the "
                '11-group optimum" is not compared: the only 11-block partition of 11 categories is the behavioral '
                "one.)",
                _a5_parts_542beaa,
            ),
        ),
        # 542beaa: compared on one-hot gold categories, where the two gaps coincide by the identity
        "a6_gap": (
            Rule(
                "reproduced if the measured gap exceeds the analytical bound (core: soft membership amplifies the "
                "spread) and each is within ±5 pp of the paper's",
                _a6_parts_542beaa,
            ),
        ),
        # 542beaa: compared on one-hot gold categories
        "a14_corpus": (
            Rule(
                "reproduced if the share of fact entries with primary weight < 0.90 is within ±5 pp of 66.8% and the "
                "mean number of categories above 0.05 within ±0.2 of 2.0",
                _a14_parts_542beaa,
            ),
        ),
    }
)
