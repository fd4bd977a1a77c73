"""The σ scale of the pipeline (``PipelineConfig.sigma_scale``) and the ``fr-sigma-max`` system:
with ``max`` the σ handed to the score is σ / max_j σ_j over the query's distilled candidates;
with ``raw`` (the default) nothing changes."""

from __future__ import annotations

import dataclasses
from contextlib import closing, contextmanager
from unittest import mock

import numpy as np
import pytest
from helpers import random_snapshot
from hypothesis import given, settings, strategies as st

from frcore import default_params
from frcore._packed import ROW_START
from frcore.bank import Bank, PipelineConfig
from frcore.bank.pipeline import Prepared, _stages, retrieve
from frcore.bank.pipeline._sigma import scale_sigma_max
from frcore.bench._systems import DEFAULT_SYSTEMS, SYSTEMS, resolve_systems

SIM, VALID = ROW_START["sim"], ROW_START["valid"]

FACTS = [
    {
        "id": "diet1",
        "text": "Is vegetarian and has been for years",
        "categories": {"PREFERENCES_HABITS": 1.0},
        "slot": "diet",
        "said_at": "2025-01-05",
    },
    {
        "id": "diet2",
        "text": "Started eating fish again, pescatarian now",
        "categories": {"PREFERENCES_HABITS": 1.0},
        "slot": "diet",
        "said_at": "2025-06-01",
        "links": {"supersedes": "diet1"},
    },
    {
        "id": "trip",
        "text": "Flying to Lisbon for a conference on March 3",
        "categories": {"LOGISTICAL_CONTEXT": 1.0},
        "said_at": "2025-02-01",
        "event_time": "2025-03-03",
    },
    {
        "id": "rent",
        "text": "Pays 1200 euros rent a month",
        "categories": {"FINANCIAL_MATERIAL": 1.0},
        "said_at": "2025-02-05",
        "numeric": True,
    },
    {
        "id": "dog",
        "text": "Thinking about adopting a dog",
        "categories": {"PROJECTS_ENDEAVORS": 1.0},
        "said_at": "2025-02-10",
    },
    {
        "id": "nodog",
        "text": "Decided against the dog after all",
        "categories": {"PROJECTS_ENDEAVORS": 1.0},
        "said_at": "2025-03-10",
        "links": {"retracts": "dog"},
    },
    {
        "id": "sister",
        "text": "Has a sister named Ines who lives in Porto",
        "categories": {"RELATIONAL_BONDS": 1.0},
        "said_at": "2025-01-02",
    },
]
QUERIES = [
    ("is the user vegetarian or pescatarian diet", "2025-07-01"),
    ("what diet did the user use to follow before switching", "2025-07-01"),
    ("any upcoming trips or conferences", "2025-02-20"),
    ("how much is the rent", "2025-07-01"),
    ("sister in Porto", "2025-07-01"),
    ("zzz qqq", "2025-07-01"),
]


@contextmanager
def _sigma_seen():
    """Record the σ that :func:`retrieve` hands to the kernel inputs."""
    seen: list[np.ndarray] = []
    real = _stages.kernel_inputs

    def spy(prep, cand, sim, *args, **kwargs):
        seen.append(np.array(sim, dtype=np.float64, copy=True))
        return real(prep, cand, sim, *args, **kwargs)

    with mock.patch.object(_stages, "kernel_inputs", spy):
        yield seen


def _prepared(rng: np.random.Generator, n: int) -> Prepared:
    return Prepared(**random_snapshot(rng, n, numeric=0.2))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_max_scale_divides_sigma_by_its_maximum(data):
    n = data.draw(st.integers(1, 120), label="n")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    prep = _prepared(rng, n)
    mode = data.draw(st.sampled_from(["random", "ties", "zero"]), label="mode")
    if mode == "zero":  # nothing matches: every raw σ is 0
        cosine, bm25 = -rng.uniform(0, 0.5, n), np.zeros(n)
    elif mode == "ties":
        cosine, bm25 = rng.choice([-0.2, 0.0, 0.3, 0.3, 0.7], n), rng.choice([0.0, 1.5, 2.0], n)
    else:
        cosine, bm25 = rng.uniform(-0.3, 1.0, n), rng.choice([0.0, 0.0, 0.7, 3.0], n) * rng.random(n)
    routing = np.zeros(11)
    routing[rng.integers(0, 11)] = 1.0
    base = PipelineConfig(
        propagation=data.draw(st.sampled_from([0.0, 0.5, 1.0]), label="propagation"),
        n_distill=data.draw(st.sampled_from([0, 5, 20]), label="n_distill"),
    )
    kw = dict(
        cosine=cosine,
        bm25=bm25,
        routing=routing,
        intent=data.draw(st.sampled_from(["current", "historical", "broad"])),
        params=default_params(),
    )
    with _sigma_seen() as seen:
        raw = retrieve(prep, config=base, **kw)
        scaled = retrieve(prep, config=dataclasses.replace(base, sigma_scale="max"), **kw)
    assert len(seen) == 2
    s_raw, s_max = seen
    # the same candidate set (the scale applies after distillation), σ divided by its maximum
    np.testing.assert_array_equal(scaled.rows, raw.rows)
    assert raw.n_candidates == scaled.n_candidates and raw.n_distilled == scaled.n_distilled
    top = s_raw.max()
    if top > 0:
        np.testing.assert_array_equal(s_max, s_raw / top)
        assert s_max.max() == 1.0
    else:
        np.testing.assert_array_equal(s_max, s_raw)
    if mode == "zero":
        assert (s_raw == 0).all() and (s_max == 0).all()
    assert np.isfinite(s_max).all()
    # as packed for the kernel: valid candidates carry σ' (clipped, float32), padding is untouched
    c_raw, c_max = raw.packed_candidates, scaled.packed_candidates
    valid = c_max[VALID] > 0
    assert valid.sum() == s_max.size
    np.testing.assert_array_equal(c_max[SIM, valid], np.clip(s_max, 0.0, 1.0).astype(np.float32))
    np.testing.assert_array_equal(np.delete(c_max, SIM, axis=0), np.delete(c_raw, SIM, axis=0))
    np.testing.assert_array_equal(c_max[SIM, ~valid], c_raw[SIM, ~valid])
    assert np.isfinite([r.score for r in scaled.results]).all()


def test_all_zero_sigma_stays_zero():
    s = np.zeros(7)
    out = scale_sigma_max(s)
    np.testing.assert_array_equal(out, s)
    assert scale_sigma_max(np.zeros(0)).size == 0
    np.testing.assert_array_equal(scale_sigma_max(np.array([0.2, 0.5, 0.0])), np.array([0.4, 1.0, 0.0]))


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    """One hash-embedder bank for the module's read-only queries."""
    with closing(Bank.open(str(tmp_path_factory.mktemp("sigma") / "bank.db"), embedder="hash")) as b:
        b.add(FACTS)
        yield b


def _same(a, b):
    assert a.results == b.results
    assert a.candidate_ids == b.candidate_ids and a.intent == b.intent
    assert (a.n_candidates, a.n_distilled) == (b.n_candidates, b.n_distilled)
    assert a.scored.packed_candidates.tobytes() == b.scored.packed_candidates.tobytes()
    assert a.scored.packed_query.tobytes() == b.scored.packed_query.tobytes()


def test_raw_scale_changes_nothing(bank):
    assert PipelineConfig().sigma_scale == "raw"
    for text, at in QUERIES:
        plain = bank.query(
            text, at=at, config=PipelineConfig()
        )  # the paper's pipeline (the bank's default is fr-plus's)
        for cfg in (PipelineConfig(sigma_scale="raw"), PipelineConfig()):
            _same(plain, bank.query(text, at=at, config=cfg))


def test_max_scale_through_the_bank(bank):
    moved = 0
    for text, at in QUERIES:
        plain = bank.query(text, at=at)
        res = bank.query(text, at=at, config=SYSTEMS["fr-sigma-max"].pipeline)
        assert res.candidate_ids == plain.candidate_ids
        c, c0 = res.scored.packed_candidates, plain.scored.packed_candidates
        valid = c[VALID] > 0
        s0 = c0[SIM, valid]
        if s0.max() > 0:
            assert c[SIM, valid].max() == 1.0
            moved += not np.array_equal(c[SIM, valid], s0)
        else:
            np.testing.assert_array_equal(c[SIM, valid], s0)
    assert moved > 0


@pytest.mark.parametrize("bad", ["Max", "", "minmax", "none", None, 1.0])
def test_bad_sigma_scale_names_the_field(bad):
    with pytest.raises(ValueError, match="sigma_scale"):
        PipelineConfig(sigma_scale=bad)


def test_sigma_max_system_resolves_but_is_not_default():
    (s,) = resolve_systems("fr-sigma-max")
    assert s.name == "fr-sigma-max" and s is SYSTEMS["fr-sigma-max"]
    assert s.pipeline.sigma_scale == "max" and s.params_fn is None
    assert dataclasses.replace(s.pipeline, sigma_scale="raw") == SYSTEMS["fr-full"].pipeline  # FR-full otherwise
    assert "fr-sigma-max" not in DEFAULT_SYSTEMS
    assert "fr-sigma-max" not in [x.name for x in resolve_systems("all")]
    assert [x.name for x in resolve_systems("fr-full,fr-sigma-max")] == ["fr-full", "fr-sigma-max"]
    # the sweeps' candidate sets come from FR-full, whose σ is raw
    assert SYSTEMS["fr-full"].pipeline.sigma_scale == "raw" and SYSTEMS["fr-full"].pipeline == PipelineConfig()
