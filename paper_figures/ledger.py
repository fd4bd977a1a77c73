"""The paper's numbers each figure or table sets beside ours (SPEC §8 ledger), read from the
ledger's single table :data:`experiments.ledger.PAPER`.

Used when a results file carries no ``"paper"`` entry of its own; when it does, the file's
entry wins (it was written by the sweep that knows the comparison)."""

from __future__ import annotations

from experiments.ledger import PAPER

#: §D.9: median latency at k=20 (μs) and per-candidate slope (ns)
LATENCY = {k: PAPER["latency"][k] for k in ("median_us_k20", "slope_ns")}
#: multiplier sweep: categories tolerating the whole 0.25x–4x range; RELATIONAL_BONDS' range
MULTIPLIER = PAPER["multiplier"]
#: fine α sweep: every p-value fails Bonferroni at this threshold; uniform α = 0.3 AV8 pass
ALPHA = PAPER["alpha"]
#: metadata noise: slot-key corruption
NOISE = PAPER["noise"]
#: category-label perturbation inside confused pairs
LABELS = PAPER["labels"]
#: granularity: gains saturate near this many clusters
GRANULARITY = PAPER["granularity"]
#: §D.6 LifecycleBench pass (%) for the systems that map onto ours
ABLATION_D6 = PAPER["ablation_d6"]
#: what the paper called each mapped system
ABLATION_D6_NAMES = PAPER["ablation_d6_names"]
#: persona holdout pass on the held-out half
HOLDOUT = PAPER["holdout"]
