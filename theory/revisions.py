"""The earlier rules of theory claims whose rule was revised after the claim had a verdict, each
kept executable so a report can give the earlier rule's verdict on the same witness beside the
current one. Texts are those ``theory/rule_record.json`` lists as ``earlier`` (matched exactly);
the statement names are the ones the claim's witness still carries."""

from __future__ import annotations

from .verdict import Rule, statements

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
