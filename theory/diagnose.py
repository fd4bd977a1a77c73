"""Diagnoses: for a claim that is not reproduced, experiments that isolate the cause.

Every data claim is re-run, unchanged, on variants of its corpus that each change one thing
the paper's setting differs in (:data:`VARIANTS`), and its rule decides the verdict again:

* ``router_categories`` — **metadata provenance**: the persona files carry one gold category
  per fact; the paper's bank was filled by an LLM extractor with soft memberships. Here every
  fact's categories come from FR-Bank's router (soft by construction). A claim's diagnosis may
  leave a variant out, with the reason (A.6 and A.14 leave this one out: the router's softmax
  temperature was chosen to match A.14's statistics).
* ``sigma_max`` — **σ scale**: our σ is a MiniLM cosine; the paper blends its retrieval
  backend's own score, on which its thresholds (floor σ ≥ 0.95, numeric rescue σ ≥ 0.85) were
  set. Here σ is divided by the question's largest σ (a per-query rule, no data fitted).
* ``generated`` — **data**: the built-in generated suite instead of the suite under study
  (skipped when the suite under study is the generated one).

Beside them, ``score_regime`` measures the state of frcore's score on the corpus (how many
candidates have activation ≈ 0, how often the floors and the numeric rescue can fire), which
locates causes in **the score** itself; claim-specific extras cover **interpretation**
(A.10's two pair rules). ``summary`` names the variants under which the verdict moves toward
the paper.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .verdict import NOT_COMPARABLE, NOT_REPRODUCED, PARTLY, REPRODUCED

#: name → (cause, what the variant changes)
VARIANTS: dict[str, tuple[str, str]] = {
    "router_categories": (
        "metadata provenance",
        "every fact's categories assigned by FR-Bank's router (soft) instead of the suite's gold category",
    ),
    "sigma_max": ("σ scale", "σ divided by the question's largest σ (per-query max-normalised)"),
    "generated": ("data", "the built-in generated suite (8 personas, seed 0) instead of the suite under study"),
}

_RANK = {NOT_REPRODUCED: 0, PARTLY: 1, REPRODUCED: 2, NOT_COMPARABLE: -1}


class Context:
    """What every claim of one run shares: the suites, the embedder, the corpus built from them
    (lazily) and the diagnosis variants (lazily, each built once).

    ``generated`` is False when the suites under study are the generated ones (the data
    variant is then skipped)."""

    def __init__(
        self,
        suites,
        embedder,
        label: str = "",
        *,
        generated: bool = False,
        build: Callable | None = None,
        corpus=None,
        params=None,
    ):
        self.suites = list(suites)
        self.params = params  # scoring parameters of every corpus built here (None: defaults)
        self.embedder = embedder
        self.label = label
        self.generated = generated
        self._build = build
        self._corpus = corpus
        self._variants: dict[str, Any] = {}
        self.errors: dict[str, str] = {}

    def _builder(self):
        build = self._build
        if build is None:
            from .corpus import build_corpus

            build = build_corpus
        if self.params is None:
            return build
        from dataclasses import replace

        return lambda *a, **k: replace(build(*a, **k), params=self.params)

    @property
    def corpus(self):
        if self._corpus is None:
            self._corpus = self._builder()(self.suites, self.embedder)
        return self._corpus

    def variant(self, name: str):
        """The corpus variant ``name`` (None when it does not apply or could not be built)."""
        if name not in VARIANTS:
            raise ValueError(f"variant: unknown {name!r}; expected one of {tuple(VARIANTS)}")
        if name in self._variants:
            return self._variants[name]
        v = None
        try:
            if name == "router_categories":
                v = self._builder()(self.suites, self.embedder, categories="router")
            elif name == "sigma_max":
                from .corpus import rescale_sigma

                v = rescale_sigma(self.corpus)
            elif name == "generated" and not self.generated:
                from .corpus import default_suites

                v = self._builder()(default_suites(8, 0), self.embedder)
        except Exception as e:
            self.errors[name] = f"{type(e).__name__}: {e}"
            v = None
        self._variants[name] = v
        return v


def score_regime(corpus) -> dict:
    """Where frcore's score sits on this corpus (valid candidates; support edges apart): share of
    activations below 0.01 (the blend is then ≈ (1 − α_c)·σ), σ quantiles, and the share of
    candidates on which the semantic floor (σ ≥ 0.95) and the numeric rescue (σ ≥ 0.85, numeric)
    can fire: the thresholds of the default parameters (``floor_sim_threshold``,
    ``numeric_sim_threshold``), as decimals (as a parameter file writes them)."""
    import frcore

    defaults = frcore.params_to_dict(frcore.default_params())["params"]
    floor, rescue = defaults["floor_sim_threshold"], defaults["numeric_sim_threshold"]
    act = np.asarray(corpus.activation(), dtype=np.float64)
    v = np.asarray(corpus.valid, dtype=bool)
    sup = v & np.asarray(corpus.support, dtype=bool)
    sim = np.asarray(corpus.sim, dtype=np.float64)
    num = np.asarray(corpus.numeric, dtype=bool)
    s = sim[v]
    q = np.quantile(s, [0.5, 0.9, 0.99]) if s.size else [np.nan] * 3
    return {
        "candidates": int(v.sum()),
        "share_activation_below_0_01": float((act[v] < 0.01).mean()) if v.any() else float("nan"),
        "support_share_activation_below_0_01": float((act[sup] < 0.01).mean()) if sup.any() else float("nan"),
        "sigma_median": float(q[0]),
        "sigma_p90": float(q[1]),
        "sigma_p99": float(q[2]),
        "sigma_max": float(s.max()) if s.size else float("nan"),
        "share_floor_can_fire": float((s >= floor).mean()) if s.size else float("nan"),
        "share_numeric_rescue_can_fire": float(((sim >= rescue) & num)[v].mean()) if v.any() else float("nan"),
        "support_sigma_median": float(np.median(sim[sup])) if sup.any() else float("nan"),
    }


def rerun(claim, corpus) -> dict:
    """Run ``claim``'s check and rule on ``corpus``: ours, check, verdict, parts holding."""
    try:
        res = claim.check(corpus)
        v = claim.rule.decide(res.witness) if res.passed else None
    except Exception as e:
        return {"check": "error", "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc(limit=4)}
    out = {"ours": res.ours, "check": "pass" if res.passed else "fail"}
    if v is not None:
        out.update(verdict=v.verdict, reason=v.reason, parts_holding=sum(p.holds for p in v.parts), parts=len(v.parts))
    return out


def pair_regime(corpus) -> dict:
    """Of the corpus's requirement pairs (:func:`theory.polytope.requirement_pairs`), the share
    whose two activations are both below 0.01: there b_s − b_x ≈ (1 − α)(σ_s − σ_x), so α only
    scales the σ gap and cannot reorder the pair (suppression of a stale edge that σ prefers
    needs α ≥ 1)."""
    from .polytope import corpus_pairs

    P = corpus_pairs(corpus)["pairs"]
    if len(P) == 0:
        return {"pairs": 0}
    both = (P.act_s < 0.01) & (P.act_x < 0.01)
    return {
        "pairs": len(P),
        "share_both_activations_below_0_01": float(both.mean()),
        "share_sigma_misordered": float((P.eps < 0).mean()),
    }


def _summary(base: Mapping[str, Any], variants: Mapping[str, dict], regime: Mapping[str, Any] | None = None) -> str:
    moved, same = [], []
    b_rank, b_hold = _RANK.get(base.get("verdict", ""), -1), base.get("parts_holding", 0)
    for name, r in variants.items():
        if "verdict" not in r:
            continue
        cause = VARIANTS[name][0]
        if _RANK[r["verdict"]] > b_rank or (r["verdict"] == base.get("verdict") and r["parts_holding"] > b_hold):
            moved.append(f"{cause} ({name}: {r['verdict']}, {r['parts_holding']}/{r['parts']} parts hold)")
        else:
            same.append(cause)
    if moved:
        txt = "moves toward the paper under " + "; ".join(moved)
        return txt + (f"; unchanged under {', '.join(same)}" if same else "")
    if not same:
        return "no variant could be run"
    txt = "no variant moves it toward the paper (" + ", ".join(same) + " tried)"
    if regime and regime.get("pairs"):
        txt += (
            f"; the score: {100 * regime['share_both_activations_below_0_01']:.0f}% of the {regime['pairs']} "
            "requirement pairs have "
            "both activations below 0.01, where the blend is (1 − α)·σ and α can only scale a σ gap, never reverse it"
        )
    return txt


def corpus_diagnosis(ctx: Context, claim, result, verdict, *, skip: Mapping[str, str] | None = None) -> dict:
    """The diagnosis of a data claim: the claim re-run on every applicable variant (except those
    in ``skip``: variant → why it is not run for this claim), the score regime of the corpus, and
    claim-specific extras."""
    base = {
        "verdict": verdict.verdict,
        "parts_holding": sum(p.holds for p in verdict.parts),
        "parts": len(verdict.parts),
    }
    variants = {}
    for name, (cause, what) in VARIANTS.items():
        if skip and name in skip:
            variants[name] = {"cause": cause, "what": what, "skipped": skip[name]}
            continue
        corpus = ctx.variant(name)
        if corpus is None:
            variants[name] = {
                "cause": cause,
                "what": what,
                "skipped": ctx.errors.get(name, "does not apply to this suite"),
            }
            continue
        variants[name] = {"cause": cause, "what": what, **rerun(claim, corpus)}
    regime = pair_regime(ctx.corpus)
    out: dict = {
        "variants": variants,
        "score_regime": score_regime(ctx.corpus),
        "pair_regime": regime,
        "summary": _summary(base, variants, regime),
    }
    w = result.witness
    if "pair_rules" in w:
        sh = w["pair_rules"]
        out["interpretation"] = {
            "cause": "interpretation",
            "what": "A.10's cross-pair share counted under both pair rules (the paper counts 1,566 cross-pairs)",
            **{k: sh[k] for k in ("satisfiable_alone", "all_pairs")},
            "rules": sh["rules"],
        }
    return out


def formal_diagnosis(ctx, claim, result, verdict) -> dict:
    """A formal claim that fails on our witness: which sub-statement fails, with frcore's own
    records from the witness (the cause is then the score, by construction of the witness)."""
    failing = [p.as_dict() for p in verdict.parts if not p.holds]
    keep = {
        k: v for k, v in result.witness.items() if k.startswith("frcore") or k in ("flat_errors", "removal_witnesses")
    }
    return {
        "cause": "score",
        "failing": failing,
        "frcore": keep,
        "summary": "frcore's score does not realise " + "; ".join(p["name"] for p in failing) + " on the witness",
    }
