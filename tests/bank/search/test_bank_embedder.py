"""The bank records its embedder (name, dimension) and uses it: opening without an embedder takes
the recorded one; asking for another is an error naming both, and writes nothing."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from frcore import cli
from frcore.bank import Bank, EmbedderMismatch, PipelineConfig
from frcore.bank.search._embed import DEFAULT_EMBEDDER, HashingEmbedder, embedder_identity, get_embedder
from frcore.bank.storage._store import Store

FACTS = [
    {
        "id": "home",
        "text": "I live in Porto near the river",
        "categories": {"LOGISTICAL_CONTEXT": 1.0},
        "said_at": "2025-01-01",
    },
    {
        "id": "tea",
        "text": "I drink green tea every morning",
        "categories": {"PREFERENCES_HABITS": 1.0},
        "said_at": "2025-01-02",
    },
]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_identity_matches_the_loaded_embedder_without_loading_it():
    for name in ("hash", "hash-64", "HASH-300"):
        e = get_embedder(name)
        assert embedder_identity(name) == (e.name, e.dim)
    assert embedder_identity("minilm") == embedder_identity("all-MiniLM-L6-v2") == ("all-MiniLM-L6-v2", 384)
    assert DEFAULT_EMBEDDER == "minilm"
    with pytest.raises(ValueError, match="unknown embedder"):
        embedder_identity("word2vec")


def test_created_bank_records_its_embedder_and_reopens_with_it(tmp_path):
    db = tmp_path / "b.db"
    with Bank.open(str(db), embedder="hash-64"):
        pass
    with Store.open(db, readonly=True) as s:
        assert s.recorded_embedder() == ("hash-64", 64)  # at creation, before any fact
    with Bank.open(str(db)) as b:
        assert (b.embedder.name, b.embedder.dim) == ("hash-64", 64)
        b.add(FACTS)
        assert b.query("where does the user live", at="2025-02-01").ids[0] == "home"
    with Bank.open(str(db), embedder="hash-64", readonly=True) as b:  # the recorded one, asked for: fine
        assert b.embedder.name == "hash-64"


@pytest.mark.parametrize("asked", ["hash", "minilm"])
def test_another_embedder_is_an_error_naming_both_and_writes_nothing(tmp_path, asked):
    db = tmp_path / "m.db"
    with Bank.open(str(db), embedder="hash-64") as b:
        b.add(FACTS)
    before = digest(db)
    want = embedder_identity(asked)
    for readonly in (False, True):
        with pytest.raises(EmbedderMismatch) as e:
            Bank.open(str(db), embedder=asked, readonly=readonly)
        msg = str(e.value)
        assert "'hash-64' (64-d" in msg and f"{want[0]!r} ({want[1]}-d)" in msg and str(db) in msg
        assert e.value.kind == "embedder"
    assert digest(db) == before
    with Store.open(db, readonly=True) as s:
        assert s.recorded_embedder() == ("hash-64", 64)
        assert set(s.embedding_models()) == {"hash-64"}  # nothing re-embedded


def test_a_bank_without_a_record_records_it_on_its_first_write(tmp_path):
    db = tmp_path / "old.db"
    with Store.open(db) as s:  # no embedder given: nothing recorded
        s.add_facts(FACTS)
        assert s.recorded_embedder() is None
    with Bank.open(str(db), embedder="hash") as b:
        assert b.store.recorded_embedder() is None  # opening does not write
        b.retract("tea")
        assert b.store.recorded_embedder() == ("hash-256", 256)
    with pytest.raises(EmbedderMismatch):
        Bank.open(str(db), embedder="hash-64")


def test_a_bank_without_a_record_uses_the_embedder_of_its_vectors(tmp_path):
    db = tmp_path / "v.db"
    with Bank.open(str(db), embedder="hash-32") as b:
        b.add(FACTS)
    c = sqlite3.connect(db)
    c.execute("DELETE FROM meta WHERE key IN ('embedder', 'embedder_dim')")  # as a bank written before the record
    c.commit()
    c.close()
    with Bank.open(str(db), readonly=True) as b:
        assert b.embedder.name == "hash-32"  # from its stored vectors, not the default MiniLM
        assert b.store.recorded_embedder() is None  # read-only: nothing recorded
    with pytest.raises(EmbedderMismatch, match="the embedder of its stored vectors"):
        Bank.open(str(db), embedder="hash")
    with Bank.open(str(db)) as b:
        b.add([{"id": "n", "text": "new fact", "categories": {"OTHER": 1.0}, "said_at": "2025-03-01"}])
        assert b.store.recorded_embedder() == ("hash-32", 32)


class Scaled:
    """A caller's own embedder object (not built in)."""

    name = "scaled-hash-16"
    dim = 16

    def embed(self, texts):
        return HashingEmbedder(16).embed(texts)


def test_a_custom_embedder_is_recorded_and_must_be_passed_again(tmp_path):
    db = tmp_path / "c.db"
    with Bank.open(str(db), embedder=Scaled()) as b:
        b.add(FACTS)
    with Store.open(db, readonly=True) as s:
        assert s.recorded_embedder() == ("scaled-hash-16", 16)
    with pytest.raises(EmbedderMismatch, match="'scaled-hash-16'.*not a built-in one"):
        Bank.open(str(db))
    with Bank.open(str(db), embedder=Scaled()) as b:
        vecs, missing = b.store.get_embeddings(b.embedding_key, ["home", "tea"])
        assert missing == [] and np.allclose(vecs, Scaled().embed([f["text"] for f in FACTS]))


def test_cli_default_is_minilm_recorded_and_a_mismatch_is_one_line(tmp_path, capsys):
    db = tmp_path / "cli.db"
    assert cli.main(["bank", "init", str(db)]) == 0
    assert "embedder all-MiniLM-L6-v2 (384-d)" in capsys.readouterr().out
    with Store.open(db, readonly=True) as s:
        assert s.recorded_embedder() == ("all-MiniLM-L6-v2", 384)
    before = digest(db)
    assert cli.main(["bank", "query", str(db), "x", "--embedder", "hash"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'all-MiniLM-L6-v2' (384-d" in err[0] and "'hash-256' (256-d)" in err[0]
    assert cli.main(["bank", "init", str(db), "--embedder", "hash"]) == 2  # init does not change it either
    assert "asked for 'hash-256'" in capsys.readouterr().err
    assert digest(db) == before


def test_open_without_an_embedder_defaults_to_minilm(tmp_path):
    with Bank.open(str(tmp_path / "d.db")) as b:
        assert (b.embedder.name, b.embedder.dim) == ("all-MiniLM-L6-v2", 384)
        b.add(FACTS)
        assert b.store.recorded_embedder() == ("all-MiniLM-L6-v2", 384)
        # the paper's pipeline: under FR-Bank's default (fr-plus's activation floor) the stable
        # habit "tea", at cosine 0, outranks "home" in this two-fact bank (docs/fr-plus.md)
        assert b.query("which city is the user's home", at="2025-02-01", config=PipelineConfig()).ids[0] == "home"
