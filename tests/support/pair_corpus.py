"""Corpora whose answers are known by construction (tests/theory/test_theory_claims_known.py,
tests/experiments/test_ledger_mutations.py): one persona per (support, gold wrong) pair, embedded by
:class:`KnownEmbedder` so that every similarity σ is exactly the number written, said at ``NEW``
(activation exactly 1) or ``OLD`` (activation exactly 0 in float32)."""

from __future__ import annotations

import math

import numpy as np
from suite_builders import suite_fact

from theory.corpus import build_corpus

ASKED = "2025-07-01"
NEW = ASKED  # age 0 → activation exactly 1
OLD = "1500-01-01"  # ~4.6e6 h → activation exactly 0 (float32 underflow)
OLDER = "1400-01-01"

FIN, LOG, OBL = "FINANCIAL_MATERIAL", "LOGISTICAL_CONTEXT", "OBLIGATIONS"
HOB, HEALTH, IDENT, PREF = "HOBBIES_RECREATION", "HEALTH_WELLBEING", "IDENTITY_SELF_CONCEPT", "PREFERENCES_HABITS"


class KnownEmbedder:
    """Test-only embedder with exactly known similarities: texts starting with ``q:`` → e₀;
    every other text t → σ_t·e₀ + √(1−σ_t²)·e_k(t) (σ_t from the table, k(t) unique)."""

    name = "known-test"

    def __init__(self, sigma: dict[str, float]):
        self.sigma = dict(sigma)
        self.index = {t: i + 1 for i, t in enumerate(sorted(self.sigma))}
        self.dim = len(self.sigma) + 1

    def embed(self, texts):
        out = np.zeros((len(texts), self.dim))
        for i, t in enumerate(texts):
            if t.startswith("q:"):
                out[i, 0] = 1.0
            else:
                s = self.sigma[t]
                out[i, 0] = s
                out[i, self.index[t]] = math.sqrt(1.0 - s * s)
        return out


def _fact(pid, fid, text, cats, said, **kw):
    return suite_fact(f"{pid}.{fid}", text, cats, 1, said, **kw)


def _suite(pid, facts, support=(), wrong=(), turns=(), sessions=None):
    sessions = sessions or [{"id": 1, "date": ASKED, "type": "critical", "topic": "x"}]
    q = {
        "id": f"{pid}_q",
        "text": f"q: {pid}",
        "asked_at": ASKED,
        "attack_vector": "AV_test",
        "relevant_categories": [],
        "correct_answer": "-",
        "wrong_answer_indicators": [],
        "intent": "current",
        "support": [f"{pid}.{i}" for i in support],
        "wrong": [f"{pid}.{i}" for i in wrong],
        "notes": "",
        "conflict": False,
    }
    return {
        "suite": "test",
        "version": 1,
        "persona": pid,
        "name": pid,
        "asked_at": ASKED,
        "sessions": sessions,
        "facts": list(facts),
        "turns": list(turns),
        "questions": [q],
    }


def pair_corpus(spec):
    """One persona per (name, (cat_s, σ_s, said_s), (cat_x, σ_x, said_x)): support s, gold wrong x."""
    suites, sigma = [], {}
    for pid, (cs, ss, ts), (cx, sx, tx) in spec:
        sigma[f"{pid} s"], sigma[f"{pid} x"] = ss, sx
        suites.append(
            _suite(
                pid,
                [_fact(pid, "s", f"{pid} s", cs, ts), _fact(pid, "x", f"{pid} x", cx, tx)],
                support=["s"],
                wrong=["x"],
            )
        )
    return build_corpus(suites, KnownEmbedder(sigma))


#: Every edge FINANCIAL: category α collapses to the global α and cannot separate P1 from S1.
SINGLE = [("P1", (FIN, 0.75, OLD), (FIN, 0.50, NEW)), ("S1", (FIN, 0.10, NEW), (FIN, 0.90, OLD))]
