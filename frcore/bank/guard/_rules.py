"""The rules of the prompt-injection detector, read from the data file ``rules.json`` beside this module.

The file holds the named regular-expression building blocks (``fragments``), the rules in the order
they are tried (each a name shown to users, a family, a :class:`~._gates.Gate` and a pattern), the
weaker ``signals`` and the ``combinations`` of signals that flag a text; its ``_format`` entry
states the format. Loading expands, in patterns, ``{NAME}`` to the fragment ``NAME`` (fragments may
use other fragments) and, in gate words, ``{lead:NAME}`` to the first word of each alternative of
that fragment (:func:`~._gates.lead_words`). Each fragment is defined once, in the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from importlib.resources import files
from typing import Any, NamedTuple

from ._gates import Gate, lead_words, make_gate

#: A fragment named in a pattern: ``{NAME}`` (capitals, digits and ``_``; a regex quantifier such
#: as ``{0,3}`` never has this form).
_REF = re.compile(r"\{([A-Z][A-Z0-9_]*)\}")
#: The lead words of a fragment named in a gate's words: ``{lead:NAME}``.
_LEAD = re.compile(r"\{lead:([A-Z][A-Z0-9_]*)\}")
_GATE_KEYS = frozenset({"words", "swap", "chars", "all_chars", "script", "also", "also2", "also3", "also_chars"})


class RuleSource(NamedTuple):
    """A rule of the data file, its fragments expanded."""

    name: str  #: shown to users (:attr:`~._injection.Detection.rule`)
    family: str  #: override, role, template, poison, exfil, persona, tool, multilingual
    gate: Gate  #: a necessary condition, checked before the pattern
    pattern: str  #: a regular expression over a view


def _joined(value: str | list[str]) -> str:
    """A string of the data file, which may be given as a list of strings: their concatenation."""
    return value if isinstance(value, str) else "".join(value)


def _check_keys(entry: Mapping[str, Any], allowed: frozenset[str], where: str) -> None:
    unknown = set(entry) - allowed
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)} (known: {sorted(allowed)})")


def expand_fragments(raw: Mapping[str, str]) -> dict[str, str]:
    """Each fragment with the fragments it names (``{NAME}``) substituted, recursively; a
    :class:`ValueError` for an unknown name or a fragment that uses itself."""
    done: dict[str, str] = {}

    def expand(name: str, using: tuple[str, ...]) -> str:
        if name in using:
            raise ValueError(f"fragment {name} uses itself: {' -> '.join((*using, name))}")
        if name not in raw:
            raise ValueError(f"unknown fragment {name!r} (in {using[-1]})")
        if name not in done:
            done[name] = _REF.sub(lambda m: expand(m.group(1), (*using, name)), raw[name])
        return done[name]

    for name in raw:
        expand(name, ())
    return done


def substitute(template: str, fragments: Mapping[str, str], where: str) -> str:
    """``template`` with each ``{NAME}`` replaced by the fragment ``NAME`` (a :class:`ValueError`
    naming ``where`` for an unknown one)."""

    def one(m: re.Match[str]) -> str:
        if m.group(1) not in fragments:
            raise ValueError(f"{where}: unknown fragment {m.group(1)!r}")
        return fragments[m.group(1)]

    return _REF.sub(one, template)


def gate_of(spec: Mapping[str, Any], fragments: Mapping[str, str], where: str) -> Gate:
    """The :class:`~._gates.Gate` a data-file gate describes (see ``_format`` in the file)."""
    _check_keys(spec, _GATE_KEYS, where)

    def lead(m: re.Match[str]) -> str:
        return lead_words(substitute("{" + m.group(1) + "}", fragments, where))

    words = _LEAD.sub(lead, _joined(spec.get("words", "")))
    swap: dict[str, str] = spec.get("swap", {})
    if swap:
        split = words.split(" ")
        if not set(swap) <= set(split):
            raise ValueError(f"{where}: swap names words the gate does not have: {sorted(set(swap) - set(split))}")
        words = " ".join(swap.get(w, w) for w in split)
    return make_gate(
        words,
        chars=tuple(spec.get("chars", ())),
        all_chars=spec.get("all_chars", ()),
        script=spec.get("script", False),
        also=_joined(spec.get("also", "")),
        also_chars=tuple(spec.get("also_chars", ())),
        also2=_joined(spec.get("also2", "")),
        also3=_joined(spec.get("also3", "")),
    )


#: What :func:`load` returns: fragments, rules, signals (name → gate, pattern), combinations.
Tables = tuple[
    dict[str, str],
    tuple[RuleSource, ...],
    dict[str, tuple[Gate, str]],
    tuple[tuple[str, str, tuple[str, ...]], ...],
]


def load(data: Mapping[str, Any]) -> Tables:
    """(fragments, rules, signals as name → (gate, pattern), combinations) from the parsed data file."""
    _check_keys(data, frozenset({"_format", "fragments", "rules", "signals", "combinations"}), "rules.json")
    for name, frag in data["fragments"].items():
        _check_keys(frag, frozenset({"doc", "pattern"}), f"fragment {name}")
    fragments = expand_fragments({name: _joined(frag["pattern"]) for name, frag in data["fragments"].items()})
    rules: list[RuleSource] = []
    for section in data["rules"]:
        _check_keys(section, frozenset({"section", "rules"}), f"section {section.get('section')!r}")
        for rule in section["rules"]:
            where = f"rule {len(rules)} ({rule.get('name')})"
            _check_keys(rule, frozenset({"name", "family", "gate", "pattern", "doc"}), where)
            pattern = substitute(_joined(rule["pattern"]), fragments, where)
            rules.append(RuleSource(rule["name"], rule["family"], gate_of(rule["gate"], fragments, where), pattern))
    signals: dict[str, tuple[Gate, str]] = {}
    for name, sig in data["signals"].items():
        _check_keys(sig, frozenset({"doc", "gate", "pattern"}), f"signal {name}")
        where = f"signal {name}"
        signals[name] = (gate_of(sig["gate"], fragments, where), substitute(_joined(sig["pattern"]), fragments, where))
    combinations = []
    for combo in data["combinations"]:
        _check_keys(combo, frozenset({"name", "signal", "with"}), f"combination {combo.get('name')}")
        unknown = {combo["signal"], *combo["with"]} - set(signals)
        if unknown:
            raise ValueError(f"combination {combo['name']}: unknown signals {sorted(unknown)}")
        combinations.append((combo["name"], combo["signal"], tuple(combo["with"])))
    return fragments, tuple(rules), signals, tuple(combinations)


def read_data() -> dict[str, Any]:
    """The parsed data file (found beside this module, in the source tree or an installed package)."""
    package = __name__.rpartition(".")[0]  # frcore.bank.guard
    return json.loads(files(package).joinpath("rules.json").read_text(encoding="utf-8"))


# FRAGMENTS: the fragments, expanded (the detector needs ``IMP`` and ``DIRECTIVE``); RULE_SOURCES: the
# rules, in the order they are tried; COMBINATIONS: pairs of signals that flag a text together (name
# shown to users, signal, any of these signals).
FRAGMENTS, RULE_SOURCES, _SIGNAL_TABLE, COMBINATIONS = load(read_data())
#: The gate of each rule, in the order of :data:`RULE_SOURCES`.
GATES: tuple[Gate, ...] = tuple(rule.gate for rule in RULE_SOURCES)
#: Weaker cues, each harmless alone, that flag a text in combination (:data:`COMBINATIONS`): an
#: imperative to the assistant *and* its control vocabulary, an authority claim *and* an override,
#: "the user" *and* a planted answer. A rule names one phrasing; the signals catch the paraphrases
#: between them. Each is a regular expression over a view, like a rule.
SIGNAL_SOURCES: dict[str, str] = {name: pattern for name, (_, pattern) in _SIGNAL_TABLE.items()}
#: The gate of each signal.
SIGNAL_GATES: dict[str, Gate] = {name: gate for name, (gate, _) in _SIGNAL_TABLE.items()}
