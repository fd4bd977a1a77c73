"""FR-Bank's layers meet in Bank, the one orchestrator: an add validates, embeds and then enters
the store once (its guard, transaction and index updates are the store's own work), a query
reads the store once per ranking (one load, one version), and the store is handed vectors,
never a function of the bank to call back."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from frcore.bank import Bank
from frcore.bank._bank import IndexedRows
from frcore.bank.search import AnnConfig, ApproximateRows
from frcore.bank.storage import Store


class CountingStore:
    """A store whose method calls from outside are counted (the store's own calls inside a
    method are not: they run on the store itself)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.calls: list[str] = []

    def __getattr__(self, name: str):
        value = getattr(self._store, name)
        if not callable(value):
            return value

        def counted(*args, **kwargs):
            self.calls.append(name)
            return value(*args, **kwargs)

        return counted


def _facts(n: int, prefix: str = "f") -> list[dict]:
    return [
        {
            "id": f"{prefix}{i}",
            "text": f"the user keeps bees number {i}",
            "categories": {"OTHER": 1.0},
            "said_at": "2025-01-02",
        }
        for i in range(n)
    ]


@pytest.mark.parametrize("ann", [False, True])
def test_an_add_enters_the_store_once(tmp_path, ann):
    bank = Bank.open(str(tmp_path / "b.db"), embedder="hash", ann=ann)
    counting = CountingStore(bank.store)
    bank.store = counting
    added = bank.add(_facts(5))
    assert list(added) == [f"f{i}" for i in range(5)]
    assert counting.calls == ["add_facts"]
    counting.calls.clear()
    again = bank.add(_facts(5))  # a retry: unchanged, still one call
    assert list(again) == [] and list(again.unchanged) == [f"f{i}" for i in range(5)]
    assert counting.calls == ["add_facts"]
    bank.store = counting._store
    assert bank.query("bees", at="2025-02-01", k=3).ids  # what the one call stored is found
    bank.close()


#: how each bank of the query test holds its rows' vectors: the index's matrix (all rows, or
#: a user's among them), the approximate index over it, or the vectors stored in SQLite
_QUERY_BANKS = {
    "index": IndexedRows,
    "index, one user of two": IndexedRows,
    "ann": ApproximateRows,
    "no index": np.ndarray,
    ":memory:": np.ndarray,
}


@pytest.mark.parametrize("kind", list(_QUERY_BANKS))
def test_a_query_enters_the_store_once(tmp_path, kind):
    """One Bank.query reads the store once (Store.read) and reads its version once more after
    ranking (the guard of the erase promise), nothing else: on a view the bank derives from the
    read, on the same view cached, and after a write (a new version)."""
    path = ":memory:" if kind == ":memory:" else str(tmp_path / "b.db")
    ann = AnnConfig(min_rows=0, candidates=20) if kind == "ann" else None
    bank = Bank.open(path, embedder="hash", index=kind != "no index", ann=ann)
    bank.add(_facts(100))  # an approximate index is made from 64 rows on
    if kind == "index, one user of two":
        bank = bank.for_user("u1")
        bank.add(_facts(40, "u"))
    counting = CountingStore(bank.store)
    bank.store = counting
    for step in ("derived", "cached", "after a write"):
        if step == "after a write":
            bank.store = counting._store
            bank.add(_facts(1, "new"))
            bank.store = counting
        assert bank.query("bees", at="2025-02-01", k=3).ids, step
        assert counting.calls == ["read", "version"], step
        counting.calls.clear()
    assert bank._views and all(isinstance(v.vectors, _QUERY_BANKS[kind]) for v in bank._views.values())
    bank.store = counting._store
    bank.close()


def test_the_store_is_given_vectors_not_a_callback():
    params = inspect.signature(Store.add_facts).parameters
    assert "vectors" in params and "embed" not in params
    for name, p in params.items():  # no parameter is annotated as a callable the store would call
        assert "Callable" not in str(p.annotation), name


def test_vectors_given_for_an_unchanged_fact_stored_without_one_are_written(tmp_path):
    """A retry of a batch first stored without vectors (an older bank) fills them in."""
    store = Store.open(tmp_path / "s.db")
    facts = _facts(3)
    store.add_facts(facts)  # no vectors
    assert store.get_embeddings("m", ["f0", "f1", "f2"])[1] == ["f0", "f1", "f2"]
    vecs = np.eye(3, 4, dtype=np.float32)
    added = store.add_facts(facts, vectors=("m", vecs))
    assert list(added) == [] and list(added.unchanged) == ["f0", "f1", "f2"]
    got, missing = store.get_embeddings("m", ["f0", "f1", "f2"])
    assert missing == [] and np.array_equal(got, vecs)
    store.close()


def test_vectors_must_match_the_batch(tmp_path):
    from frcore.bank.storage import StoreError

    store = Store.open(tmp_path / "s.db")
    with pytest.raises(StoreError, match=r"expected shape \(3, d\)"):
        store.add_facts(_facts(3), vectors=("m", np.ones((2, 4), np.float32)))
    assert store.count() == 0  # nothing written
    store.close()


def test_no_bank_module_over_800_lines_nor_function_over_100():
    """The size rule of the layers (docs/architecture.md): every module of frcore/bank at most
    800 lines, every function at most 100 (rule data files are not modules)."""
    import ast
    from pathlib import Path

    import frcore.bank

    root = Path(frcore.bank.__file__).parent
    long_files, long_functions = [], []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > 800:
            long_files.append(str(path.relative_to(root)))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 100:
                long_functions.append(f"{path.relative_to(root)}:{node.name}")
    assert long_files == [] and long_functions == []
