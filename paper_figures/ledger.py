"""The paper's numbers each figure or table sets beside ours (SPEC §8 ledger).

Used when a results file carries no ``"paper"`` entry of its own; when it does, the file's
entry wins (it was written by the sweep that knows the comparison)."""

from __future__ import annotations

#: §D.9: median latency at k=20 (μs) and per-candidate slope (ns)
LATENCY = {"median_us_k20": 47.0, "slope_ns": 1960.0}
#: multiplier sweep: categories tolerating the whole 0.25x–4x range; RELATIONAL_BONDS' range
MULTIPLIER = {"n_whole_range": 10, "RELATIONAL_BONDS": [0.33, 4.0], "whole_range": [0.25, 4.0]}
#: fine α sweep: every p-value fails Bonferroni at this threshold; uniform α = 0.3 AV8 pass
ALPHA = {"fine_all_fail_bonferroni": True, "bonferroni_threshold": 0.0056, "uniform_alpha_0.3_AV8": 0.125}
#: metadata noise: slot-key corruption
NOISE = {"slot_key": {"tau": 0.997, "jaccard": 0.76}}
#: category-label perturbation inside confused pairs
LABELS = {"0.1": {"jaccard": 0.974, "jaccard_sd": 0.002, "displaced": 0.29}, "0.5": {"jaccard": 0.905, "tau": 0.897}}
#: granularity: gains saturate near this many clusters
GRANULARITY = {"saturates_near": 7}
#: §D.6 LifecycleBench pass (%) for the systems that map onto ours
ABLATION_D6 = {"fr-full": 72.9, "fr-no-routing": 66.7, "fr-uniform-decay": 66.5, "flat-cosine": 60.7}
#: what the paper called each mapped system
ABLATION_D6_NAMES = {"fr-full": "full", "fr-no-routing": "no-routing", "fr-uniform-decay": "uniform decay", "flat-cosine": "baseline"}
#: persona holdout pass on the held-out half
HOLDOUT = {"calibrated": 0.770, "default": 0.768}
