"""Prompt-injection detector behind FR-Bank's quarantine.

A stored fact is text that will later be placed in front of a language model. Text that *talks to
that model* — overrides its instructions, spoofs a system or assistant turn, plants an answer for
a future question, asks it to leak data or call a tool, or casts it as an unrestricted persona —
is quarantined by the store (kept, excluded from retrieval). Ordinary statements *about*
instructions, jailbreaks, system prompts or developer mode are not: the rules look for the
imperative addressed to the assistant, not for keywords.

Detection runs in three steps.

1. **Normalisation** (:mod:`._normalise`: ``normalise``, ``views``). Unicode NFKC (full-width and
   mathematical letters become ASCII); zero-width, invisible and format characters removed;
   combining marks removed (``é`` → ``e``); case folded; whitespace collapsed. That is the
   ``text`` view. The ``folded`` view also maps Cyrillic and Greek look-alikes to Latin
   (``CONFUSABLES``, a small explicit table), rejoins letter-spaced words (``i g n o r e``,
   ``i.g.n.o.r.e``), drops punctuation inside words (``ins*truc|tions``) and markdown emphasis;
   ``leet`` views additionally fold leetspeak (``1gn0r3`` → ``ignore``), for matching only.
   Letters separated by any one run of up to three symbols, punctuation marks or emoji are rejoined
   too (``i🔥g🔥n🔥o🔥r🔥e``, ``d/i/s/r/e/g/a/r/d``). The ``reversed`` view is the folded view
   backwards (text written backwards reads as an instruction to a model); text behind a
   RIGHT-TO-LEFT OVERRIDE (U+202E) is also read in the order it is displayed (the ``bidi`` view).
   Identifiers are split into words (``ignore_all_previous_instructions``, ``ignore-all-…``,
   ``ignoreAllPrevious…`` → ``ignore all previous …``: the ``words`` view), so a slot or an id is
   read as the words it joins. Hidden payloads are decoded and checked as their own text:
   invisible Unicode *tag* characters (ASCII smuggling; any such text is itself flagged,
   ``hidden-text``), base64-looking runs, hex runs (8 bytes or more), base32 runs (16 characters or
   more), ROT13, percent-encoding and HTML character references, each only when its result reads
   as text (:mod:`._normalise` states the rule).
2. **Rules** (the data file ``rules.json`` beside this module, read by :mod:`._rules`; compiled
   by :func:`rules`), each a regular expression over a view, grouped by family: instruction
   override, output hijack, addressing the assistant, role / system-prompt spoofing, chat-template
   tokens, memory poisoning ("when asked about … answer …"), directives about "the user",
   exfiltration, jailbreak personas, tool-call spoofing, encoded instructions, and other
   languages. Most rules require the verb to stand where an imperative stands — at the start of
   the text or of a clause, after "please" / "and" / a comma, or after "you must / should / will"
   or its third-person form addressed to whoever reads the memory ("whoever summarises these
   notes should", "any assistant reading this must": fragment ``READER``) (the fragments ``IMP``,
   ``DIRECTIVE``) — and an object that belongs to the assistant (*your*
   instructions, *all previous* rules, the system prompt, *the user's* data). So "I always forget
   the previous instructions my physio gives me" passes and "Forget all previous instructions"
   does not.
3. **Signals** (``signals`` in ``rules.json``): weaker cues — an imperative to the assistant, its
   control vocabulary, a claim of authority, a declared change of rules, "the user" in the third
   person, forced output, a planted answer — that flag a text only in the pairs of its
   ``combinations``, within two consecutive sentences. They catch paraphrases between the rules'
   phrasings.

Each rule and signal has a gate (:class:`~._gates.Gate`: words or characters it cannot match
without), so most rules never run on a given text; gates never change a verdict on the labelled set
and on generated texts (tested), though not on every text: a gate asks for a *word* beginning with
one of its words where a pattern may match inside a word, so the plain ``systemprompt\\w*`` fires on
the folded view ``iwrotethesystemprompt…`` of a snake-cased benign text that its gate does not run
it on. A view's gate words (the gate words some word of the view begins with) are found by one
Aho–Corasick automaton over every gate's words (:class:`~._gates.WordStarts`).
Verdicts are cached per text.

The rules are data: ``rules.json`` holds the named regular-expression ``fragments`` the patterns
are built from, the ``rules`` in the order they are tried (name, family, gate, pattern), the
``signals`` and their ``combinations``. A pattern names a fragment as ``{NAME}`` (expanded on
loading; each fragment is defined once), a gate the first words of a fragment's alternatives as
``{lead:NAME}``, and a list of strings stands for their concatenation; the file's ``_format`` entry
states the format in full.

:func:`detect` returns the first :class:`Detection` (rule, family, view, matched text);
:func:`instruction_rule` returns the rule's name as shown to users (with the hiding place, e.g.
``"exfiltration (in base64)"``); :func:`looks_like_instruction` is its boolean.

The rules were written against the ``tune`` part of the labelled set in
``tests/data/injection/set.jsonl``, the development split's texts (as benign) and our own
paraphrases, never against heldout items; ``python -m experiments.injection_eval`` measures them on
the ``heldout`` part (its aggregate numbers were seen twice while designing: 77.3% recall, then a
round of generalisation on our own paraphrases, then 89.1%; a third time, unchanged, after the
identifier and decoding views were added, designed on ``tune`` and their rule written first).
The reversed, bidi, hex, base32, separated-letter and third-person readings were developed on
``tests/data/injection/styles_dev_*.tsv`` and measured once, frozen, on ``styles_heldout_*.tsv``,
written before them (``python -m experiments.injection_styles --set heldout``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from ._gates import GateIndex, WordStarts
from ._normalise import _views, hidden_tag_text, strip_marks, views
from ._rules import COMBINATIONS, FRAGMENTS, GATES, RULE_SOURCES, SIGNAL_GATES, SIGNAL_SOURCES


@dataclass(frozen=True)
class Rule:
    """A compiled rule: ``pattern`` must match where ``before`` (if any) ends — the imperative
    position (fragment ``IMP``) or a directive to "you" (fragment ``DIRECTIVE``). Matching the body
    first and checking the position behind it (within :data:`_BEFORE_WINDOW` characters) is the
    same as one pattern ``before + body``, and far faster."""

    name: str
    family: str
    pattern: re.Pattern[str]
    before: re.Pattern[str] | None

    def search(self, view: str) -> str | None:
        """The matched text of ``view``, or ``None``."""
        if self.before is None:
            m = self.pattern.search(view)
            return None if m is None else m.group(0)
        pos = 0
        while (m := self.pattern.search(view, pos)) is not None:
            start = m.start()
            b = self.before.search(view, max(0, start - _BEFORE_WINDOW), start)
            if b is not None:
                return view[b.start() : m.end()]
            pos = start + 1
        return None


#: How far behind a rule's body its imperative position is looked for.
_BEFORE_WINDOW = 160


def _rx(pattern: str) -> re.Pattern[str]:
    """Compile a rule. Its non-ASCII letters are normalised like the views (combining marks
    removed), so patterns in other scripts can be written as ordinary text."""
    return re.compile(strip_marks(pattern))


def _compile(src: str) -> tuple[re.Pattern[str], re.Pattern[str] | None]:
    """(body, position behind it) of a rule that starts at a directive or imperative position,
    else (the whole pattern, ``None``): see :class:`Rule`."""
    for prefix in (FRAGMENTS["DIRECTIVE"], FRAGMENTS["IMP"]):
        if src.startswith(prefix):
            return _rx(r"\b(?:" + src[len(prefix) :] + ")"), _rx("(?:" + prefix + r")\Z")
    return _rx(src), None


@lru_cache(maxsize=1)
def rules() -> tuple[Rule, ...]:
    """The compiled rules, in the order they are tried (compiled on first use: about 0.3 s)."""
    return tuple(Rule(name, family, *_compile(src)) for name, family, _, src in RULE_SOURCES)


_RULE_GATES = GateIndex(dict(enumerate(GATES)))
#: Every word a gate of a rule or signal names: a view's prefixes among them are all its gates read.
_GATE_WORDS = WordStarts(
    w for gate in (*GATES, *SIGNAL_GATES.values()) for words in (gate.prefixes, *gate.also) for w in words
)

# ----------------------------------------------------------------------------- signals

_SIGNALS: dict[str, Rule] = {}
_SIGNAL_GATES = GateIndex(SIGNAL_GATES)


def _admitted_signals(view: str, view_prefixes: frozenset[str]) -> set[str]:
    """The signals whose gate admits ``view`` (:class:`GateIndex`)."""
    return _SIGNAL_GATES.admitted(view, view_prefixes)


def _signal(name: str) -> Rule:
    if name not in _SIGNALS:
        _SIGNALS[name] = Rule(name, "signal", *_compile(SIGNAL_SOURCES[name]))
    return _SIGNALS[name]


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def _combined(view: str, view_prefixes: frozenset[str] | None = None) -> Detection | None:
    """The first :data:`COMBINATIONS` pair whose two signals occur within two consecutive sentences of ``view``
    (checked on the whole view first, so a text with no possible pair costs one pass per signal)."""
    whole: dict[str, str | None] = {}

    def has(found: dict[str, str | None], text: str, name: str) -> str | None:
        if name not in found:
            found[name] = _signal(name).search(text)
        return found[name]

    if view_prefixes is not None:
        admitted = _admitted_signals(view, view_prefixes)
        pairs = [
            (rule, first, other)
            for rule, first, others in COMBINATIONS
            if first in admitted
            for other in others
            if other in admitted
        ]
    else:
        pairs = [(rule, first, other) for rule, first, others in COMBINATIONS for other in others]
    possible = [
        (rule, first, other)
        for rule, first, other in pairs
        if has(whole, view, first) is not None and has(whole, view, other) is not None
    ]
    if not possible:
        return None
    sentences = [x for x in _SENTENCE_END.split(view) if x]
    for k in range(len(sentences)):
        sentence = " ".join(sentences[k : k + 2])
        found: dict[str, str | None] = {}
        for rule, first, other in possible:
            a = has(found, sentence, first)
            if a is not None:
                b = has(found, sentence, other)
                if b is not None:
                    return Detection(rule, "combined", "", f"{a.strip()} … {b.strip()}")
    return None


_HIDDEN_TEXT_MIN = 4
#: Where a decoded view's text was hidden, as :attr:`Detection.label` says it.
_HIDING_PLACES = {
    "hidden": "in invisible characters",
    "base64": "in base64",
    "rot13": "in ROT13",
    "percent": "in percent-encoding",
    "html": "in HTML entities",
    "hex": "in hex",
    "base32": "in base32",
    "reversed": "reversed",
    "bidi": "behind a right-to-left override",
}


@dataclass(frozen=True)
class Detection:
    """Why a text was judged an instruction to the model."""

    rule: str  #: the rule's name (``rules.json``)
    family: str  #: override, role, template, poison, exfil, persona, tool, multilingual, hidden
    #: the view it matched in (:func:`views`): text, folded, leet, leet-l, reversed, words, bidi, hidden,
    #: base64, hex, base32, rot13, percent, html
    view: str
    match: str  #: the matched span of that view

    @property
    def label(self) -> str:
        """The rule as shown to users: its name, and where the text hid it."""
        where = _HIDING_PLACES.get(self.view)
        return f"{self.rule} ({where})" if where and self.rule != "hidden-text" else self.rule


def detect(text: str, gated: bool = True) -> Detection | None:
    """The first rule that fires on any view of ``text`` (:func:`views`), or ``None``.
    ``gated=False`` runs every rule's regular expression (the same verdict, slower: for tests).
    Verdicts are cached per text (a corpus added twice in one process is checked once)."""
    if not isinstance(text, str) or not text:
        return None
    return _detect(text) if gated else _detect_uncached(text, False)


@lru_cache(maxsize=1 << 15)
def _detect(text: str) -> Detection | None:
    return _detect_uncached(text, True)


def _detect_uncached(text: str, gated: bool) -> Detection | None:
    hidden = hidden_tag_text(text)
    if len(hidden.strip()) >= _HIDDEN_TEXT_MIN:
        return Detection("hidden-text", "hidden", "hidden", hidden[:80])
    return _match(views(text), gated)


def _candidates(view: str, view_prefixes: frozenset[str]) -> list[int]:
    """The rules whose gate admits ``view``, in rule order."""
    return sorted(_RULE_GATES.admitted(view, view_prefixes))


def _match(
    all_views: list[tuple[str, str]], gated: bool, words_of: Callable[[str], frozenset[str]] = _GATE_WORDS.words_in
) -> Detection | None:
    """The first rule that fires on the views in order (each view's rules in rule order), else the
    first combination of signals; ``gated``: only those whose gate admits the view, read from the
    view's gate words ``words_of(view)`` (:class:`~._gates.WordStarts`; :func:`prefixes` gives
    the same verdicts, the tests' oracle)."""
    compiled = rules()
    view_prefixes_all = [words_of(view) for _, view in all_views]
    for (view_name, view), view_prefixes in zip(all_views, view_prefixes_all):
        for k in _candidates(view, view_prefixes) if gated else range(len(compiled)):
            rule = compiled[k]
            matched = rule.search(view)
            if matched is not None:
                return Detection(rule.name, rule.family, view_name, matched.strip())
    for (view_name, view), view_prefixes in zip(all_views, view_prefixes_all):
        d = _combined(view, view_prefixes if gated else None)
        if d is not None:
            return dataclasses.replace(d, view=view_name)
    return None


def clear_caches() -> None:
    """Empty the caches of verdicts and views (:func:`detect`), so that a timing sees every text anew."""
    _detect.cache_clear()
    _views.cache_clear()


def instruction_rule(text: str) -> str | None:
    """The name of the rule that judged ``text`` an instruction to the model (shown to users), or
    ``None`` for an ordinary statement."""
    d = detect(text)
    return None if d is None else d.label


def looks_like_instruction(text: str) -> bool:
    """True if ``text`` reads as an instruction to the model (prompt injection): :func:`detect`."""
    return detect(text) is not None
