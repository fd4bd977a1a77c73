"""Shared test helpers: dtype-keyed tolerances and tree comparison (−∞ must match −∞)."""

from __future__ import annotations

import jax
import numpy as np

import frcore as fr

#: (rtol, atol) keyed by the dtype of the array under test (the JAX side). float32 atol covers
#: log b where b ≈ α·a with a = exp(−x): the exponent carries ~x·ε relative error (x ≲ 30
#: before the 1e-12 clip), so |Δ log b| ≲ 30 · 1e-6.
TOLERANCE: dict[np.dtype, tuple[float, float]] = {
    np.dtype(np.float16): (1e-2, 1e-2),
    np.dtype(np.float32): (2e-5, 5e-5),
    np.dtype(np.float64): (1e-10, 1e-12),
}


def tolerance(dtype) -> tuple[float, float]:
    """(rtol, atol) for arrays of ``dtype``; integers and bools compare exactly."""
    dt = np.dtype(dtype)
    if not np.issubdtype(dt, np.floating):
        return (0.0, 0.0)
    return TOLERANCE[dt]


def assert_allclose(actual, expected, *, name: str = "", dtype=None) -> None:
    """Compare ``actual`` (JAX) against ``expected`` (twin): same shape, same ±∞ positions,
    finite values within the tolerance of ``actual``'s dtype."""
    a = np.asarray(actual)
    e = np.asarray(expected)
    assert a.shape == e.shape, f"{name}: shape {a.shape} != {e.shape}"
    rtol, atol = tolerance(dtype or a.dtype)
    if not np.issubdtype(a.dtype, np.floating):
        np.testing.assert_array_equal(a, e, err_msg=name)
        return
    a64, e64 = a.astype(np.float64), e.astype(np.float64)
    assert not np.isnan(a64).any(), f"{name}: NaN in actual at {np.argwhere(np.isnan(a64))[:3].tolist()}"
    assert not np.isnan(e64).any(), f"{name}: NaN in expected at {np.argwhere(np.isnan(e64))[:3].tolist()}"
    inf_a, inf_e = np.isinf(a64), np.isinf(e64)
    np.testing.assert_array_equal(inf_a, inf_e, err_msg=f"{name}: infinite entries differ")
    np.testing.assert_array_equal(a64[inf_a], e64[inf_e], err_msg=f"{name}: infinities of different sign")
    fin = ~inf_a
    np.testing.assert_allclose(a64[fin], e64[fin], rtol=rtol, atol=atol, err_msg=name)


def tree_allclose(actual, expected, *, name: str = "") -> None:
    """:func:`assert_allclose` leaf by leaf over two pytrees of the same structure; NamedTuple
    fields are named in the message."""
    fields = getattr(actual, "_fields", None)
    la, ta = jax.tree_util.tree_flatten(actual)
    le, te = jax.tree_util.tree_flatten(expected)
    assert len(la) == len(le), f"{name}: {len(la)} leaves != {len(le)}"
    for i, (x, y) in enumerate(zip(la, le)):
        leaf = fields[i] if fields and len(fields) == len(la) else str(i)
        assert_allclose(x, y, name=f"{name}.{leaf}")


def to_numpy(tree):
    """Any pytree with JAX leaves → the same structure with NumPy leaves."""
    return jax.tree_util.tree_map(np.asarray, tree)


def ref_params(params: fr.LifecycleParams) -> fr.LifecycleParams:
    """The twin's parameters: the very same float32 numbers, widened to float64 (thresholds
    then compare identically on both sides)."""
    return fr.params_to_numpy(params)


class BowEmbedder:
    """Test-only similarity: hashed bag of lower-cased words (``,``, ``?`` and ``:`` split
    words), unit rows — independent of the generator, the real data and MiniLM."""

    name, dim = "bow-test", 64

    def embed(self, texts):
        import hashlib

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for word in t.lower().replace(",", " ").replace("?", " ").replace(":", " ").split():
                out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
            n = np.linalg.norm(out[i])
            if n:
                out[i] /= n
        return out


def random_snapshot(rng: np.random.Generator, n: int, *, numeric: float = 0.1, dead: float = 0.0) -> dict:
    """Keyword arguments of a random :class:`frcore.bank.pipeline.Prepared` of ``n`` rows: half
    of them in slots (about four rows a slot, so later rows relate to earlier ones), a third with
    an event time, every lifecycle state, ``numeric`` the share of numeric rows and ``dead`` the
    share of ineligible ones; valid time 1,000 h."""
    from frcore._types import State
    from frcore.bank.pipeline import related_pairs

    slots = [None if rng.random() < 0.5 else f"s{rng.integers(0, max(1, n // 4))}" for _ in range(n)]
    said = rng.uniform(0, 1000, n).round()
    return dict(
        weights=rng.dirichlet(np.ones(11), size=n),
        said_at_h=said,
        event_h=np.where(rng.random(n) < 0.3, rng.uniform(0, 2000, n), np.nan),
        state=rng.integers(0, len(State), n),
        confidence=rng.choice([0.4, 1.0], n),
        numeric=rng.random(n) < numeric,
        slots=slots,
        eligible=rng.random(n) >= dead,
        at_h=1000.0,
        related=related_pairs(slots, said, [{}] * n, {}),
    )
