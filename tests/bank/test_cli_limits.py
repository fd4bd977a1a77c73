"""``fr bank add`` reads bounded input and says what it accepts with a warning (issue 31).

- Input: a facts file or standard input of more than ``--max-bytes`` (default
  :data:`frcore.bank._facts_file.MAX_INPUT_BYTES`, 256 MiB) is refused with one line before anything past
  the limit is read (``fr bank add BANK /dev/zero`` exits 2 within 10 s); JSON nests at most
  :data:`frcore.bank._facts_file.MAX_JSON_DEPTH` levels. Every refusal: exit status 2, one line naming
  the file, no traceback, the bank's export unchanged.
- Warnings: an ``event_time`` before ``said_at`` and a cycle of ``supersedes`` links in a batch
  are accepted and reported (``Added.warnings``, stderr, ``--json``), one line each naming the
  fact and the field; the cycle's links take effect as every link does.
- Messages: a missing facts file cannot be *read* (not "cannot write the output"); ``--ann`` is
  the PQ fast scan, not HNSW.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest
from support.cli_driver import PERMISSIONS, _drive
from support.paths import ROOT

from frcore import cli
from frcore._types import State
from frcore.bank import Bank
from frcore.bank._facts_file import MAX_INPUT_BYTES, MAX_JSON_DEPTH
from frcore.bank.storage._store import Store

HASH = ("hash-256", 256)


def fact(fid, said="2025-01-01", **kw) -> dict:
    d = {"id": fid, "text": f"text of {fid}", "categories": {"OTHER": 1.0}, "said_at": said}
    d.update(kw)
    return d


def fr(capsys, *argv, stdin: bytes | None = None, monkeypatch=None) -> tuple[int, str, str]:
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    code = cli.main(["bank", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def own_lines(err: str) -> list[str]:
    """stderr without `fr`'s warnings about other subcommands that fail to load (not ours)."""
    return [line for line in err.strip().splitlines() if not line.startswith("fr: warning: subcommand")]


def one_line_error(err: str) -> str:
    assert "Traceback" not in err, err
    lines = own_lines(err)
    assert len(lines) == 1 and lines[0].startswith("fr bank: error: "), err
    return lines[0]


@pytest.fixture
def bank(tmp_path) -> Path:
    p = tmp_path / "bank.db"
    with Store.open(p, embedder=HASH) as s:  # the hashing embedder: fast, no model to load
        s.add_facts([fact("keep", slot="s")])
    return p


def export(capsys, p: Path) -> str:
    code, out, err = fr(capsys, "export", p)
    assert code == 0, err
    return out


# ----------------------------------------------------------------------------- bounded input

DEEP_OK = {"x": 0}
for _ in range(MAX_JSON_DEPTH - 3):  # list (1) > fact (2) > MAX_JSON_DEPTH - 2 objects under an ignored key
    DEEP_OK = {"x": DEEP_OK}

TOO_DEEP = f"invalid JSON (nested too deeply to read): more than {MAX_JSON_DEPTH} levels of arrays and objects"
OVER_100 = "more than the input limit of 100 bytes"

#: name → (file name, content, extra arguments, what the one line says)
REFUSED = {
    "over-the-limit": (
        "big.json",
        json.dumps([fact("b", text="x" * 500)]),
        ["--max-bytes", "100"],
        f"bytes, {OVER_100}; it was not read; nothing was added (--max-bytes N raises the limit)",
    ),
    "over-by-one": ("one.json", "[" + " " * 99 + "]", ["--max-bytes", "100"], f"101 bytes, {OVER_100}"),
    "too-deep": ("deep.json", json.dumps([fact("d", extra={"x": DEEP_OK})]), [], TOO_DEEP),
    "too-deep-jsonl": (
        "deep.jsonl",
        json.dumps(fact("d")) + "\n" + json.dumps(fact("e", extra={"x": {"x": DEEP_OK}})),
        [],
        f"line 2: {TOO_DEEP}",
    ),
    "digits": ("n.json", '[{"id": "n", "session": ' + "9" * 5000 + "}]", [], "invalid JSON (Exceeds the limit (4300"),
    "max-bytes-zero": ("ok.json", json.dumps([fact("z")]), ["--max-bytes", "0"], "--max-bytes 0: must be at least 1"),
    "missing": (None, None, [], "cannot be read: it does not exist"),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_refused_input_is_one_line_naming_the_file_and_changes_nothing(capsys, tmp_path, bank, name):
    file_name, content, extra, msg = REFUSED[name]
    f = tmp_path / (file_name or "nope.json")
    if content is not None:
        f.write_text(content, encoding="utf-8")
    before = export(capsys, bank)
    code, out, err = fr(capsys, "add", bank, f, *extra)
    line = one_line_error(err)
    assert code == 2 and out == "" and msg in line, line
    if name != "max-bytes-zero":
        assert str(f) in line, line
    assert "cannot write the output" not in line
    assert export(capsys, bank) == before


def test_nesting_up_to_the_limit_and_input_up_to_the_limit_are_read(capsys, tmp_path, bank):
    f = tmp_path / "deep.json"
    f.write_text(json.dumps([fact("d", extra=DEEP_OK)]), encoding="utf-8")  # exactly MAX_JSON_DEPTH deep
    size = f.stat().st_size
    code, out, err = fr(capsys, "add", bank, f, "--max-bytes", size)
    assert code == 0 and out.strip() == "added 1 facts", err
    assert MAX_INPUT_BYTES == 256 * 2**20  # the default docs/formats.md states


def test_dev_zero_is_refused_within_10_seconds(tmp_path, bank):
    """The issue's case: a device without end, at the default limit, in a process of its own."""
    t0 = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "frcore.cli", "bank", "add", str(bank), "/dev/zero"],
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert time.monotonic() - t0 < 10
    line = one_line_error(r.stderr)
    assert r.returncode == 2 and line == (
        "fr bank: error: facts file /dev/zero: more than the input limit of 268,435,456 bytes; nothing was added "
        "(--max-bytes N raises the limit)"
    )
    with Store.open(bank, readonly=True) as s:
        assert [e.id for e in s.edges()] == ["keep"]


class _Endless(io.RawIOBase):
    """A stream that never ends, counting the bytes asked of it."""

    def __init__(self) -> None:
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        b[:] = b" " * len(b)
        self.read_bytes += len(b)
        return len(b)


def test_an_endless_stream_is_not_read_past_the_limit(capsys, monkeypatch, bank):
    endless = _Endless()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(endless))
    before = export(capsys, bank)
    code, _, err = fr(capsys, "add", bank, "-", "--max-bytes", 5_000_000)
    line = one_line_error(err)
    assert code == 2 and "standard input: more than the input limit of 5,000,000 bytes" in line, line
    assert endless.read_bytes <= 5_000_000 + 1 + io.DEFAULT_BUFFER_SIZE  # the limit, one byte, one buffer
    assert export(capsys, bank) == before


STDIN_FORMATS = {
    "json-list": json.dumps([fact("s1"), fact("s2")]),
    "suite": json.dumps({"persona": "p", "facts": [fact("s1", role="stable"), fact("s2")]}),
    "jsonl": json.dumps(fact("s1")) + "\n\n" + json.dumps(fact("s2")) + "\n",
    "jsonl-one-line": json.dumps(fact("s1")) + "\n",
}


@pytest.mark.parametrize("name", list(STDIN_FORMATS))
def test_standard_input_takes_every_format(capsys, monkeypatch, bank, name):
    code, out, err = fr(capsys, "add", bank, "-", "--json", stdin=STDIN_FORMATS[name].encode(), monkeypatch=monkeypatch)
    assert code == 0, err
    expected = ["s1"] if name == "jsonl-one-line" else ["s1", "s2"]
    assert json.loads(out)["ids"] == expected


def test_standard_input_errors_name_it(capsys, monkeypatch, bank):
    text = json.dumps(fact("s1")) + "\n" + '{"id": "s2", "text": "x", "text": "y"}\n'
    code, _, err = fr(capsys, "add", bank, "-", stdin=text.encode(), monkeypatch=monkeypatch)
    line = one_line_error(err)
    assert code == 2 and "standard input: line 2: fact 's2': field 'text': given twice" in line, line


# ----------------------------------------------------------------------------- messages


def test_a_facts_file_that_cannot_be_read_says_so(capsys, tmp_path, bank):
    code, _, err = fr(capsys, "add", bank, tmp_path / "nope.json")
    assert code == 2 and one_line_error(err) == (
        f"fr bank: error: facts file {tmp_path / 'nope.json'} cannot be read: it does not exist"
    )
    code, _, err = fr(capsys, "add", bank, tmp_path)
    assert (
        code == 2 and one_line_error(err) == f"fr bank: error: facts file {tmp_path} cannot be read: it is a directory"
    )


@pytest.mark.parametrize("action", ["add", "query", "explain"])
def test_ann_help_names_the_pq_fast_scan(capsys, action):
    with pytest.raises(SystemExit):
        cli.main(["bank", action, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "HNSW" not in text and "product quantizer with fast scan" in text, text


# ----------------------------------------------------------------------------- warnings

CYCLE_2 = [fact("a", links={"supersedes": "b"}), fact("b", said="2025-01-02", links={"supersedes": "a"})]
CYCLE_3 = [
    fact("c1", links={"supersedes": "c3"}),
    fact("c2", said="2025-01-02", links={"supersedes": "c1"}),
    fact("c3", said="2025-01-03", links={"supersedes": "c2"}),
]
LATE = "2025-03-01"
#: name → (batch, the warnings' (fact, field), a phrase of each)
WARNED = {
    "direct-cycle": (
        CYCLE_2,
        [("a", "links")],
        [
            "cycle among 'a', 'b' in this batch; accepted as given: a link supersedes only a fact said before "
            "its source, so 'a' → 'b' supersedes nothing"
        ],
    ),
    "chain-cycle": (CYCLE_3, [("c1", "links")], ["cycle among 'c1', 'c2', 'c3' in this batch; accepted as given: a"]),
    "soft-cycle": ([{**f, "confidence": 0.5} for f in CYCLE_2], [("a", "links")], ["cycle among 'a', 'b' in this"]),
    "event-before-said": (
        [fact("e", said=LATE, event_time="2025-02-01", categories={"OBLIGATIONS": 1.0})],
        [("e", "event_time")],
        [
            "2025-02-01T00:00:00 is before its said_at 2025-03-01T00:00:00; accepted as given (its primary "
            "category, OBLIGATIONS, expires at its event time: it is expired from when it is said)"
        ],
    ),
    "event-before-said-not-expiring": (
        [fact("e", said=LATE, event_time="2025-02-01")],
        [("e", "event_time")],
        ["accepted as given (the event was past when it was said)"],
    ),
    "none": ([fact("n1"), fact("n2", said=LATE, event_time=LATE, links={"supersedes": "n1"})], [], []),
}


@pytest.mark.parametrize("name", list(WARNED))
def test_warnings_name_the_fact_and_the_field(capsys, tmp_path, bank, name):
    batch, where, phrases = WARNED[name]
    f = tmp_path / "w.json"
    f.write_text(json.dumps(batch), encoding="utf-8")
    code, out, err = fr(capsys, "add", bank, f, "--json")
    assert code == 0 and "Traceback" not in err, err
    warned = json.loads(out)["warnings"]
    assert own_lines(err) == [f"fr bank: warning: {w}" for w in warned]
    assert len(warned) == len(where)
    position = {d["id"]: i for i, d in enumerate(batch)}
    for line, (fid, field), phrase in zip(warned, where, phrases):
        assert line.startswith(f"{f}: facts[{position[fid]}]: fact {fid!r}: field {field!r}: "), line
        assert phrase in line, line
    if name == "chain-cycle":
        assert warned[0].endswith("so 'c1' → 'c3' supersedes nothing"), warned[0]
    if name == "soft-cycle":
        assert "supersedes nothing" not in warned[0]  # a soft link contests both ends: it does something
    with Store.open(bank, readonly=True) as s:  # accepted whole, links as given
        stored = {e.id: e for e in s.edges()}
    for d in batch:
        assert dict(stored[d["id"]].links) == {
            k: (v,) if isinstance(v, str) else tuple(v) for k, v in d.get("links", {}).items()
        }


def test_a_cycle_takes_effect_as_every_link(tmp_path):
    """In a cycle the later-said fact supersedes the earlier one; the link the other way
    supersedes nothing (as any link to a later fact), and a soft cycle contests both ends."""
    with Bank.open(tmp_path / "c.db", embedder="hash-64") as b:
        added = b.add(CYCLE_3)
        assert list(added) == ["c1", "c2", "c3"] and len(added.warnings) == 1
        snap = b.store.snapshot(datetime(2025, 2, 1))  # c2 → c1 and c3 → c2 hold; c1 → c3 does not
    assert dict(zip(snap.ids, snap.state)) == {"c1": State.SUPERSEDED, "c2": State.SUPERSEDED, "c3": State.ACTIVE}
    with Bank.open(tmp_path / "soft.db", embedder="hash-64") as b:
        b.add([{**f, "confidence": 0.5} for f in CYCLE_2])
        snap = b.store.snapshot(datetime(2025, 2, 1))
    assert dict(zip(snap.ids, snap.state)) == {"a": State.CONTESTED, "b": State.CONTESTED}


def test_warnings_are_repeated_on_an_identical_readd_and_absent_from_a_clean_batch(tmp_path):
    with Bank.open(tmp_path / "r.db", embedder="hash-64") as b:
        first = b.add(CYCLE_2)
        again = b.add(CYCLE_2)
        clean = b.add([fact("x")])
    assert list(again) == [] and again.unchanged == ["a", "b"]
    assert again.warnings == first.warnings and len(first.warnings) == 1
    assert clean.warnings == []


def test_the_limit_is_documented():
    text = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    assert "at most **256 MiB** (268,435,456 bytes)" in text and f"at most {MAX_JSON_DEPTH} levels" in text
    assert "### Warnings" in text


@pytest.mark.skipif(PERMISSIONS is None, reason="running as root without setpriv: permissions cannot be enforced")
def test_an_unreadable_file_says_it_cannot_be_read(tmp_path, bank):
    f = tmp_path / "secret.json"
    f.write_text("[]")
    f.chmod(0)
    ((code, out, err),) = _drive([("add", bank, f)], prefix=PERMISSIONS)  # as a user who honours permissions
    assert code == 2 and one_line_error(err) == f"fr bank: error: facts file {f} cannot be read (Permission denied)"


def test_one_text_limit_for_every_interface(tmp_path):
    """The bank refuses a stored string over MAX_TEXT_CHARS, naming the field; MCP's argument
    check uses the same number."""
    from frcore.bank import Bank
    from frcore.bank.records import MAX_TEXT_CHARS, FactError, parse_fact
    from frcore.bank.serve import MAX_TEXT_CHARS as MCP_MAX

    assert MCP_MAX == MAX_TEXT_CHARS
    fact = {"id": "x", "text": "a" * (MAX_TEXT_CHARS + 1), "kind": "turn", "said_at": "2025-01-01"}
    with pytest.raises(FactError, match=r"field 'text': .*at most 1,000,000"):
        parse_fact(fact)
    bank = Bank.open(":memory:", embedder="hash")
    assert bank.add([{**fact, "text": "a" * MAX_TEXT_CHARS}]) == ["x"]  # at the limit: stored
    bank.close()


def test_remember_reports_the_batch_warnings():
    from frcore.bank import Bank
    from frcore.bank.serve import Memory

    memory = Memory(Bank.open(":memory:", embedder="hash"), ":memory:")
    got = memory.remember(
        facts=[
            {
                "id": "e",
                "text": "Dentist on Monday",
                "categories": {"OBLIGATIONS": 1.0},
                "said_at": "2025-03-02",
                "event_time": "2025-03-01",
            }
        ]
    )
    assert len(got["warnings"]) == 1 and "event_time" in got["warnings"][0] and "'e'" in got["warnings"][0]
