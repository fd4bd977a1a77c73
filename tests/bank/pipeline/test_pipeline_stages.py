"""The pipeline's stages one at a time (frcore.bank.pipeline._stages), each against a plain-Python
statement of what docs/benchmark.md says it returns, and the one hybrid σ."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import random_snapshot
from hypothesis import given, settings, strategies as st

from frcore.bank import PipelineConfig, hybrid_sigma
from frcore.bank.pipeline import Prepared
from frcore.bank.pipeline._stages import Similarities, bm25_candidates, cosine_candidates, dedup, distill

#: (cos, bm25 share, γ, σ) worked by hand; all exact in binary floating point
HYBRID_CASES = [
    (0.5, 1.0, 0.25, 0.625),
    (0.75, 0.0, 0.5, 0.375),
    (0.25, 0.5, 0.0, 0.25),  # γ = 0: the cosine alone
    (0.25, 0.5, 1.0, 0.5),  # γ = 1: the BM25 share alone
]


@pytest.mark.parametrize(("cos", "share", "gamma", "expected"), HYBRID_CASES, ids=lambda v: str(v))
def test_hybrid_sigma_by_hand(cos, share, gamma, expected):
    assert hybrid_sigma(cos, share, gamma) == expected
    out = hybrid_sigma(np.array([cos, cos]), np.array([share, 0.0]), gamma)
    np.testing.assert_array_equal(out, [expected, (1.0 - gamma) * cos])


def _case(data) -> tuple[Prepared, Similarities, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    n = data.draw(st.integers(1, 60))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    prep = Prepared(**random_snapshot(rng, n, dead=0.3))
    # few distinct values: ties are frequent, and some cosines fall outside [0, 1]
    cosine = rng.choice([-0.2, 0.0, 0.3, 0.6, 1.2], n)
    bm25 = rng.choice([0.0, 0.0, 1.5, 3.0], n)
    config = PipelineConfig(propagation=0.0)  # cos is the clipped cosine: no related rows
    _, alive, alive_idx = prep.variant(False, False)
    return prep, Similarities(prep, cosine, bm25, alive, alive_idx, config), cosine, bm25, alive, alive_idx


def _best(rows, value, count):
    return sorted(rows, key=lambda i: (-value[i], i))[:count]


@settings(max_examples=60)
@given(st.data())
def test_candidate_stages_take_the_top_alive_rows_ties_by_row(data):
    prep, sims, cosine, bm25, alive, alive_idx = _case(data)
    count = data.draw(st.integers(1, 12))
    alive_rows = [i for i in range(prep.n) if alive[i]]
    got = cosine_candidates(sims, alive, alive_idx, count)
    want = _best(alive_rows, np.clip(cosine, 0.0, 1.0), count)
    assert (got.tolist() if got is not None else []) == want
    got = bm25_candidates(sims, alive, alive_idx, count)
    want = _best([i for i in alive_rows if bm25[i] > 0], bm25, count)
    assert (got.tolist() if got is not None else []) == want
    assert cosine_candidates(sims, alive, alive_idx, 0) is None
    assert bm25_candidates(sims, alive, alive_idx, 0) is None


@settings(max_examples=60)
@given(st.data())
def test_dedup_then_distill(data):
    prep, sims, cosine, bm25, alive, _ = _case(data)
    n = prep.n
    rows_of = st.lists(st.integers(0, n - 1), min_size=1, unique=True).map(lambda r: np.asarray(sorted(r), np.int64))
    found = [("cosine", data.draw(rows_of)), ("bm25", data.draw(rows_of))]
    cand, sig = dedup(found, sims)
    rows = sorted({int(i) for _, r in found for i in r})
    assert cand.tolist() == rows
    top = bm25[alive].max() if alive.any() else 0.0
    share = [bm25[i] / top if top > 0 else 0.0 for i in rows]
    want = [0.7 * min(max(cosine[i], 0.0), 1.0) + 0.3 * s for i, s in zip(rows, share)]
    np.testing.assert_allclose(sig, want, rtol=1e-12, atol=1e-12)

    n_distill = data.draw(st.integers(0, 8))
    config = PipelineConfig(n_distill=n_distill, staleness_aware=data.draw(st.booleans()))
    kept, kept_sig = distill(prep, cand, sig, 0, config)
    if n_distill == 0 or cand.size <= n_distill:
        assert kept.tolist() == cand.tolist()
        return
    ok = prep.admitted_rows(False, False, 0, config.score)
    key = {int(r): (-int(ok[r]) if config.staleness_aware else 0, -float(s), int(r)) for r, s in zip(cand, sig)}
    assert kept.tolist() == sorted(key, key=key.__getitem__)[:n_distill]
    np.testing.assert_array_equal(kept_sig, sig[np.searchsorted(cand, kept)])
