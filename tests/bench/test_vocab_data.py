"""The suite generator's vocabulary as data (frcore/bench/vocab.json, read by frcore/bench/_vocab.py):
the shipped file loads and is what the generator uses; a template naming a field the generator does
not fill, a malformed placeholder, a brace in plain text or a wrong key or type is refused with an
error naming the file, the entry and the problem."""

from __future__ import annotations

import copy
import dataclasses
import fnmatch
import json
import string
from pathlib import Path

import pytest
from support.paths import ROOT

from frcore.bench import _generator, _vocab

ROOT = ROOT


def _shipped() -> dict:
    return json.loads(_vocab.DATA_FILE.read_text(encoding="utf-8"))


def _written(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "vocab.json"
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def test_shipped_file_loads_and_is_what_the_module_exposes():
    vocab = _vocab.read_file(_vocab.DATA_FILE)
    for name in vocab._fields:
        assert getattr(_vocab, name.upper()) == getattr(vocab, name), name
    assert len(vocab.slot_kinds) == 8 and vocab.slot_kinds[0].slot == "employer"
    assert isinstance(_vocab.SLOT_KINDS[0].fact, tuple) and isinstance(_vocab.CHATTER["calendar"], tuple)
    assert list(_vocab.FILLER_TOPICS)[0] == "meal ideas for a busy week"  # the file's order is kept


def test_schema_covers_every_key_and_every_attribute_of_each_kind():
    assert {*_vocab._SPECS, *_vocab._LISTS, *_vocab._MAPS} == set(_vocab.Vocabulary._fields)
    for cls, spec in _vocab._SPECS.values():
        assert {f.name for f in dataclasses.fields(cls)} == set(spec), cls


def test_vocab_data_ships_with_the_package():
    tomllib = pytest.importorskip("tomllib")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = pyproject["tool"]["setuptools"]["package-data"].get("frcore.bench", [])
    assert any(fnmatch.fnmatch("vocab.json", pattern) for pattern in shipped)


def test_persona_fields_are_the_ones_the_generator_fills():
    builder = _generator._Builder(0, 0)
    builder.identity()
    assert set(builder.ctx) == _vocab.PERSONA_FIELDS


def test_every_template_formats_with_its_fields():
    """Each template, filled with exactly the fields the schema allows it, formats (and a plain
    text entry has no placeholder at all)."""
    data = _shipped()
    checked = 0
    for section, (_, spec) in _vocab._SPECS.items():
        for entry in data[section]:
            for key, value in entry.items():
                fields = spec[key].fields
                for text in value if isinstance(value, list) else [value]:
                    if not isinstance(text, str):
                        continue
                    names = {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
                    if fields is None:
                        assert not names, (section, key, text)
                    else:
                        text.format_map(dict.fromkeys(fields, "x"))
                        checked += 1
    for name, list_spec in _vocab._LISTS.items():
        if list_spec.fields is not None:
            for text in data[name]:
                text.format_map(dict.fromkeys(list_spec.fields, "x"))
                checked += 1
    assert checked > 300


def test_unknown_field_is_refused_naming_file_entry_and_field(tmp_path):
    data = _shipped()
    data["slot_kinds"][2]["fact"][1] = "Eats {cuisine} food at home"
    path = _written(tmp_path, data)
    with pytest.raises(ValueError) as err:
        _vocab.read_file(path)
    message = str(err.value)
    assert str(path) in message
    assert f"slot_kinds[2] ({data['slot_kinds'][2]['slot']}).fact[1]" in message
    assert "unknown field {cuisine}" in message


@pytest.mark.parametrize(
    ("section", "key", "index", "template"),
    [
        # a field the generator fills elsewhere, but not for this template
        ("stable_kinds", "fact", 0, "Grew up in {hometown} ({v})"),
        ("expiring_kinds", "fact", None, "Dentist at {clock} on {when}, {amount}"),
        ("retraction_kinds", "question", 0, "Did {first} pay {amount}?"),
        ("numeric_details", "question", None, "How much is {amount}?"),
        ("tentative_kinds", "answer", None, "Lives with {old}"),
        ("slot_kinds", "question", 1, "Where did {first} work before {old}?"),
    ],
)
def test_a_field_of_another_template_is_refused(tmp_path, section, key, index, template):
    data = _shipped()
    entry = data[section][0]
    if index is None:
        entry[key] = template
    else:
        entry[key][index] = template
    with pytest.raises(ValueError, match=r"unknown field \{(v|amount|old)\}"):
        _vocab.read_file(_written(tmp_path, data))


@pytest.mark.parametrize("name", ["upcoming_questions", "past_questions", "broad_questions", "critical_openers"])
def test_unknown_field_in_a_list_of_templates_is_refused(tmp_path, name):
    data = _shipped()
    data[name].append("What about {nickname}?")
    position = len(data[name]) - 1
    with pytest.raises(ValueError, match=rf"{name}\[{position}\]: unknown field \{{nickname\}}"):
        _vocab.read_file(_written(tmp_path, data))


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("Lives in {v!r}", "is not a plain"),
        ("Lives in {v:>20}", "is not a plain"),
        ("Lives in {0}", "is not a plain"),
        ("Lives in {}", "is not a plain"),
        ("Lives in {v.upper}", "is not a plain"),
        ("Lives in {v", "not a format string"),
    ],
)
def test_malformed_placeholder_is_refused(tmp_path, template, problem):
    data = _shipped()
    data["slot_kinds"][1]["fact"][0] = template
    with pytest.raises(ValueError, match=r"slot_kinds\[1\] \(city_of_residence\)\.fact\[0\]: .*" + problem):
        _vocab.read_file(_written(tmp_path, data))


@pytest.mark.parametrize(
    ("where", "mutate"),
    [
        (r"contradiction_kinds\[0\] \(alcohol\)\.old", lambda d: d["contradiction_kinds"][0].update(old="{first}")),
        (r"chatter\['origin'\]\[1\]", lambda d: d["chatter"]["origin"].__setitem__(1, "a {x} line")),
        (r"first_names\[0\]", lambda d: d["first_names"].__setitem__(0, "Ma{ren")),
        (r"hobby_details\[0\] \(choir\)\.say", lambda d: d["hobby_details"][0].update(say="sang {song}")),
    ],
)
def test_brace_in_plain_text_is_refused(tmp_path, where, mutate):
    data = _shipped()
    mutate(data)
    with pytest.raises(ValueError, match=where + ": plain text"):
        _vocab.read_file(_written(tmp_path, data))


@pytest.mark.parametrize(
    ("mutate", "problem"),
    [
        (lambda d: d["slot_kinds"][0].update(salary=["x"]), r"slot_kinds\[0\] \(employer\): unknown keys \['salary'\]"),
        (lambda d: d["stable_kinds"][0].pop("answer"), r"stable_kinds\[0\] \(origin\): missing keys \['answer'\]"),
        (lambda d: d["slot_kinds"][0].update(fact="Works at {v}"), r"\.fact: expected a non-empty list"),
        (lambda d: d["slot_kinds"][0].update(chatter=[]), r"\.chatter: expected a non-empty list"),
        (lambda d: d["slot_kinds"][0].update(categories=["A"]), r"\.categories: expected two strings"),
        (lambda d: d["expiring_kinds"][0].update(hour="10"), r"\.hour: expected an integer"),
        (lambda d: d["expiring_kinds"][0].update(hour=True), r"\.hour: expected an integer"),
        (lambda d: d["stable_kinds"][0].update(numeric=1), r"\.numeric: expected true or false"),
        (lambda d: d.pop("follow_ups"), r": missing keys \['follow_ups'\]"),
        (lambda d: d.update(extra_lines=["x"]), r": unknown keys \['extra_lines'\]"),
        (lambda d: d["hobby_mentions"].pop("chess"), r"hobby_mentions: no lines for the hobby details \['chess'\]"),
    ],
)
def test_schema_is_checked(tmp_path, mutate, problem):
    data = _shipped()
    mutate(data)
    path = _written(tmp_path, data)
    with pytest.raises(ValueError, match=problem) as err:
        _vocab.read_file(path)
    assert str(err.value).startswith(str(path))


def test_file_that_is_not_json_is_refused(tmp_path):
    path = tmp_path / "vocab.json"
    path.write_text('{"first_names": [', encoding="utf-8")
    with pytest.raises(ValueError, match="not JSON"):
        _vocab.read_file(path)


def test_load_of_the_unchanged_copy_is_equal(tmp_path):
    """The temp copies above differ from the shipped file only where each test changes it."""
    data = _shipped()
    assert _vocab.read_file(_written(tmp_path, copy.deepcopy(data))) == _vocab.read_file(_vocab.DATA_FILE)


def test_generator_refuses_amount_in_a_numeric_detail_without_an_amount_range(monkeypatch):
    commute = next(k for k in _vocab.NUMERIC_DETAILS if k.key == "commute")
    bad = type(commute)(**{**commute.__dict__, "answer": "{amount} each way"})
    monkeypatch.setattr(_vocab, "NUMERIC_DETAILS", (*_vocab.NUMERIC_DETAILS, bad))
    with pytest.raises(ValueError, match=r"numeric detail 'commute' uses \{amount\}"):
        _generator._check_vocab()
