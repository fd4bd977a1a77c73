"""The bank tokenizes its index's rows; the store is handed tokens and never tokenizes:

- a fact added through :meth:`Bank.add` (a file bank keeps its index) is tokenized exactly once,
  by the bank, which hands the tokens to the store with the vectors it writes;
- rows the store reads from SQLite (written by another process, or without an index) are
  tokenized with the function the bank handed it (:meth:`Store.use_index`), once each;
- either way the index answers as SQLite alone does (same text → tokens mapping, owner's name
  replaced);
- a store given an index without a tokenizer, or an add whose tokens do not match its batch, is
  refused.
"""

from __future__ import annotations

import collections
import sys
from datetime import datetime

import pytest

from frcore.bank import Bank
from frcore.bank.records import neutralize, owner_pattern
from frcore.bank.search import _lexical
from frcore.bank.storage import Store, StoreError
from frcore.bank.storage._index import IndexSpec

AT = "2024-06-01"
OWNER_NAME = "Maria"
QUESTIONS = ("what does Maria grow in the garden", "the trip to Lisbon", "fact number 3")


def _facts(lo: int, hi: int) -> list[dict]:
    return [
        {
            "id": f"f{i}",
            "text": f"{OWNER_NAME} wrote fact number {i} about the garden, roses and a trip to Lisbon",
            "said_at": f"2024-01-{1 + i % 28:02d}",
            "kind": "turn",
        }
        for i in range(lo, hi)
    ]


def _normalised(text: str) -> str:
    return neutralize(text, owner_pattern(OWNER_NAME))


@pytest.fixture
def tokenized(monkeypatch) -> collections.Counter:
    """Every text tokenized by ``tokenize_many``, wherever FR-Bank calls it from, counted."""
    seen: collections.Counter = collections.Counter()
    original = _lexical.tokenize_many

    def counting(texts):
        texts = list(texts)
        seen.update(texts)
        return original(texts)

    for name, module in list(sys.modules.items()):
        if name.startswith("frcore") and getattr(module, "tokenize_many", None) is original:
            monkeypatch.setattr(module, "tokenize_many", counting)
    return seen


def _answers(db: str, index: bool) -> list:
    with Bank.open(db, embedder="hash", owner=OWNER_NAME, index=index) as b:
        return [[r["id"] for r in b.query(q, at=AT, k=8).results] for q in QUESTIONS]


def _indexed(bank: Bank) -> bool:
    """The bank's index holds every row (reads take its vectors and postings)."""
    return bank.store.read(datetime(2100, 1, 1)).sources is not None


def test_each_fact_added_is_tokenized_once(tmp_path, tokenized):
    db = str(tmp_path / "b.db")
    facts = _facts(0, 30) + _facts(30, 45)
    with Bank.open(db, embedder="hash", owner=OWNER_NAME) as bank:
        assert bank.store.index_folder is not None
        bank.add(facts[:30])
        bank.add(facts[30:])
        assert _indexed(bank)
    assert {_normalised(f["text"]): 1 for f in facts} == {
        t: n for t, n in tokenized.items() if t in {_normalised(f["text"]) for f in facts}
    }
    assert not any(f["text"] in tokenized for f in facts)  # tokenized as normalised (owner's name replaced)
    assert _answers(db, index=True) == _answers(db, index=False)


def test_rows_read_from_sqlite_are_tokenized_with_the_banks_tokenizer(tmp_path, tokenized):
    db = str(tmp_path / "b.db")
    facts = _facts(0, 20)
    with Bank.open(db, embedder="hash", owner=OWNER_NAME, index=False) as bank:  # written without an index
        bank.add(facts)
    assert not tokenized
    with Bank.open(db, embedder="hash", owner=OWNER_NAME) as bank:
        bank.add(_facts(20, 25))  # reads the 20 stored rows into the index first, then its own
        assert _indexed(bank)
    wanted = {_normalised(f["text"]) for f in facts + _facts(20, 25)}
    assert {t: n for t, n in tokenized.items() if t in wanted} == dict.fromkeys(wanted, 1)
    assert _answers(db, index=True) == _answers(db, index=False)


def test_an_index_needs_a_tokenizer(tmp_path):
    with Store.open(str(tmp_path / "b.db")) as store:
        with pytest.raises(ValueError, match="tokeniz"):
            store.use_index(IndexSpec("hash", 64, ""))
        store.use_index(None)  # no index: nothing to tokenize


def test_tokens_must_match_the_batch(tmp_path):
    with Store.open(str(tmp_path / "b.db")) as store:
        with pytest.raises(StoreError, match="tokens"):
            store.add_facts(_facts(0, 3), tokens=[["fact"]])
        assert store.count() == 0
