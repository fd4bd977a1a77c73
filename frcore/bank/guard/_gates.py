"""Gates of the prompt-injection detector: cheap necessary conditions checked before a rule's
regular expression, and the index that finds the gates a view can meet through its words.

A gate never changes a verdict (tests/bank/guard/test_injection.py checks that); it only skips rules that
cannot match.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import ahocorasick

from ._normalise import strip_marks


@dataclass(frozen=True)
class Gate:
    """A cheap necessary condition for a rule, checked before its regular expression. It admits a
    view when (1) some word of the view starts with one of ``prefixes`` (compared on their first
    :data:`_PREFIX_MAX` letters), or the view contains one of ``chars``, or a character of
    ``script`` — unless all three are empty; (2) for each set of ``also``, some word also starts
    with one of its words (for the first, or the view contains one of ``also_chars``); (3) it contains every
    string of ``all_chars``. A gate never changes a verdict (tests/bank/guard/test_injection.py checks that);
    it only skips rules that cannot match."""

    prefixes: frozenset[str] = frozenset()
    chars: tuple[str, ...] = ()
    all_chars: tuple[str, ...] = ()
    script: re.Pattern[str] | None = None
    also: tuple[frozenset[str], ...] = ()
    also_chars: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # "contains one of these strings" as one compiled search (the same test as a loop of `in`)
        object.__setattr__(self, "_chars", _any_of(self.chars))
        object.__setattr__(self, "_also_chars", _any_of(self.also_chars))

    def admits(self, view: str, view_prefixes: frozenset[str]) -> bool:
        for c in self.all_chars:
            if c not in view:
                return False
        for k, words in enumerate(self.also):
            if words.isdisjoint(view_prefixes) and not (k == 0 and _found(self._also_chars, view)):  # type: ignore[attr-defined]
                return False
        if not (self.prefixes or self.chars or self.script):
            return True
        return (
            not self.prefixes.isdisjoint(view_prefixes)
            or _found(self._chars, view)  # type: ignore[attr-defined]
            or (self.script is not None and self.script.search(view) is not None)
        )


def _any_of(strings: tuple[str, ...]) -> re.Pattern[str] | None:
    """A pattern found in a text exactly when one of ``strings`` is (``None`` for none)."""
    return re.compile("|".join(re.escape(c) for c in strings)) if strings else None


def _found(pattern: re.Pattern[str] | None, view: str) -> bool:
    return pattern is not None and pattern.search(view) is not None


#: Gate words are compared by their first :data:`_PREFIX_MAX` letters (a looser gate only runs a
#: rule more often; it never hides a match).
_PREFIX_MAX = 4


def prefixes(view: str) -> frozenset[str]:
    """Every prefix (up to :data:`_PREFIX_MAX` letters) of every word of a view."""
    return _word_prefixes(frozenset(_LEADING.findall(view)))


_LEADING = re.compile(rf"\b\w{{1,{_PREFIX_MAX}}}")


@lru_cache(maxsize=64)
def _word_prefixes(leading: frozenset[str]) -> frozenset[str]:
    """All prefixes of the given word beginnings (a text's views mostly share them: cached)."""
    return frozenset([w[:k] for w in leading for k in range(1, _PREFIX_MAX + 1)])  # (each w has ≤ _PREFIX_MAX letters)


class WordStarts:
    """The gate words a view begins a word with, found by one Aho–Corasick automaton over all of
    them (pyahocorasick): ``words_in(view)`` is ``prefixes(view) & words`` (:func:`prefixes`), all
    a gate reads of a view's prefixes (:meth:`Gate.admits` only asks whether its words are among
    them). A word occurrence counts where it starts a word: at the start of the view or after a
    character that is not a word character (``\\w``, as Python's ``re`` reads it)."""

    def __init__(self, words: Iterable[str]):
        # a word with a character outside \w never starts a view's \w run: never found (as by prefixes())
        self.words = frozenset(w for w in words if w and _WORD_RUN.fullmatch(w))
        self._automaton = ahocorasick.Automaton()
        for w in self.words:
            self._automaton.add_word(w, (len(w) - 1, w))
        if self.words:
            self._automaton.make_automaton()

    def words_in(self, view: str) -> frozenset[str]:
        if not self.words:
            return frozenset()
        word_char = _WORD_CHAR.match
        found = set()
        for end, (back, w) in self._automaton.iter(view):
            start = end - back
            if start == 0 or word_char(view, start - 1) is None:
                found.add(w)
        return frozenset(found)


_WORD_RUN = re.compile(r"\w+")
_WORD_CHAR = re.compile(r"\w")


def lead_words(alternation: str) -> str:
    """The literal word each alternative of a regex alternation starts with (its letters up to the
    first character that is not a letter, less a letter made optional by ``?``), space-separated:
    the words one of which a text must contain for the alternation to match."""
    body = alternation[3:-1] if alternation.startswith("(?:") and alternation.endswith(")") else alternation
    depth, alts, cur = 0, [], ""
    for ch in body:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "|" and depth == 0:
            alts.append(cur)
            cur = ""
        else:
            cur += ch
    alts.append(cur)
    words = []
    for alt in alts:
        alt = alt.removeprefix("\\b")
        n = 0
        while n < len(alt) and alt[n].isalpha():
            n += 1
        word = alt[: n - 1] if n < len(alt) and alt[n] == "?" else alt[:n]
        if not word:
            raise ValueError(f"alternative {alt!r} does not start with a word: it cannot gate a rule")
        words.append(word)
    return " ".join(words)


def _words(words: str) -> frozenset[str]:
    return frozenset(strip_marks(w).casefold()[:_PREFIX_MAX] for w in words.split())


#: Scripts other than Latin that rules in other languages are written in (Cyrillic, Arabic,
#: Devanagari, kana, CJK, Hangul): a gate for those rules.
OTHER_SCRIPTS = re.compile("[\u0400-\u04ff\u0600-\u06ff\u0900-\u097f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def make_gate(
    words: str = "",
    chars: tuple[str, ...] = (),
    all_chars: str | tuple[str, ...] = (),
    script: bool = False,
    also: str = "",
    also_chars: tuple[str, ...] = (),
    also2: str = "",
    also3: str = "",
) -> Gate:
    """A :class:`Gate` from space-separated word prefixes (normalised like the views); ``script``
    admits text in :data:`OTHER_SCRIPTS`; ``also``, ``also2``, ``also3``: further word sets, each
    of which must be met."""
    sets = tuple(_words(w) for w in (also, also2, also3) if w)
    if also_chars and not also:
        raise ValueError("also_chars extends also")
    return Gate(
        _words(words), tuple(chars), tuple(all_chars), OTHER_SCRIPTS if script else None, sets, tuple(also_chars)
    )


def _needs(gates: Iterable[Gate]) -> re.Pattern[str] | None:
    """A pattern found in every view that one of ``gates`` (gates not found through a word)
    admits other than through its words: one of its strings or its script, or, gated on no
    words, the first string it needs; ``None`` when some gate needs none of those."""
    needs: list[str] = []
    for gate in gates:
        if gate.prefixes or gate.chars or gate.script is not None:
            needs.extend(re.escape(c) for c in gate.chars)
            if gate.script is not None:
                needs.append(gate.script.pattern)
        elif gate.all_chars:
            needs.append(re.escape(gate.all_chars[0]))
        else:
            return None
    return re.compile("|".join(dict.fromkeys(needs))) if needs else None


class GateIndex:
    """The gates of named rules or signals, found through a view's word prefixes:
    :meth:`admitted` is ``{key for key, gate in gates.items() if gate.admits(view, prefixes)}``,
    testing only the gates a prefix of the view names, those not found through a word (gated on
    characters or a script, or not on words) when the view holds a string or script one of them
    needs, and checking in full those whose gate needs more than one of its words."""

    def __init__(self, gates: Mapping[Any, Gate]):
        by_prefix: dict[str, list[Any]] = {}
        others, check = [], set()
        for key, gate in gates.items():
            for p in gate.prefixes:
                by_prefix.setdefault(p, []).append(key)
            if gate.chars or gate.script is not None or not gate.prefixes:
                others.append(key)
            if gate.also or gate.all_chars or key in others:
                check.add(key)
        self.gates = dict(gates)
        self.by_prefix = {p: tuple(v) for p, v in by_prefix.items()}
        self.prefix_keys = frozenset(self.by_prefix)
        self.others = tuple(others)
        self.check = frozenset(check)
        self.others_need = _needs(gates[k] for k in others)

    def admitted(self, view: str, view_prefixes: frozenset[str]) -> set[Any]:
        need = self.others_need
        found: set[Any] = set(self.others) if need is None or need.search(view) is not None else set()
        for p in view_prefixes & self.prefix_keys:
            found.update(self.by_prefix[p])
        return {k for k in found if k not in self.check or self.gates[k].admits(view, view_prefixes)}
