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


#: FR-Bank's layers, lowest first (docs/architecture.md): a module imports only its own layer and
#: the layers below it, and only their public names (``frcore.bank.<layer>``, never ``<layer>._x``)
BANK_LAYERS = {"guard": 0, "records": 1, "derive": 2, "search": 2, "storage": 3, "pipeline": 3}
#: the facade and the interfaces (``_bank.py``, ``_ingest*.py``, ``cli.py``, ``serve.py``, …) sit above every layer
FACADE = 4
#: what storage still takes from search: the container of the BM25 token arrays it keeps (the
#: tokenizer of its index rows is the bank's, handed to the store: it never tokenizes; every other
#: name of search — the approximate index — is search's)
STORAGE_FROM_SEARCH = frozenset({"Postings", "concat_postings"})


def _bank_imports(root):
    """(importer layer, imported layer, imported module parts after the layer, names) of every
    import of one part of frcore.bank by another, in the modules under ``root`` (``frcore/bank``)."""
    import ast

    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).parts
        here = rel[0] if rel[0] in BANK_LAYERS else "facade"
        package = ["frcore", "bank", *rel[:-1]] if rel[-1] != "__init__.py" else ["frcore", "bank", *rel[:-1]]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - node.level + 1]
                    full = base + (node.module.split(".") if node.module else [])
                else:
                    full = (node.module or "").split(".")
                names = [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                for a in node.names:
                    full, names = a.name.split("."), []
                    out += _edge(here, full, names)
                continue
            else:
                continue
            if full[:2] == ["frcore", "bank"] and len(full) == 2:
                for n in names:  # from .. import storage
                    out += _edge(here, ["frcore", "bank", n], [])
            else:
                out += _edge(here, full, names)
    return out


def _edge(here, full, names):
    if full[:2] != ["frcore", "bank"] or len(full) < 3:
        return []
    there = full[2] if full[2] in BANK_LAYERS else "facade"
    return [] if there == here else [(here, there, full[3:], names)]


def layer_violations(edges) -> list[str]:
    """The imports that break the bank's layer order (module docstring of BANK_LAYERS)."""
    bad = []
    for here, there, rest, names in edges:
        rank_here = BANK_LAYERS.get(here, FACADE)
        rank_there = BANK_LAYERS.get(there, FACADE)
        what = ".".join(["frcore.bank", there, *rest]) + (f" ({', '.join(names)})" if names else "")
        if rank_there >= rank_here:
            bad.append(f"{here} imports {what}: not below it")
        elif rest and rest[0].startswith("_"):
            bad.append(f"{here} imports {what}: a private module of another layer")
        elif (here, there) == ("storage", "search") and not set(names) <= STORAGE_FROM_SEARCH:
            bad.append(f"{here} imports {what}: search's indexes are search's")
    return bad


def test_the_bank_keeps_its_layer_order():
    """Every import between FR-Bank's parts goes down the layer order, to public names only."""
    from pathlib import Path

    import frcore.bank

    edges = _bank_imports(Path(frcore.bank.__file__).parent)
    assert edges, "no import between the bank's parts found: the reader is broken"
    assert layer_violations(edges) == []


@pytest.mark.parametrize(
    "edge",
    [
        ("storage", "search", ["_ann"], ["AnnConfig"]),  # storage building the approximate index
        ("storage", "search", [], ["ApproximateFiles"]),
        ("records", "storage", [], ["Store"]),  # upward
        ("search", "derive", [], ["DeriveConfig"]),  # sideways
        ("pipeline", "records", ["_facts"], ["FactRecord"]),  # a private module
        ("guard", "facade", ["_bank"], ["Bank"]),
    ],
)
def test_the_layer_rule_catches(edge):
    assert layer_violations([edge])


def test_the_layer_rule_allows_what_the_order_allows():
    assert layer_violations([("pipeline", "search", [], ["Postings"]), ("facade", "storage", [], ["Store"])]) == []
