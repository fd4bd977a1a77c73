"""FR-Bank refuses bad input and bad files with one clear line, exit status 2, nothing written.

Every case of issue 16's list: categories given as ``{}``, ``false``, ``0``, ``""``, ``[]``;
numbers beyond range (1e400, 10^400, sessions ≥ 2^63); ``"facts"`` holding a number or null;
deep nesting; duplicate JSON keys; whitespace-only texts (named with their file); control
characters in ids; ``--k`` beyond the pipeline's limit; files that are not an FR-Bank (not
SQLite, another application's database, empty, a directory, a missing folder) — refused and
never modified, by read commands too; corrupted and truncated banks; idempotent re-adds and
conflicting ids. Read-only storage, full disks and broken pipes run in subprocesses.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli_driver import PERMISSIONS, _drive

from frcore import cli
from frcore.bank.records._facts import FactError, parse_fact
from frcore.bank.storage._common import StoreError
from frcore.bank.storage._store import Store

FR = [sys.executable, "-m", "frcore.cli"]
HASH = ("hash-256", 256)


def fact(fid="x", **kw):
    d = {"id": fid, "text": f"text of {fid}", "categories": {"OTHER": 1.0}, "said_at": "2025-01-01"}
    d.update(kw)
    return d


def fr(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main(["bank", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def _own_lines(err: str) -> list[str]:
    """stderr without `fr`'s warnings about other subcommands that fail to load (not ours)."""
    return [line for line in err.strip().splitlines() if not line.startswith("fr: warning: subcommand")]


def one_line_error(err: str) -> str:
    assert "Traceback" not in err, err
    lines = _own_lines(err)
    assert len(lines) == 1, err
    assert lines[0].startswith("fr bank: error: "), err
    return lines[0]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def bank(tmp_path):
    p = tmp_path / "bank.db"
    with Store.open(p, embedder=HASH) as s:  # the hashing embedder: fast, no model to load
        s.add_facts([fact("keep", slot="s")])
    return p


def state(p: Path) -> tuple[int, int]:
    with Store.open(p, readonly=True) as s:
        return s.count(), s.version()


# ----------------------------------------------------------------------------- bad facts


CATEGORIES = {"empty-object": {}, "false": False, "zero": 0, "empty-string": "", "empty-list": []}


@pytest.mark.parametrize("name", list(CATEGORIES))
def test_empty_or_falsy_categories_are_errors_not_rewritten(capsys, tmp_path, bank, name):
    f = tmp_path / "facts.json"
    f.write_text(json.dumps([fact("keep", slot="s"), fact("new", categories=CATEGORIES[name])]))
    before = state(bank)
    code, _, err = fr(capsys, "add", bank, f)
    line = one_line_error(err)
    assert code == 2
    assert f"{f}: facts[1]: fact 'new': field 'categories': expected a non-empty mapping" in line
    assert state(bank) == before
    # a turn given empty categories is refused too; only a turn without any gets OTHER
    with pytest.raises(FactError, match="field 'categories'"):
        parse_fact(fact("t", kind="turn", categories=CATEGORIES[name]))
    assert parse_fact({"id": "t", "kind": "turn", "text": "hi", "said_at": "2025-01-01"}).categories == {"OTHER": 1.0}


NUMBERS = {
    "confidence-1e400": ('"confidence": 1e400', "confidence"),
    "confidence-10^400": ('"confidence": 1' + "0" * 400, "confidence"),
    "weight-1e400": ('"categories": {"OTHER": 1e400}', "categories"),
    "weight-10^400": ('"categories": {"OTHER": 1' + "0" * 400 + "}", "categories"),
    "session-2^63": (f'"session": {2**63}', "session"),
    "session-10^400": ('"session": 1' + "0" * 400, "session"),
    "session-below-int64": (f'"session": {-(2**63) - 1}', "session"),
    "said_at-overflow": ('"said_at": "9999-12-31T23:00:00-05:00"', "said_at"),
}


@pytest.mark.parametrize("name", list(NUMBERS))
def test_numbers_out_of_range_name_the_field(capsys, tmp_path, bank, name):
    extra, field = NUMBERS[name]
    body = {"id": "n", "text": "t", "categories": {"OTHER": 1.0}, "said_at": "2025-01-01"}
    text = json.dumps(body)[:-1] + ", " + extra + "}"
    text = text.replace('"categories": {"OTHER": 1.0}, ', "", 1) if field == "categories" else text
    text = text.replace('"said_at": "2025-01-01", ', "", 1) if field == "said_at" else text
    f = tmp_path / "facts.json"
    f.write_text("[" + text + "]")
    before = state(bank)
    code, _, err = fr(capsys, "add", bank, f)
    line = one_line_error(err)
    assert code == 2 and f"{f}: facts[0]: fact 'n': field '{field}'" in line, line
    assert len(line) < 400  # a 400-digit number is described, not printed
    assert state(bank) == before


@pytest.mark.parametrize("value", ["5", "null", '"x"', "{}"])
def test_facts_key_not_a_list(capsys, tmp_path, bank, value):
    f = tmp_path / "suite.json"
    f.write_text('{"persona": "p", "facts": ' + value + "}")
    code, _, err = fr(capsys, "add", bank, f)
    assert code == 2 and f"{f}: field 'facts': expected a list of fact objects" in one_line_error(err)


@pytest.mark.parametrize("where", ["top", "in-fact"])
def test_deep_nesting(capsys, tmp_path, bank, where):
    deep = "[" * 100_000 + "]" * 100_000
    f = tmp_path / "deep.json"
    f.write_text(deep if where == "top" else '[{"id": "d", "text": ' + deep + "}]")
    code, _, err = fr(capsys, "add", bank, f)
    line = one_line_error(err)
    assert code == 2 and f"{f}: invalid JSON (nested too deeply to read)" in line


@pytest.mark.parametrize(
    "text, field",
    [
        (
            '[{"id": "d", "text": "a", "text": "b", "categories": {"OTHER": 1}, "said_at": "2025-01-01"}]',
            "field 'text': given twice",
        ),
        (
            '[{"id": "d", "text": "a", "categories": {"OTHER": 0.5, "OTHER": 1}, "said_at": "2025-01-01"}]',
            "field 'categories': key 'OTHER' given twice",
        ),
    ],
)
def test_duplicate_json_keys(capsys, tmp_path, bank, text, field):
    f = tmp_path / "dup.json"
    f.write_text(text)
    code, _, err = fr(capsys, "add", bank, f)
    assert code == 2 and f"{f}: facts[0]: fact 'd': {field}" in one_line_error(err)
    f.write_text('{"facts": [], "facts": []}')
    code, _, err = fr(capsys, "add", bank, f)
    assert code == 2 and "key 'facts' given twice" in one_line_error(err)


def test_whitespace_only_text_names_the_file(capsys, tmp_path, bank):
    f = tmp_path / "turns.jsonl"
    f.write_text(
        json.dumps(fact("a"))
        + "\n\n"
        + json.dumps({"id": "t24", "kind": "turn", "text": " \t ", "said_at": "2025-01-01"})
        + "\n"
    )
    code, _, err = fr(capsys, "add", bank, f)
    assert code == 2 and f"{f}: line 3: fact 't24': field 'text': only whitespace" in one_line_error(err)


@pytest.mark.parametrize("bad", ["a\x00b", "tab\there", "esc\x1b[31m", "\x7f"])
def test_control_characters_in_ids_refused(bad):
    with pytest.raises(FactError, match=r"field 'id': contains control character U\+00"):
        parse_fact(fact(bad))
    with pytest.raises(FactError, match=r"field 'links': contains control character"):
        parse_fact(fact("ok", links={"supersedes": bad}))


def test_unpaired_surrogates_refused(capsys, tmp_path, bank):
    f = tmp_path / "s.json"
    f.write_text('[{"id": "s", "text": "bad \\ud800 text", "categories": {"OTHER": 1}, "said_at": "2025-01-01"}]')
    code, _, err = fr(capsys, "add", bank, f)
    assert code == 2 and "fact 's': field 'text': not valid Unicode" in one_line_error(err)
    with Store.open(bank) as s:
        with pytest.raises(StoreError, match="reason"):
            s.retract("keep", reason="\ud800")


def test_bad_facts_files(capsys, tmp_path, bank):
    cases = {
        "latin1.json": (b'[{"id": "caf\xe9"}]', "not UTF-8 text"),
        "bad.jsonl": (b'{"id": "a"}\n{oops\n', "bad.jsonl: line 2: invalid JSON"),
        "scalar.json": (b"42", "expected a JSON list of facts"),
    }
    for name, (data, msg) in cases.items():
        (tmp_path / name).write_bytes(data)
        code, _, err = fr(capsys, "add", bank, tmp_path / name)
        assert code == 2 and msg in one_line_error(err), (name, err)
    code, _, err = fr(capsys, "add", bank, tmp_path)
    assert code == 2 and "is a directory" in one_line_error(err)
    code, _, err = fr(capsys, "add", bank, tmp_path / "nope.json")
    assert code == 2 and "does not exist" in one_line_error(err)


@pytest.mark.parametrize(
    "k, msg",
    [
        (0, "--k 0: must be at least 1"),
        (21, "--k 21: at most 20 results"),
        (1_000_000_000, "--k 1000000000: at most 20 results"),
    ],
)
def test_k_beyond_the_pipeline_limit(capsys, bank, k, msg):
    code, _, err = fr(capsys, "query", bank, "x", "--k", k)
    assert code == 2 and msg in one_line_error(err)
    code, out, err = fr(capsys, "query", bank, "text", "--k", 20, "--at", "2025-02-01")
    assert code == 0 and " 1. " in out


def test_readd_identical_is_a_noop_and_conflicts_name_the_id(capsys, tmp_path, bank):
    f = tmp_path / "facts.json"
    f.write_text(json.dumps([fact("keep", slot="s"), fact("n1", links={"supersedes": "keep"})]))
    code, out, _ = fr(capsys, "add", bank, f)
    assert code == 0 and out.strip() == "added 1 facts; 1 already stored, identical (skipped)"
    v = state(bank)
    code, out, _ = fr(capsys, "add", bank, f, "--json")  # the retry after a crash: a no-op
    assert code == 0 and json.loads(out) == {
        "added": 0,
        "ids": [],
        "unchanged": ["keep", "n1"],
        "quarantined": [],
        "warnings": [],
    }
    assert state(bank) == v  # nothing written, not even the version counter
    f.write_text(json.dumps([fact("n2"), fact("n1", text="text of n1, changed", links={"supersedes": "keep"})]))
    code, _, err = fr(capsys, "add", bank, f)
    line = one_line_error(err)
    assert (
        code == 2
        and f"{f}: facts[1]: fact 'n1': field 'id': already stored with different content (text differ)" in line
    )
    assert state(bank) == v


def test_unknown_ids(capsys, bank):
    code, _, err = fr(capsys, "erase", bank, "zz")
    assert code == 2 and "edge_id 'zz': no such edge; nothing was erased" in one_line_error(err)
    code, _, err = fr(capsys, "retract", bank, "zz")
    assert code == 2 and "edge_id 'zz': no such edge" in one_line_error(err)


# ----------------------------------------------------------------------------- files that are not a bank

READ = [("query", "x"), ("explain", "x"), ("export",)]
WRITE = [("add", "FACTS"), ("retract", "keep"), ("erase", "keep"), ("purge",), ("init",)]


def _foreign(p: Path) -> None:
    c = sqlite3.connect(p)
    c.execute("CREATE TABLE customers(name TEXT)")
    c.execute("INSERT INTO customers VALUES ('Ana')")
    c.commit()
    c.close()


def _empty_sqlite(p: Path) -> None:
    c = sqlite3.connect(p)
    c.execute("PRAGMA user_version=7")
    c.commit()
    c.close()


NOT_BANKS = {
    "random-bytes": (lambda p: p.write_bytes(os.urandom(5000)), "not an FR-Bank: not an SQLite database"),
    "text-file": (
        lambda p: p.write_text("hello, I am not a database\n" * 40),
        "not an FR-Bank: not an SQLite database",
    ),
    "foreign-sqlite": (_foreign, "not an FR-Bank: an SQLite database with other tables (customers)"),
    "empty-sqlite": (_empty_sqlite, "an empty SQLite database, not an FR-Bank"),
    "empty-file": (lambda p: p.write_bytes(b""), "an empty file, not an FR-Bank"),
}


@pytest.mark.parametrize("name", list(NOT_BANKS))
def test_a_file_that_is_not_a_bank_is_refused_and_never_modified(capsys, tmp_path, name):
    make, msg = NOT_BANKS[name]
    p = tmp_path / "other.db"
    make(p)
    facts = tmp_path / "f.json"
    facts.write_text(json.dumps([fact("a")]))
    before = digest(p)
    for argv in READ + WRITE:
        if argv == ("init",) and name == "empty-file":
            continue  # init makes a bank of an empty file (below)
        code, out, err = fr(capsys, argv[0], p, *[str(facts) if a == "FACTS" else a for a in argv[1:]])
        line = one_line_error(err)
        assert code == 2 and msg in line, (argv, line)
        assert digest(p) == before, argv
        assert sorted(x.name for x in tmp_path.iterdir()) == ["f.json", "other.db"], argv  # no -wal, -shm, -journal
    if name == "foreign-sqlite":
        c = sqlite3.connect(p)
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # never switched to WAL
        assert [r[0] for r in c.execute("SELECT name FROM sqlite_master")] == ["customers"]
        c.close()
    if name == "empty-file":
        code, out, _ = fr(capsys, "init", p)
        assert code == 0 and out.strip() == f"initialised {p}, embedder all-MiniLM-L6-v2 (384-d)"  # the default
        code, out, _ = fr(capsys, "init", p)
        assert code == 0 and "already an FR-Bank (0 edges, embedder all-MiniLM-L6-v2 (384-d)); unchanged" in out


def test_directory_and_missing_paths(capsys, tmp_path):
    code, _, err = fr(capsys, "query", tmp_path, "x")
    assert code == 2 and f"{tmp_path}: is a directory, not an FR-Bank file" in one_line_error(err)
    code, _, err = fr(capsys, "init", tmp_path)
    assert code == 2 and "is a directory" in one_line_error(err)
    missing = tmp_path / "no" / "such" / "bank.db"
    code, _, err = fr(capsys, "init", missing)
    assert code == 2 and f"folder {str(missing.parent)!r} does not exist" in one_line_error(err)
    (tmp_path / "f.json").write_text(json.dumps([fact("a")]))
    for argv in (("query", "x"), ("export",), ("erase", "x"), ("add", tmp_path / "f.json")):
        code, _, err = fr(capsys, argv[0], missing, *argv[1:])
        assert code == 2 and "no such bank (the file does not exist) (create it with `fr bank init" in one_line_error(
            err
        ), argv
    assert not (tmp_path / "no").exists()
    with pytest.raises(StoreError, match="does not exist") as e:
        Store.open(missing)
    assert e.value.kind == "missing_parent"


def _bank_with(tmp_path, n=400) -> Path:
    p = tmp_path / "big.db"
    with Store.open(p, embedder=HASH) as s:
        s.add_facts([fact(f"f{i}", text=f"fact number {i} " + "padding " * 30) for i in range(n)])
    return p


@pytest.mark.parametrize("damage", ["garbled-pages", "truncated", "garbled-header-page"])
def test_corrupted_or_truncated_bank(capsys, tmp_path, damage):
    p = _bank_with(tmp_path)
    data = bytearray(p.read_bytes())
    if damage == "garbled-pages":
        data[4096 * 3 : len(data) - 4096] = os.urandom(len(data) - 4096 * 4)
    elif damage == "truncated":
        data = data[: len(data) // 2]
    else:
        data[100:4096] = os.urandom(3996)
    p.write_bytes(bytes(data))
    before = digest(p)
    for argv in (("query", "fact number"), ("export",), ("add", tmp_path / "f.json"), ("erase", "f3")):
        (tmp_path / "f.json").write_text(json.dumps([fact("z")]))
        code, out, err = fr(capsys, argv[0], p, *argv[1:], *(["--at", "2025-02-01"] if argv[0] == "query" else []))
        line = one_line_error(err)
        assert code == 2, (argv, out)
        assert "corrupted" in line or "not an FR-Bank" in line, line
        assert digest(p) == before


# ----------------------------------------------------------------------------- subprocess cases
# (run through tests/support/cli_driver.py: several `fr` commands in one child process)


@pytest.mark.skipif(
    PERMISSIONS is None, reason="running as root without setpriv / CAP_SETPCAP: permissions cannot be enforced"
)
def test_read_only_bank_can_be_queried_and_refuses_writes(tmp_path):
    """A bank in a read-only folder, and a read-only bank file in a writable folder: query,
    explain and export work; add, retract and erase fail with one line; the file is unchanged."""
    tmp_path.chmod(0o755)
    banks = {}
    for what in ("folder", "file"):
        d = tmp_path / what
        d.mkdir()
        p = d / "bank.db"
        with Store.open(p, embedder=HASH) as s:
            s.add_facts(
                [fact("home", text="I live in Porto", slot="home"), fact("pet", text="I have a cat named Miso")]
            )
        assert not Path(f"{p}-wal").exists()  # closed cleanly: no -wal, as a copied or archived bank
        banks[what] = (p, digest(p))
        p.chmod(0o444)
        d.chmod(0o555 if what == "folder" else 0o777)
    facts = tmp_path / "f.json"
    facts.write_text(json.dumps([fact("new")]))
    facts.chmod(0o644)
    commands = []
    for p, _ in banks.values():
        commands += [
            ["query", p, "where do I live", "--at", "2025-02-01", "--json"],
            ["explain", p, "cat", "--at", "2025-02-01"],
            ["export", p],
            ["add", p, facts],
            ["retract", p, "home"],
            ["erase", p, "home"],
        ]
    try:
        got = _drive(commands, prefix=PERMISSIONS, env=dict(os.environ, HOME=str(tmp_path)))
    finally:
        for p, _ in banks.values():
            p.parent.chmod(0o755)
            p.chmod(0o644)
    for k, what in enumerate(banks):
        (q, qo, qe), (x, xo, xe), (e, eo, ee), *writes = got[6 * k : 6 * k + 6]
        assert q == 0 and json.loads(qo)["results"][0]["id"] == "home", (what, qe)
        assert x == 0 and "log_blend=" in xo, (what, xe)
        assert e == 0 and json.loads(eo)["edges"][0]["id"] == "home", (what, ee)
        for (code, _, err), msg in zip(
            writes, ("read-only", "read-only", "erase of 'home' failed, nothing was erased")
        ):
            assert code == 2 and msg in one_line_error(err), (what, err)
            assert "read-only" in err
        p, before = banks[what]
        assert digest(p) == before, what
        with Store.open(p, embedder=HASH) as s:
            assert s.count() == 2 and s.integrity_check() == "ok"


def test_disk_full_rolls_back_and_says_so(tmp_path):
    p = tmp_path / "full.db"
    with Store.open(p, embedder=HASH) as s:
        s.add_facts([fact("keep")])
    size = p.stat().st_size
    facts = tmp_path / "many.json"
    facts.write_text(json.dumps([fact(f"m{i}", text="x" * 200) for i in range(3000)]))
    # a file-size limit makes every write past it fail, as a full disk does (SIGXFSZ ignored)
    limit = (
        "import resource, signal; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({size + 65536}, {size + 65536}))\n"
    )
    [(code, _, err)] = _drive([["add", p, facts]], setup=limit)
    line = one_line_error(err)
    assert code == 2 and ("disk I/O error" in line or "disk full" in line) and "rolled back" in line, line
    with Store.open(p, embedder=HASH) as s:
        assert s.integrity_check() == "ok" and s.count() == 1
    # the export's destination full: one line, nothing half-written under the name
    code, _, err = fr_plain(["export", p, "--out", "/dev/full"])
    assert code == 2 and "No space left on device" in one_line_error(err)
    import contextlib
    import io

    err = io.StringIO()
    with open("/dev/full", "w") as full, contextlib.redirect_stdout(full), contextlib.redirect_stderr(err):
        code = cli.main(["bank", "export", str(p)])  # `fr bank export BANK > /dev/full`
    assert code == 2 and "cannot write the output: No space left on device" in one_line_error(err.getvalue())


def fr_plain(argv) -> tuple[int, str, str]:
    import contextlib
    import io

    o, e = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
        code = cli.main(["bank", *map(str, argv)])
    return code, o.getvalue(), e.getvalue()


@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_export_into_a_closed_pipe(tmp_path, unbuffered):
    p = _bank_with(tmp_path, n=3000)  # ~1.9 MB of JSON: far more than a pipe holds
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"} | (
        {"PYTHONUNBUFFERED": "1"} if unbuffered else {}
    )
    r = subprocess.run(
        f"{sys.executable} -m frcore.cli bank export {p} | head -c 100 > /dev/null; echo ${{PIPESTATUS[0]}}",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
        executable="/bin/bash",
        env=env,
    )
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr, r.stderr
    assert _own_lines(r.stderr) == ["fr bank: output closed early (broken pipe); the rest was not written"], r.stderr
    assert r.stdout.strip() == "141"  # as a shell reports a command killed by SIGPIPE


def test_an_id_a_command_line_cannot_carry_is_erased_with_json_id(capsys, tmp_path):
    """A NUL byte cannot be passed in argv; ``--json-id`` takes the id as a JSON string literal
    (a bank written before control characters in ids were refused may hold one)."""
    p = tmp_path / "nul.db"
    with Store.open(p, embedder=HASH) as s:
        s.add_facts([fact("ok")])
    c = sqlite3.connect(p)
    c.execute(
        "INSERT INTO edges (id, text, categories, said_at, confidence, numeric, links, kind, "
        "quarantined, recorded_at, batch) VALUES (?, 't', '{\"OTHER\":1.0}', "
        "'2025-01-01T00:00:00.000000', 1, 0, '{}', 'fact', 0, '2025-01-01T00:00:00.000000', 9)",
        ("a\x00b",),
    )
    c.commit()
    c.close()
    code, _, err = fr(capsys, "erase", p, "a", "--json-id")
    assert code == 2 and "--json-id: 'a' is not a JSON string literal" in one_line_error(err)
    code, out, err = fr(capsys, "erase", p, '"a\\u0000b"', "--json-id")
    assert code == 0 and out.splitlines()[0] == "erased 'a\\x00b'", err
    with Store.open(p, readonly=True) as s:
        assert [e.id for e in s.edges()] == ["ok"] and s.was_erased("a\x00b")
