"""The fact format is one table, :data:`frcore.bank.FACT_FIELDS`, and its three readers agree with
it: the bank's parser (:func:`frcore.bank.parse_fact`: its record's fields, its required keys), the
MCP ``remember`` tool's ``Fact`` model (fields, required ones, descriptions, kinds) and the
suite loader (:func:`frcore.bench.parse_suite`: the keys a suite's fact must carry). A field one
of them reads that the table lacks, or a table field one of them does not read, fails here.

The two field tables of docs/formats.md list the same fields.

The readers differ where the table says so: a suite's ``role`` and ``source`` are ignored by the
bank; ``kind``, ``speaker`` and ``user`` are not suite keys; the MCP model names every field
the bank reads (``user`` among them: the server validates a fact as ``fr bank add`` does); and
every suite key is required, where the bank requires only ``id``, ``text``, ``said_at`` and, of a
fact (not a turn), ``categories``.
"""

from __future__ import annotations

import copy
import dataclasses
import re
import typing

import pytest
from support.paths import ROOT
from support.suites import SOURCE, _mini

import frcore.bank
from frcore._types import LINK_KINDS
from frcore.bank import FACT_FIELDS, FactRecord, parse_fact
from frcore.bank._serve_models import Fact as McpFact
from frcore.bank.records import REQUIRED_KEYS, FactError
from frcore.bank.records._facts import EDGE_KINDS
from frcore.bench._suite import Fact as SuiteFact, SuiteError, parse_suite, suite_to_dict

ROOT = ROOT
BANK = [n for n, f in FACT_FIELDS.items() if f.bank != "ignored"]
SUITE = [n for n, f in FACT_FIELDS.items() if f.suite]
MCP = [n for n, f in FACT_FIELDS.items() if f.mcp]

#: a fact that gives every field the bank reads
FULL = {
    "id": "f1",
    "text": "I moved to Lisbon.",
    "categories": {"IDENTITY_SELF_CONCEPT": 1.0},
    "said_at": "2025-01-01",
    "event_time": "2025-02-01",
    "slot": "home_city",
    "confidence": 0.9,
    "numeric": False,
    "links": {},
    "session": 1,
    "kind": "fact",
    "speaker": "user",
    "user": "ana",
}
#: a value of each field the bank refuses
BAD = {
    "id": "",
    "text": " ",
    "categories": {"NOPE": 1.0},
    "said_at": "soon",
    "event_time": "soon",
    "slot": 5,
    "confidence": 2,
    "numeric": "yes",
    "links": 5,
    "session": "one",
    "kind": "message",
    "speaker": 5,
    "user": " ",
}


def test_the_table_is_the_formats():
    assert BANK == list(FULL) == list(BAD)
    assert set(SUITE) - set(BANK) == {n for n, f in FACT_FIELDS.items() if f.bank == "ignored"} == {"role", "source"}
    assert MCP == BANK
    assert FACT_FIELDS["kind"].values == EDGE_KINDS
    assert FACT_FIELDS["links"].values == LINK_KINDS
    assert "FACT_FIELDS" in frcore.bank.__all__


# --------------------------------------------------------------------------- the bank's parser


def test_the_bank_record_has_the_bank_fields():
    # quarantined is the store's finding, never read from a fact
    assert [f.name for f in dataclasses.fields(FactRecord) if f.name != "quarantined"] == BANK


def test_parse_fact_reads_every_bank_field():
    rec = parse_fact(dict(FULL))
    assert {n: getattr(rec, n) for n in ("slot", "confidence", "session", "speaker", "user")} == {
        n: FULL[n] for n in ("slot", "confidence", "session", "speaker", "user")
    }
    for name in BANK:
        with pytest.raises(FactError, match=f"field '{name}'"):
            parse_fact({**FULL, name: BAD[name]})


@pytest.mark.parametrize("kind", EDGE_KINDS)
def test_parse_fact_requires_the_required_keys(kind):
    # as docs/formats.md says: a turn may omit categories
    required = {"fact": ["id", "text", "categories", "said_at"], "turn": ["id", "text", "said_at"]}[kind]
    assert list(REQUIRED_KEYS[kind]) == required
    base = {**FULL, "kind": kind}
    for name in BANK:
        obj = {k: v for k, v in base.items() if k != name}
        if name in required:
            with pytest.raises(FactError, match=f"field '{name}': missing"):
                parse_fact(obj)
        else:
            parse_fact(obj)


def test_parse_fact_ignores_the_suite_only_fields():
    assert parse_fact({**FULL, "role": "stable", "source": "x"}) == parse_fact(FULL)


def test_parse_fact_docstring_names_the_table():
    assert "FACT_FIELDS" in (parse_fact.__doc__ or "")


# --------------------------------------------------------------------------- the MCP model


def test_the_mcp_model_has_the_mcp_fields():
    schema = McpFact.model_json_schema()
    assert list(schema["properties"]) == MCP
    assert schema["required"] == [n for n in MCP if FACT_FIELDS[n].bank == "required"]
    assert {n: p["description"] for n, p in schema["properties"].items()} == {
        n: FACT_FIELDS[n].description for n in MCP
    }
    kind = typing.get_args(McpFact.model_fields["kind"].annotation)[0]
    assert typing.get_args(kind) == FACT_FIELDS["kind"].values


# --------------------------------------------------------------------------- the suite loader


def test_the_suite_fact_has_the_suite_keys():
    assert sorted(f.name for f in dataclasses.fields(SuiteFact) if f.name != "extra") == sorted(SUITE)
    suite = parse_suite(_mini(), SOURCE)
    assert all(set(suite_to_dict(suite)["facts"][i]) - set(f.extra) == set(SUITE) for i, f in enumerate(suite.facts))


def test_a_suite_fact_must_carry_every_suite_key():
    obj = _mini()
    first = obj["facts"][0]
    assert set(SUITE) <= set(first)
    for name in SUITE:
        bad = copy.deepcopy(obj)
        del bad["facts"][0][name]
        item = "fact[0]" if name == "id" else f"fact {first['id']!r}"
        with pytest.raises(SuiteError, match=re.escape(f"{item}: field {name!r}: missing")):
            parse_suite(bad, SOURCE)
    # a key the table does not name is the fact's extra, not a field
    assert parse_suite(obj, SOURCE).facts[0].extra == {k: v for k, v in first.items() if k not in SUITE}


# --------------------------------------------------------------------------- the documentation


def _doc_fields(heading: str) -> list[str]:
    """The first column of the table under ``heading`` in docs/formats.md."""
    text = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    section = text.split(f"\n{heading}\n", 1)[1].split("\n#", 1)[0]
    return re.findall(r"^\| `(\w+)` \|", section, flags=re.M)


def test_the_documented_fields_are_the_table():
    assert _doc_fields("### Fields") == BANK
    assert sorted(_doc_fields("### `facts[]`")) == sorted(SUITE)
