"""The regime diagnostics (experiments.ledger.bench_regime, theory.diagnose.score_regime) count σ
against the score's thresholds as the parameters hold them (floor_sim_threshold,
numeric_sim_threshold), never against literals of their own."""

from __future__ import annotations

import numpy as np
import pytest

import frcore
from experiments.ledger import bench_regime
from theory.diagnose import score_regime

SIGMAS = (0.5, 0.86, 0.96, 1.0)


class _Results:
    def get(self, _file):
        terms = [{"activation": 0.001, "sim_linked": s, "sim_bm25": s} for s in SIGMAS]
        return {"questions": [{"system": "fr-full", "attack_vector": "AV1", "terms": terms}]}


class _Corpus:
    valid = np.ones((1, len(SIGMAS)), dtype=bool)
    support = np.zeros((1, len(SIGMAS)), dtype=bool)
    sim = np.asarray([SIGMAS])
    numeric = np.ones((1, len(SIGMAS)), dtype=bool)

    def activation(self):
        return np.zeros((1, len(SIGMAS)))


def _shares():
    b, c = bench_regime(_Results()), score_regime(_Corpus())
    return (
        b["share_floor_can_fire"],
        b["share_rescue_threshold"],
        c["share_floor_can_fire"],
        c["share_numeric_rescue_can_fire"],
    )


def test_default_thresholds():
    # σ = (1 − γ)·σ + γ·σ = σ: 2 of 4 at or above 0.95, 3 of 4 at or above 0.85
    assert _shares() == pytest.approx((0.5, 0.75, 0.5, 0.75))


def test_thresholds_follow_the_parameters(monkeypatch):
    base = frcore.default_params

    def moved(dtype=np.float32):
        return base(dtype)._replace(floor_sim_threshold=np.float32(0.99), numeric_sim_threshold=np.float32(0.4))

    monkeypatch.setattr(frcore, "default_params", moved)
    assert _shares() == pytest.approx((0.25, 1.0, 0.25, 1.0))
