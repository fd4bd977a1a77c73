"""A persistent embedding cache keyed by (model, SHA-256 of the text), shared across banks.

The benchmark rebuilds a bank per persona on every run; caching sentence vectors by text hash
makes every run after the first skip the encoder. Location: ``$FRCORE_CACHE`` or
``~/.cache/frcore`` (file ``embeddings.sqlite``).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np


def default_cache_dir() -> Path:
    return Path(os.environ.get("FRCORE_CACHE", Path.home() / ".cache" / "frcore"))


def _key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class CachedEmbedder:
    """Wraps an embedder (``embed(texts) -> (n, d)``, ``name``, ``dim``) with a SQLite cache."""

    def __init__(self, embedder, path: str | os.PathLike | None = None):
        self.embedder = embedder
        self.name = embedder.name
        self.dim = embedder.dim
        path = Path(path) if path is not None else default_cache_dir() / "embeddings.sqlite"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(str(path), timeout=60, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vec (model TEXT, key BLOB, v BLOB, PRIMARY KEY (model, key))")
        self._db.commit()
        self.hits = 0
        self.misses = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        keys = [_key(t) for t in texts]
        found: dict[bytes, np.ndarray] = {}
        for start in range(0, len(keys), 500):
            chunk = list(dict.fromkeys(keys[start : start + 500]))
            q = f"SELECT key, v FROM vec WHERE model = ? AND key IN ({','.join('?' * len(chunk))})"
            for k, v in self._db.execute(q, [self.name, *chunk]):
                found[bytes(k)] = np.frombuffer(v, dtype=np.float32)
        missing = [i for i, k in enumerate(keys) if k not in found]
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            uniq = list(dict.fromkeys(texts[i] for i in missing))
            vecs = np.asarray(self.embedder.embed(uniq), dtype=np.float32)
            rows = [(self.name, _key(t), vecs[j].tobytes()) for j, t in enumerate(uniq)]
            self._db.executemany("INSERT OR REPLACE INTO vec VALUES (?, ?, ?)", rows)
            self._db.commit()
            for j, t in enumerate(uniq):
                found[_key(t)] = vecs[j]
        for i, k in enumerate(keys):
            out[i] = found[k]
        return out

    def close(self) -> None:
        self._db.close()
