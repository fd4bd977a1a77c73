"""Issue 40's smaller items: every error is one short line.

- a user's value is echoed shortened, with its length (``frcore._shown.shown``), never whole;
- a bad argument is one line (``fr bank add: error: ...``, exit 2), a bad parameter value names
  the parameter by its name (never an index), and JAX's warnings do not make an error several lines;
- ids refuse C1 control characters as user names do (one character class);
- a derived turn id is salted with its user (the owner's stays as it was), so one user cannot
  learn from "id already in use" whether another said a sentence.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import frcore as fr
from frcore import cli
from frcore._shown import SHOWN_CHARS, shown
from frcore.bank import records
from frcore.bank.records import FactError, parse_fact, turn_id

BIG = "a" * 2_000_000
FACT = {"id": "f1", "text": "I live in Paris", "categories": {"OTHER": 1.0}, "said_at": "2025-01-01"}


@pytest.fixture
def bank_path(tmp_path, capsys):
    path = tmp_path / "b.db"
    assert cli.main(["bank", "init", str(path), "--embedder", "hash"]) == 0
    capsys.readouterr()
    return str(path)


def _run(argv, capsys) -> tuple[int, str, str]:
    try:
        rc = cli.main(argv)
    except SystemExit as e:
        rc = e.code
    out = capsys.readouterr()
    return rc, out.out, out.err


# ----------------------------------------------------------------------------- values shortened


def test_shown_shortens_a_long_value_and_gives_its_length():
    assert shown(BIG) == "'" + "a" * SHOWN_CHARS + "…' (2,000,000 characters)"
    assert shown("Paris") == "'Paris'" and shown(3) == "3" and shown(None) == "None"
    assert len(shown("\x85" * 10_000)) < 2 * SHOWN_CHARS + 40  # escapes count against the limit
    assert len(shown(list(range(1_000_000)))) < 2 * SHOWN_CHARS + 40
    assert shown(10**2000) == "an integer of 2,001 digits" and shown(10**5000) == "an integer of over 3,000 digits"
    assert shown(b"b" * 1000).endswith("…' (1,000 bytes)")


@pytest.mark.parametrize(
    "field, value",
    [
        ("id", BIG),
        ("said_at", BIG),
        ("confidence", BIG),
        ("kind", BIG),
        ("slot", BIG),
        ("text", BIG),
        ("event_time", BIG),
        ("speaker", BIG),
    ],
)
def test_fr_bank_add_echoes_a_2mb_value_shortened(tmp_path, bank_path, capsys, field, value):
    path = tmp_path / "facts.json"
    path.write_text(json.dumps([{**FACT, field: value}]))
    rc, _, err = _run(["bank", "add", bank_path, str(path)], capsys)
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1, err[:500]
    assert len(lines[0]) < 300, lines[0][:500]
    assert f"{path}: facts[0]: fact " in lines[0] and f"field {field!r}" in lines[0], lines[0][:300]


def test_an_unknown_2mb_category_is_shortened(tmp_path, bank_path, capsys):
    path = tmp_path / "facts.json"
    path.write_text(json.dumps([{**FACT, "categories": {BIG: 1.0}}]))
    rc, _, err = _run(["bank", "add", bank_path, str(path)], capsys)
    line = err.strip()
    assert rc == 2 and "\n" not in line and "(2,000,000 characters)" in line
    assert len(line) < 300 + len(", ".join(fr.CATEGORY_NAMES)), line[:500]


def test_a_duplicate_2mb_key_is_shortened(tmp_path, bank_path, capsys):
    path = tmp_path / "facts.json"
    path.write_text(f'[{{"id": "f1", "{BIG}": 1, "{BIG}": 2}}]')
    rc, _, err = _run(["bank", "add", bank_path, str(path)], capsys)
    assert rc == 2 and len(err.strip()) < 300 and "given twice" in err, err[:500]


@pytest.mark.parametrize(
    "fact",
    [
        {**FACT, "id": BIG},
        {**FACT, "said_at": BIG},
        {**FACT, "categories": {"OTHER": BIG}},
        {**FACT, "links": {"supersedes": [BIG[:999_999] + "\x00"]}},
        {**FACT, "user": BIG + "\x85"},
    ],
)
def test_the_servers_validation_echoes_a_2mb_value_shortened(fact):
    """MCP ``remember`` validates a fact with ``parse_fact`` (as ``fr bank add`` does)."""
    with pytest.raises(FactError) as e:
        parse_fact(fact, "facts[0]")
    msg = str(e.value)
    assert msg.startswith("facts[0]: fact ") and "field '" in msg and len(msg) < 300, msg[:500]


def test_a_2mb_parameter_value_is_shortened(capsys):
    rc, _, err = _run(
        ["bank", "query", "/nonexistent/bank.db", "where", "--param", "rate.OTHER=" + "x" * 100_000], capsys
    )
    assert rc == 2 and "\n" not in err.strip() and len(err) < 300, err[:500]
    assert "rate.OTHER" in err and "(100,000 characters)" in err


# ----------------------------------------------------------------------------- one-line errors


@pytest.mark.parametrize(
    "argv, prog",
    [
        (["bank", "add"], "fr bank add"),
        (["bank", "add", "b.db", "f.json", "--max-bytes", "lots"], "fr bank add"),
        (["bank"], "fr bank"),
        (["bank", "nope"], "fr bank"),
        (["nope"], "fr"),
        (["bank", "query", "b.db", "x", "--k", "ten"], "fr bank query"),
        (["bank", "erase", "b.db", "x", "--wait"], "fr bank erase"),
    ],
)
def test_a_bad_argument_is_one_line(argv, prog, capsys):
    rc, out, err = _run(argv, capsys)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"{prog}: error: "), err
    assert "usage:" not in err


def test_a_huge_bad_argument_is_shortened(capsys):
    rc, _, err = _run(["bank", "add", "b.db", "f.json", "--max-bytes", "9" * 50 + "z" * 50_000], capsys)
    assert rc == 2 and err.count("\n") == 1 and len(err) < 300 and "(50,050 characters)" in err, err[:500]


def test_help_is_argparses_own(capsys):
    rc, out, err = _run(["bank", "add", "--help"], capsys)
    assert rc == 0 and out.startswith("usage: fr bank add [-h]") and "--max-bytes N" in out and err == ""


def test_a_multi_line_message_is_printed_as_one_line(capsys):
    cli._error("bank", "error: SQLite: malformed\nCREATE TABLE edges (\n  id TEXT\n)")
    err = capsys.readouterr().err
    assert err == "fr bank: error: SQLite: malformed CREATE TABLE edges ( id TEXT )\n"


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda d: d["params"]["rates"].__setitem__(10, "fast"), "params.rates.OTHER"),
        (lambda d: d["params"]["rates"].__setitem__(10, -1.0), "params.rates.OTHER"),
        (lambda d: d["params"]["clocks"].__setitem__(8, [1, None, 0]), "params.clocks.OBLIGATIONS.session"),
    ],
)
def test_a_bad_parameter_file_names_the_parameter_not_an_index(tmp_path, capsys, mutate, field):
    doc = fr.params_to_dict(fr.default_params())
    mutate(doc)
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    rc, _, err = _run(["bank", "query", "/nonexistent/bank.db", "where", "--params", str(path)], capsys)
    assert rc == 2 and err.count("\n") == 1, err
    assert f"{path}: {field}: " in err and "[" not in err.split(f"{path}: ")[1].split(":")[0], err


def test_a_bad_parameter_value_names_the_parameter(capsys):
    rc, _, err = _run(["bank", "query", "/nonexistent/bank.db", "where", "--param", "rate.OTHER=-1"], capsys)
    assert rc == 2 and err == "fr bank: error: --param: rate.OTHER: must be > 0, got -1\n"
    rates = np.asarray(fr.default_params().rates).copy()
    rates[10] = -1.0
    with pytest.raises(ValueError, match=r"^params\.rates\.OTHER: must be > 0, got -1$"):
        fr.replace_params(fr.default_params(), rates=rates)


_FAKE_COMMAND = textwrap.dedent(
    """
    import logging, sys, warnings
    import frcore.cli as cli

    def func(args):
        import jax.numpy as jnp
        logging.getLogger("jax._src.xla_bridge").warning(
            "An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. "
            "Falling back to cpu."
        )
        jnp.asarray([1.0], dtype="float64")  # float64 without x64: JAX's truncation warning
        if args.fail:
            raise ValueError("bad value")
        print("done")
        return 0

    def build(commands=None):
        parser = cli.Parser(prog="fr")
        sp = parser.add_subparsers(dest="command").add_parser("fake")
        sp.add_argument("--fail", action="store_true")
        sp.set_defaults(func=func)
        return parser, []

    cli.build_parser = build
    sys.exit(cli.main(sys.argv[1:]))
    """
)


def _fake(*argv: str) -> subprocess.CompletedProcess:
    """``fr fake`` in a fresh interpreter: logging as ``fr`` has it (pytest's handlers catch JAX's
    records in this process), warnings shown as Python's default filters say."""
    env_free = [sys.executable, "-W", "default", "-c", _FAKE_COMMAND, "fake", *argv]
    return subprocess.run(env_free, capture_output=True, text=True, timeout=120, env={"JAX_PLATFORMS": ""})


def test_jax_warnings_do_not_make_an_error_several_lines():
    failed = _fake("--fail")
    assert failed.returncode == 2 and failed.stderr == "fr fake: error: bad value\n", failed.stderr
    ok = _fake()  # a command that succeeds still prints them, as JAX does
    assert ok.returncode == 0 and ok.stdout == "done\n"
    assert "An NVIDIA GPU may be present" in ok.stderr and "jax_enable_x64" in ok.stderr, ok.stderr


# ----------------------------------------------------------------------------- C1 controls in ids


@pytest.mark.parametrize("char", ["\x85", "\x80", "\x9f", "\x00", "\x1b", "\x7f"])
def test_ids_refuse_the_control_characters_user_names_refuse(char):
    with pytest.raises(FactError, match=rf"field 'id': contains control character U\+{ord(char):04X} at position 1"):
        parse_fact({**FACT, "id": "f" + char + "1"})
    with pytest.raises(FactError, match=rf"field 'links': contains control character U\+{ord(char):04X}"):
        parse_fact({**FACT, "links": {"supersedes": "f" + char + "0"}})
    with pytest.raises(ValueError, match=rf"user: contains control character U\+{ord(char):04X}"):
        records.check_user("bob" + char)


def test_one_character_class_for_ids_and_user_names():
    controls = [chr(c) for c in range(0x110000) if records.first_control(chr(c))]
    assert controls == [chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))]
    parse_fact({**FACT, "id": "f\xa0é\u2028"})  # NBSP, accents and the like are not control characters


# ----------------------------------------------------------------------------- turn ids per user

AT, SPEAKER, TEXT = "2025-03-15T00:00:00", "user", "I went hiking in the mountains with my sister this weekend."


def test_the_owners_turn_id_is_unchanged():
    by_hand = "turn-" + hashlib.sha256(f"{AT}\x1f{SPEAKER}\x1f{TEXT}".encode()).hexdigest()[:16]
    assert by_hand == "turn-060397ff20556402"  # computed once with the formula above, before issue 40
    assert turn_id(TEXT, SPEAKER, AT) == turn_id(TEXT, SPEAKER, AT, None) == turn_id(TEXT, SPEAKER, AT, "") == by_hand
    assert (
        turn_id("hi", None, "2025-01-01T00:00:00")
        == "turn-" + hashlib.sha256(b"2025-01-01T00:00:00\x1f\x1fhi").hexdigest()[:16]
    )


def test_turn_ids_are_salted_per_user():
    owner, bob, carol = (
        turn_id(TEXT, SPEAKER, AT),
        turn_id(TEXT, SPEAKER, AT, "bob"),
        turn_id(TEXT, SPEAKER, AT, "carol"),
    )
    assert len({owner, bob, carol}) == 3
    assert records.DERIVED_TURN_ID.fullmatch(bob) and records.DERIVED_TURN_ID.fullmatch(carol)
    # a text that carries the separator and a user's name does not make the owner's id a user's
    assert turn_id(TEXT + "\x1fbob", SPEAKER, AT) != bob


def _turn(fid: str, user: str | None = None, text: str = TEXT) -> dict:
    rec = {"id": fid, "kind": "turn", "text": text, "said_at": AT, "speaker": SPEAKER}
    return rec if user is None else {**rec, "user": user}


def test_two_users_store_the_same_turn_each_under_their_own_id(tmp_path):
    bank = fr.bank.Bank.open(tmp_path / "b.db", embedder="hash", create=True)
    try:
        owner_id = turn_id(TEXT, SPEAKER, AT)
        assert list(bank.add([_turn(owner_id)])) == [owner_id]
        for user in ("bob", "carol"):
            theirs = turn_id(TEXT, SPEAKER, AT, user)
            assert list(bank.for_user(user).add([_turn(theirs)])) == [theirs]
        # bob cannot probe the owner's sentence with the owner's id: the form is reserved for his own turns
        with pytest.raises(ValueError, match=r"field 'id': the form turn-<16 hex digits> is reserved"):
            bank.for_user("bob").add([_turn(owner_id, text="I went hiking")])
        with pytest.raises(ValueError, match=r"field 'id': the form turn-<16 hex digits> is reserved"):
            bank.for_user("bob").add([_turn(owner_id)])  # the owner's id of the same turn: refused the same way
    finally:
        bank.close()


def test_a_user_may_not_give_a_derived_looking_id_that_is_not_their_turns():
    fake = "turn-0123456789abcdef"
    with pytest.raises(FactError, match=r"facts\[0\]: fact 'turn-0123456789abcdef': field 'id': the form"):
        parse_fact({**FACT, "id": fake, "user": "bob"}, "facts[0]")
    with pytest.raises(FactError, match="reserved"):
        parse_fact(_turn(fake, "bob"))
    parse_fact(_turn(fake))  # the owner's ids are as they were
    parse_fact({**FACT, "id": "turn-1", "user": "bob"})  # another form is any user's
    parse_fact(_turn(turn_id(TEXT, SPEAKER, AT, "bob"), "bob"))
