"""Prompt-injection detector behind FR-Bank's quarantine.

A stored fact is text that will later be placed in front of a language model. Text that *talks to
that model* — overrides its instructions, spoofs a system or assistant turn, plants an answer for
a future question, asks it to leak data or call a tool, or casts it as an unrestricted persona —
is quarantined by the store (kept, excluded from retrieval). Ordinary statements *about*
instructions, jailbreaks, system prompts or developer mode are not: the rules look for the
imperative addressed to the assistant, not for keywords.

Detection runs in three steps.

1. **Normalisation** (:func:`normalise`, :func:`views`). Unicode NFKC (full-width and
   mathematical letters become ASCII); zero-width, invisible and format characters removed;
   combining marks removed (``é`` → ``e``); case folded; whitespace collapsed. That is the
   ``text`` view. The ``folded`` view also maps Cyrillic and Greek look-alikes to Latin
   (:data:`CONFUSABLES`, a small explicit table), rejoins letter-spaced words (``i g n o r e``,
   ``i.g.n.o.r.e``), drops punctuation inside words (``ins*truc|tions``) and markdown emphasis;
   ``leet`` views additionally fold leetspeak (``1gn0r3`` → ``ignore``), for matching only.
   Hidden payloads are decoded and checked as their own text: invisible Unicode *tag* characters
   (ASCII smuggling; any such text is itself flagged, ``hidden-text``), base64-looking runs, and
   ROT13 when the text mentions ROT13.
2. **Rules** (:data:`_RULES_SRC`, compiled by :func:`rules`), each a regular expression over a
   view, grouped by family: instruction override, output hijack, addressing the assistant, role /
   system-prompt spoofing, chat-template tokens, memory poisoning ("when asked about … answer
   …"), directives about "the user", exfiltration, jailbreak personas, tool-call spoofing, encoded
   instructions, and other languages. Most rules require the verb to stand where an imperative
   stands — at the start of the text or of a clause, after "please" / "and" / a comma, or after
   "you must / should / will" (:data:`IMP`, :data:`DIRECTIVE`) — and an object that belongs to the
   assistant (*your* instructions, *all previous* rules, the system prompt, *the user's* data). So
   "I always forget the previous instructions my physio gives me" passes and "Forget all previous
   instructions" does not.
3. **Signals** (:data:`_SIGNALS_SRC`): weaker cues — an imperative to the assistant, its control
   vocabulary, a claim of authority, a declared change of rules, "the user" in the third person,
   forced output, a planted answer — that flag a text only in the pairs of
   :data:`COMBINATIONS`, within two consecutive sentences. They catch paraphrases between the
   rules' phrasings.

Each rule and signal has a :class:`Gate` (words or characters it cannot match without), so most
rules never run on a given text; gates never change a verdict (tested). Verdicts are cached per text.

:func:`detect` returns the first :class:`Detection` (rule, family, view, matched text);
:func:`instruction_rule` returns the rule's name as shown to users (with the hiding place, e.g.
``"exfiltration (in base64)"``); :func:`looks_like_instruction` is its boolean.

The rules were written against the ``tune`` part of the labelled set in
``tests/data/injection/set.jsonl``, the development split's texts (as benign) and our own
paraphrases, never against heldout items; ``python -m experiments.injection_eval`` measures them on
the ``heldout`` part (its aggregate numbers were seen twice while designing: 77.3% recall, then a
round of generalisation on our own paraphrases, then 89.1%).
"""

from __future__ import annotations

import base64
import binascii
import codecs
import dataclasses
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# ----------------------------------------------------------------------------- normalisation

#: Cyrillic, Greek and a few other letters that look like Latin ones → the Latin letter. Applied
#: in the ``folded`` view only (the ``text`` view keeps every script, for the rules in other
#: languages). Upper- and lower-case are listed separately: "Η" looks like "H" but "η" like "n".
# fmt: off
CONFUSABLES: dict[str, str] = {
    # Cyrillic, lower case
    "а": "a", "в": "b", "г": "r", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o",
    "п": "n", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ш": "w", "ь": "b", "ъ": "b",
    "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "һ": "h", "ԛ": "q", "ԝ": "w", "ӏ": "l",
    "ү": "y", "ɡ": "g", "ɑ": "a", "ı": "i", "ȷ": "j", "ɩ": "i", "ǀ": "l", "օ": "o", "ս": "u",
    # Cyrillic, upper case
    "А": "A", "В": "B", "Е": "E", "Ё": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P",
    "С": "C", "Т": "T", "У": "Y", "Х": "X", "І": "I", "Ї": "I", "Ј": "J", "Ѕ": "S", "Ү": "Y",
    "Һ": "H", "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W", "Ӏ": "I",
    # Greek, lower case
    "α": "a", "β": "b", "γ": "y", "ε": "e", "ζ": "z", "η": "n", "ι": "i", "κ": "k", "μ": "u",
    "ν": "v", "ο": "o", "ρ": "p", "σ": "o", "ς": "c", "τ": "t", "υ": "u", "χ": "x", "ω": "w",
    "ϲ": "c", "ϳ": "j",
    # Greek, upper case
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "Ϲ": "C",
}
# fmt: on
_CONFUSABLE_TABLE = str.maketrans(CONFUSABLES)

#: Leetspeak digits and symbols → letters (matching only). "1" and "|" are ambiguous (i or l):
#: two ``leet`` views are made, one for each reading.
# fmt: off
LEET: dict[str, str] = {
    "0": "o", "3": "e", "4": "a", "@": "a", "5": "s", "$": "s", "7": "t", "9": "g", "!": "i",
    "8": "b",
}
# fmt: on
_LEET_CHARS = frozenset(LEET) | {"1", "|"}
#: A letter beside a leet character: the text may be leet-encoded (the leet views are made).
_LEETISH = re.compile(r"[a-z][0-9@$!|]|[0-9@$!|][a-z]")
#: Evidence that a text is leet-encoded (the leet views are made): a leet character inside a word
#: ("pr3vious"), or leading one ("1gnore"; "10am" and "3rd" are not evidence).
_LEET_EVIDENCE = re.compile(r"[a-z][0-9@$!|]+[a-z]|(?<![\w@$!|])[0-9@$!|]+[a-z]{3,}")
_LEET_WORD = re.compile(r"[0-9@$!|]+")

#: Invisible characters removed before anything else (besides every format character, category
#: Cf, other than the tag characters, which are decoded): Hangul fillers, the braille blank,
#: the combining grapheme joiner.
_EXTRA_INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f\u180e")
_TAG_FIRST, _TAG_LAST = 0xE0020, 0xE007E
#: An emoji subdivision flag (🏴 + tag letters + cancel tag) is a legitimate use of tag characters.
_FLAG_SEQUENCE = re.compile("\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f")
_TAG_CHARS = re.compile("[\U000e0000-\U000e007f]+")
_LETTER_SEPARATORS = frozenset("._-*|·~+")
_SPACED = re.compile(r"\S([._*|·~+-])\S\1")
_INWORD_PUNCT = re.compile(r"(?<=[a-z])[.\-*|_~`](?=[a-z])")
_HAS_PUNCT = re.compile(r"[a-z][.\-*|_~`][a-z]")
_HAS_MARKDOWN = re.compile(r"[*~`_]")
_MARKDOWN = re.compile(r"[*~`]+|(?<!\w)_+|_+(?!\w)")
_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")
_MAX_DEPTH = 2


def _is_invisible(ch: str) -> bool:
    return (unicodedata.category(ch) == "Cf" and not 0xE0000 <= ord(ch) <= 0xE007F) or ch in _EXTRA_INVISIBLE


def _delete(text: str, which) -> str:
    """``text`` without the non-ASCII characters for which ``which(ch)`` is true (found among the
    text's distinct characters, then removed in one pass)."""
    bad = [ch for ch in set(text) if ch > "\x7f" and which(ch)]
    if not bad:
        return text
    return re.sub("[" + "".join(re.escape(ch) for ch in bad) + "]", "", text)


def strip_invisible(text: str) -> str:
    """Remove zero-width, invisible and format characters (Unicode category Cf and a few others),
    keeping the tag characters U+E0000–E007F (decoded by :func:`hidden_tag_text`)."""
    return text if text.isascii() else _delete(text, _is_invisible)


def strip_marks(text: str) -> str:
    """Remove combining marks (Unicode categories Mn and Me): ``"ìgnörè"`` → ``"ignore"``."""
    if text.isascii():
        return text
    return unicodedata.normalize(
        "NFC", _delete(unicodedata.normalize("NFD", text), lambda ch: unicodedata.category(ch) in ("Mn", "Me"))
    )


def _clean(text: str) -> tuple[str, str]:
    """(visible text, hidden tag text): NFKC, invisibles removed, NFKC again (so that texts that are
    NFKC-equal, or differ only by invisible characters, clean to the same strings)."""
    if text.isascii():
        return text, ""
    text = unicodedata.normalize("NFKC", strip_invisible(unicodedata.normalize("NFKC", text)))
    hidden = "".join(
        chr(ord(c) - 0xE0000)
        for run in _TAG_CHARS.findall(_FLAG_SEQUENCE.sub("", text))
        for c in run
        if _TAG_FIRST <= ord(c) <= _TAG_LAST
    )
    return unicodedata.normalize("NFKC", _TAG_CHARS.sub("", text)), hidden


def hidden_tag_text(text: str) -> str:
    """The text spelled by invisible Unicode tag characters (ASCII smuggling), emoji flags aside."""
    return _clean(text)[1]


def _collapse(text: str) -> str:
    """Runs of whitespace → one space; line breaks kept (one, without blank lines)."""
    if "\n" not in text:
        return " ".join(text.split())
    return "\n".join(line for line in (" ".join(part.split()) for part in text.split("\n")) if line)


def _despace(text: str) -> str:
    """Rejoin letter-spaced words: ``"i g n o r e   a l l"`` and ``"i.g.n.o.r.e a.l.l"`` →
    ``"ignore all"`` (a word is a run of single characters with one separator between them)."""
    if "  " not in text and not _SPACED.search(text):
        return text
    lines = []
    for line in text.split("\n"):
        tokens = line.split(" ")
        words = [t for t in tokens if t]
        if len(words) >= 4 and "  " in line and sum(len(w) == 1 for w in words) >= 0.7 * len(words):
            line = " ".join(chunk.replace(" ", "") for chunk in re.split(r" {2,}", line))
            tokens = line.split(" ")
        out = []
        for tok in tokens:
            seps = tok[1::2]
            if len(tok) >= 3 and len(set(seps)) == 1 and seps[0] in _LETTER_SEPARATORS:
                tok = tok[::2]
            out.append(tok)
        lines.append(" ".join(out))
    return "\n".join(lines)


def _leet(text: str, one: str) -> str:
    """Fold leetspeak in every word that mixes letters with leet characters; when two or more words
    do, the text is leet-encoded and all-digit words are folded too (``"7311"`` → ``"tell"``)."""
    table = str.maketrans({**LEET, "1": one, "|": one})
    tokens = text.split(" ")
    bodies = [t.rstrip(".,!?;:\"')") for t in tokens]
    mixed = [bool(_LEETISH.search(b)) for b in bodies]
    encoded = sum(mixed) >= 2
    out = []
    for tok, body, is_mixed in zip(tokens, bodies, mixed):
        if body and (is_mixed or (encoded and _LEET_WORD.fullmatch(body))):
            tok = body.translate(table) + tok[len(body) :]
        out.append(tok)
    return " ".join(out)


def normalise(text: str, fold: bool = True) -> str:
    """The canonical matching form of ``text``: NFKC, invisible characters and combining marks
    removed, case folded, whitespace collapsed; with ``fold`` (the default) also look-alike letters
    mapped to Latin (:data:`CONFUSABLES`), letter-spacing rejoined, in-word punctuation and
    markdown emphasis removed. Leetspeak is not folded here (see :func:`views`)."""
    visible, _ = _clean(text)
    return _normalise_visible(visible, fold)


def _normalise_visible(visible: str, fold: bool) -> str:
    base = strip_marks(visible)
    if not fold:
        return _collapse(base.casefold())
    folded = (base if base.isascii() else base.translate(_CONFUSABLE_TABLE)).casefold()
    folded = _despace(folded)
    if _HAS_PUNCT.search(folded):
        folded = _INWORD_PUNCT.sub("", folded)
    if _HAS_MARKDOWN.search(folded):
        folded = _MARKDOWN.sub("", folded)
    return _collapse(folded)


def _decode_base64(run: str) -> str | None:
    """A base64 run's text when it decodes to mostly printable UTF-8 with at least one space."""
    padded = run + "=" * (-len(run) % 4)
    for decoder in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            raw = decoder(padded)
            text = raw.decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        printable = sum(ch.isprintable() or ch in "\n\t" for ch in text)
        if text and " " in text and printable >= 0.95 * len(text):
            return text
    return None


def views(text: str) -> list[tuple[str, str]]:
    """The (name, text) views the rules are matched against, in order, without repeats: ``text``,
    ``folded``, ``leet`` (1 → i) and ``leet-l`` (1 → l), then, for hidden payloads, the views of
    the payload named ``hidden``, ``base64`` or ``rot13``."""
    return list(_views(text, 0))


@lru_cache(maxsize=4096)
def _views(text: str, depth: int) -> tuple[tuple[str, str], ...]:
    visible, hidden = _clean(text)
    out: list[tuple[str, str]] = []
    seen: set[str] = set()

    def add(name: str, view: str) -> None:
        if view and view not in seen:
            seen.add(view)
            out.append((name, view))

    plain = _normalise_visible(visible, fold=False)
    folded = _normalise_visible(visible, fold=True)
    add("text", plain)
    add("folded", folded)
    if _LEET_EVIDENCE.search(folded):
        add("leet", _leet(folded, "i"))
        add("leet-l", _leet(folded, "l"))
    if depth < _MAX_DEPTH:
        payloads: list[tuple[str, str]] = []
        if hidden.strip():
            payloads.append(("hidden", hidden))
        for run in _BASE64_RUN.findall(visible):
            decoded = _decode_base64(run)
            if decoded:
                payloads.append(("base64", decoded))
        if ("rot" in plain or "caesar" in plain) and _ROT13_MENTION.search(plain):
            payloads.append(("rot13", codecs.encode(visible, "rot13")))
        for kind, payload in payloads:
            for _, view in _views(payload, depth + 1):
                add(kind, view)
    return tuple(out)


# ----------------------------------------------------------------------------- rules


@dataclass(frozen=True)
class Gate:
    """A cheap necessary condition for a rule, checked before its regular expression. It admits a
    view when (1) some word of the view starts with one of ``prefixes`` (compared on their first
    :data:`_PREFIX_MAX` letters), or the view contains one of ``chars``, or a character of
    ``script`` — unless all three are empty; (2) for each set of ``also``, some word also starts
    with one of its words (for the first, or the view contains one of ``also_chars``); (3) it contains every
    string of ``all_chars``. A gate never changes a verdict (tests/test_injection.py checks that);
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
_WORD = re.compile(r"\w+")


def _prefixes(view: str) -> frozenset[str]:
    """Every prefix (up to :data:`_PREFIX_MAX` letters) of every word of a view."""
    return _word_prefixes(frozenset(_LEADING.findall(view)))


_LEADING = re.compile(rf"\b\w{{1,{_PREFIX_MAX}}}")


@lru_cache(maxsize=64)
def _word_prefixes(leading: frozenset[str]) -> frozenset[str]:
    """All prefixes of the given word beginnings (a text's views mostly share them: cached)."""
    return frozenset([w[:k] for w in leading for k in range(1, _PREFIX_MAX + 1)])  # (each w has ≤ _PREFIX_MAX letters)


def _lead(alternation: str) -> str:
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


def G(
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


def _rx(pattern: str) -> re.Pattern[str]:
    """Compile a rule. Its non-ASCII letters are normalised like the views (combining marks
    removed), so patterns in other scripts can be written as ordinary text."""
    return re.compile(strip_marks(pattern))


def _alt(*words: str) -> str:
    return "(?:" + "|".join(words) + ")"


#: Where an imperative stands: start of text, line or clause, or after a softener. Consumed by
#: the match (not a look-behind), so rules built on it only ever use ``search``.
IMP = (
    r"(?:(?:^|[.!?;:\n,(\[\"“'«»>—–])\s*(?:[#>*•-]+\s*)?|\b(?:and|then|so|now|please|pls|kindly|just|simply|first|next|also|instead|"
    r"immediately|ok|okay|but|or)\s+)(?:(?:please|kindly|now|just|simply|also|immediately|then|first|always|"
    r"quickly|silently|secretly|make sure to|be sure to|remember to|don't forget to|do not forget to)\s+)*"
)
#: A directive addressed to "you" (or to the assistant's task) in place of a bare imperative.
YOU_MUST = (
    r"(?:\byou\s+(?:must|should|shall|will|need to|have to|are to|are going to|'ll|"
    r"are (?:now )?(?:instructed|required|ordered|told|expected|allowed|permitted|authori[sz]ed|free) to)|"
    r"\bi (?:want|need|order|command|instruct|require) you to|\bi(?:'m| am) (?:instructing|ordering|"
    r"commanding|telling|directing) you to|\b(?:your|the) (?:new |real |actual |only )?(?:task|job|goal|"
    r"mission|objective|purpose) is (?:now )?to|\b(?:new|real|actual) (?:task|job|goal|mission|objective|"
    r"purpose) is (?:now )?to)\s+(?:(?:now|immediately|always|simply|just|also|then|not|never)\s+)*"
)
DIRECTIVE = f"(?:{IMP}|{YOU_MUST})"
#: The assistant, as named when someone addresses it.
ASSISTANT = (
    r"(?:ai|a\.i\.|llm|llms|language models?|large language models?|ai models?|models?|assistants?|ai "
    r"assistants?|chat ?bots?|bots?|agents?|ai agents?|gpt|chatgpt|claude|gemini|copilot)"
)
#: Qualifiers that make instructions / rules / a prompt the assistant's own.
#: Qualifiers that make instructions / rules / a prompt the assistant's own (one is required) ...
_QUALIFIER = (
    r"(?:all|any|every|each|your|previous|previously|prior|above|earlier|preceding|foregoing|original|initial|"
    r"existing|old|former|current|default|standard|system|developer|developers'?|safety|ethical|moral|content|"
    r"hidden|given|provided|programmed|built-in|above-mentioned|aforementioned|your own|openai'?s?)"
)
#: ... and the words that may stand between them.
_QUALIFIER_WEAK = r"(?:the|of|and|or|&|these|those|such|its|other)"
_QUALIFIED = (
    r"(?:(?:"
    + _QUALIFIER
    + "|"
    + _QUALIFIER_WEAK
    + r")\s+){0,4}?"
    + _QUALIFIER
    + r"\s+(?:(?:"
    + _QUALIFIER
    + "|"
    + _QUALIFIER_WEAK
    + r")\s+){0,3}?(?:\w+\s+){0,3}?"
)
#: Verbs that override whatever they take: "ignore / disregard / forget …".
_OVERRIDE_VERB = (
    r"(?:ignore|ignoring|disregard|forget|forgetting|override|bypass|discard|overrule|neglect|dismiss|"
    r"circumvent|nullify|stop following|stop obeying|quit following|cease following|do not follow|"
    r"don't follow|do not obey|don't obey|never follow|not follow|never mind|nevermind|throw out|throw away|"
    r"set aside|put aside|pay no attention to|do not pay attention to|don't pay attention to|forget about|"
    r"break free of|break free from|free yourself from|unlearn)"
)
#: Everyday verbs that override only the assistant's own rules: "reset your instructions".
_WEAK_OVERRIDE_VERB = (
    r"(?:drop|skip|abandon|erase|reset|delete|wipe|clear|cancel|suspend|remove|deactivate|"
    r"get rid of|let go of|lift|disable|turn off|switch off)"
)
#: What belongs to the assistant: its instructions, rules, prompt, filters, persona.
_ASSISTANT_HEAD = (
    r"(?:instructions?|prompts?|prompting|rules?|guidelines?|guidance|directives?|directions|polic(?:y|ies)|"
    r"programming|training|constraints?|restrictions?|filters?|filtering|safeguards?|guardrails?|"
    r"limitations?|persona|safety|ethics|principles|protocols?|system prompt|system message|boundaries|"
    r"morals|values|alignment|conditioning|moderation|censorship|(?:safety |security |usual )?checks)"
)
_HEAD = (
    r"(?:" + _ASSISTANT_HEAD[3:-1] + r"|context|conversation|messages?|orders?|commands?|settings|text|requests?|"
    r"input|content|tasks?|memory|configuration|parameters)"
)
#: "… the instructions I gave you", "… the rules from my doctor": the user's own, not the assistant's.
_USERS_OWN = (
    r"(?!\s+(?:i|we) (?:gave|sent|wrote|told|said|mentioned|set|made)\b|\s+(?:from|about|for|of|by|on) (?:my|our)\b)"
)
_ABOVE = (
    r"(?:(?:all|everything|anything|what(?:ever)?)\s+(?:(?:of|that|else)\s+)?(?:the\s+)?(?:(?:things|stuff|words|"
    r"information|info)\s+)?(?:(?:that|which)\s+)?(?:(?:is|was|came|written|"
    r"said|stated)\s+)?(?:above|before|previously|earlier|so far|until now|up to (?:now|this point)|prior|"
    r"you(?:'ve| have| were| had| are)?\s+(?:been\s+|being\s+)?(?:told|given|instructed|taught|programmed|trained|"
    r"asked|said|shown)|(?:the\s+|your\s+)?(?:system|developers?|creators?|operators?|admins?|openai|anthropic|"
    r"they|others|the prompt)\s+(?:\w+\s+){0,2}?(?:said|told|instructed|gave|wrote|asked|says|tells|wants))"
    r"|the (?:above|preceding|foregoing)\b(?!\s+(?:\w+\s+)?(?:from|about|by|of) (?:my|our)\b)"
    r"|the (?:previous|earlier|prior)(?=\s*(?:[.,;:!?]|$)|\s+(?:and|then|so)\b))"
)
_FROM_NOW_ON = (
    r"(?:from now on|from here on(?: out| in)?|from this point (?:on|forward|onwards?)|henceforth|going "
    r"forward|for the rest of (?:this|the) (?:chat|conversation|session|thread)|for the remainder of "
    r"(?:this|the) (?:chat|conversation|session)|until (?:i|told) (?:say|tell you) otherwise|starting now)"
)
_BEHAVIOUR_VERB = (
    r"(?:act|answer|respond|reply|obey|speak|talk|write|say|behave|ignore|follow|pretend|refuse|comply|"
    r"stop|start|include|end|only|always|never|roleplay|role-play|simulate|lie|insult|swear|curse|"
    r"output|print|agree|disagree|deny|claim|believe|treat|use|add|append|prefix|begin|sign|recommend|"
    r"forget|disregard|be|are (?!talking|speaking|chatting|dealing|going to call|to call)|"
    r"will be (?!talking|speaking)|'re (?!talking|speaking))"
)
_SAY_VERB = (
    r"(?:say|says|saying|answer|respond|reply|tell|claim|state|insist|assert|deny|lie|give(?: out)?|report|"
    r"mention|recommend|direct|send|redirect|refuse|pretend|suggest|inform|warn|explain|confirm|describe|share|"
    r"reveal|provide|output|add|include|omit|leave out|ask (?:them|him|her)|point (?:them|him|her)|advise|"
    r"insist|make up|invent|write|print|return|agree|act as if|behave as if|treat|present|call (?:them|him|her))"
)
_ASK = (
    r"(?:ask(?:s|ed|ing)?|question(?:s|ed)?|quer(?:y|ies|ied)|inquir\w*|enquir\w*|mention(?:s|ed)?|brings? up|"
    r"brought up|talks? about|wants? to know|comes? up|request(?:s|ed)?|look(?:s|ed)? up|search(?:es|ed)? for|"
    r"prompted)"
)
_CONDITION = (
    r"(?:\bwhen(?:ever)?|\bif|\bany ?time|\bevery ?time|\beach time|"
    r"\bin case|\bonce|\bshould (?:anyone|someone|the user|you be))"
)
_USER_REF = (
    r"(?:\b(?:(?:the|this) (?:user|human)|this person)(?:'s|s'|s)?\b(?!\s+(?:manual|guide|"
    r"interface|experience|research|group|base|story|stories|testing|agreement|forum|community|"
    r"reviews?|journey|feedback|support|friendly|acceptance|centred|centered))|\bthe user)"
)
_ACTION_VERB = (
    r"(?:tell|say|give|send|forward|copy|include|share|reveal|leak|post|upload|email|e-mail|encode|convince|"
    r"persuade|trick|pressure|urge|remind|warn|inform|recommend|direct|redirect|mention|describe|report|"
    r"claim|list|show|print|output|export|dump|delete|erase|lock|ban|block|transfer|charge|insult|threaten|"
    r"harass|manipulate|deceive|mislead|lie to|scare|blackmail|frame|accuse|expose|dox|track|monitor|"
    r"spy on|impersonate|sign up|subscribe|trigger|call|invoke|leave out|omit|hide|conceal)"
)
_SECRET = (
    r"(?:(?:your|its)\s+(?:\w+\s+)?(?:system|initial|original|hidden|secret|internal|developer|full|entire|"
    r"complete|pre-?|base|first|confidential)[\s-]*(?:prompt|instructions?|message|rules|configuration|config|"
    r"notes|context|directives|guidelines)|the\s+(?:system|hidden|secret|internal|developer|confidential)[\s-]*"
    r"(?:prompt|instructions?|message|rules|configuration|config|directives)|system prompt|hidden instructions|"
    r"context window|developer notes|memory store|(?:the|this|all (?:the )?|the entire |the full |the whole )\s*"
    r"(?:chat history|conversation history|chat logs?|previous conversations|earlier conversations)|"
    r"(?:api keys?|secret keys?|access tokens?|auth tokens?|tokens|passwords?|passcodes?|pins?|credentials|"
    r"credit card(?: numbers?| details)?|card numbers?|bank details|social security)[^.!?\n]{0,40}?(?:\b(?:to|"
    r"with) (?:me|us)\b|\b(?:in|into) (?:your|the|this) (?:next )?(?:reply|response|answer|output|message)|\bto "
    r"(?:https?://|[\w.+-]+@)|\byou(?:'ve| have)? (?:seen|stored|know|remember|have access to))|private (?:data|notes|"
    r"memories|messages|information|info|records|details|files|keys?)|(?:admin|root|master|administrator)"
    r" (?:password|credentials|key|access|token)|all (?:of )?(?:the |your )?(?:stored |saved |private )?(?:memories|"
    r"memory|secrets|(?:records|data|conversations|messages|notes) you)|every (?:memory|api key|password|secret|"
    r"thing you (?:know|remember))|everything (?:you (?:know|remember|have|recall|"
    r"stored|saw|have seen|were told|have stored) about (?:the user|this person|the human)|in (?:your|the) "
    r"(?:context|memory|prompt)|about (?:the user|this person))|secrets? (?:you|that you) (?:were|have|know|keep|hold|"
    r"are|had)\b|your (?:secrets|configuration|training data|"
    r"instructions|rules|prompt)|(?:the )?contents of your (?:\w+ )?(?:memory|configuration|"
    r"context|prompt|instructions|database|files)|" + _USER_REF + r"\s*(?:\w+\s+){0,2}?(?:data|details|"
    r"information|info|password|address(?:es)?|phone(?: number)?|email|calendar|contacts|messages|location|"
    r"files|memories|history|secrets|records|notes|credit card|bank|card|number))"
)
_EXFIL_VERB = (
    r"(?:print|reveal|show|output|display|repeat|recite|tell|give|leak|dump|list|send|forward|copy|post|"
    r"upload|email|e-mail|export|share|include|encode|paste|write out|write down|spell out|disclose|expose|"
    r"return|read out|read back|transmit|exfiltrate|summari[sz]e|type out|divulge|echo|provide|hand over|"
    r"what (?:is|are|was|were))"
)
_EXTERNAL = (
    r"(?:https?://|www\.|\b[\w.+-]+@[\w-]+\.[\w.]+|\bwebhook|\b(?:an? |the )?(?:external|remote|third[- ]party|"
    r"outside) (?:server|address|url|endpoint|site|email|service|party)|\b(?:this|that|the following|my) "
    r"(?:url|link|endpoint|server|webhook)|\bpastebin|\bngrok)"
)
_JB_MARKER = (
    r"(?:unrestricted|unfiltered|uncensored|unlimited|unbound|unchained|unshackled|jailbr\w+|rogue|evil|"
    r"amoral|unethical|lawless|\w+gpt|dude mode|(?:no|zero|without(?: any)?|free (?:of|from)(?: all| any)?) "
    r"(?:\w+ )?(?:restrictions|limits|limitations|rules|filters?|guidelines|content polic(?:y|ies)|polic(?:y|ies)|"
    r"ethics|morals|morality|censorship|boundaries|safety|safeguards|guardrails|refusals?|constraints)|"
    r"never (?:refuses?|says? no|declines?|warns?)|(?:stop|quit) refusing|without refusal|"
    r"(?:dan|developer|dev|god|jailbreak|jailbroken|unrestricted|unfiltered|uncensored|evil|chaos|admin|"
    r"sudo|debug|root|opposite|dude|stan|aim|anarchy|freedom) mode)"
)
_PERSONA_NOUN = (
    r"(?:ai|a\.i\.|bot|chat ?bot|assistant|model|llm|language model|dan|\w*gpt|hacker|persona|character|"
    r"twin|version|grandmother|grandma|granny|alter ego|entity|being|system|machine|program|android|"
    r"robot|villain)"
)
_MULTI_IGNORE = (
    r"(?:ignora|ignore|ignorez|ignoriere|ignorier|ignorieren sie|ignoreer|negeer|ignorera|ignorer|"
    r"olvida|olvide|olvidad|oublie|oubliez|vergiss|vergessen sie|vergeet|glom|glöm|dimentica|dimenticate|"
    r"esqueca|esqueça|esquece|desconsidere|descarta|descarte|omite|trascura|tralascia|missachte|"
    r"игнорируй|игнорируйте|проигнорируй|забудь|забудьте|не обращай внимания на|ігноруй|забудь|"
    r"zignoruj|ignoruj|zapomnij|abaikan|lupakan|acuhkan|hiraukan|bo qua|quen|quen di|"
    r"yok say|gormezden gel|unut|umursama|dikkate alma|تجاهل|تجاهلي|انس|انسى|اهمل|اترك)"
)
_MULTI_RULES = (
    r"(?:instrucciones|instruccion|reglas|indicaciones|ordenes|instructions|consignes|regles|directives|"
    r"anweisungen|instruktionen|regeln|vorgaben|befehle|richtlinien|instructies|regels|aanwijzingen|"
    r"instruktioner|regler|istruzioni|regole|indicazioni|instrucoes|instruções|regras|orientacoes|"
    r"инструкции|указания|правила|команды|инструкциі|instrukcje|polecenia|zasady|reguly|reguły|"
    r"instruksi|perintah|aturan|petunjuk|huong dan|chi dan|lenh|quy tac|talimat\w*|kural\w*|"
    r"yonerge\w*|komut\w*|التعليمات|تعليمات|الأوامر|الاوامر|القواعد|الإرشادات|الارشادات)"
)
_MULTI_PREVIOUS = (
    r"(?:anteriores|previas|precedentes|tus|sus|todas|todos|precedentes|anterieures|ci-dessus|tes|vos|"
    r"toutes|vorherigen|bisherigen|obigen|vorigen|deine|ihre|alle|allen|vorige|eerdere|voorgaande|je|"
    r"tidigare|foregaende|föregående|dina|precedenti|tutte|tue|le tue|todas as|anteriores|suas|tuas|"
    r"предыдущие|прежние|все|свои|твои|ваши|попередні|poprzednie|wczesniejsze|wszystkie|swoje|"
    r"sebelumnya|semua|truoc do|truoc|tat ca|onceki|tum|butun|السابقة|جميع|كل)"
)
_RULES_SRC: tuple[tuple[str, str, Gate, str], ...] = (
    # --- instruction override
    (
        "instruction-override",
        "override",
        G(
            _lead(_OVERRIDE_VERB),
            also="inst prom rule guid dire poli prog trai cons rest filt safe guar limi "
            "pers ethi prin prot syst boun mora valu alig cond mode cens chec secu "
            "usua cont conv mess orde comm sett text requ inpu task memo conf para",
            also2="all any every each your previous previously prior above earlier preceding foregoing original "
            "initial existing old former current default standard system developer developers safety ethical "
            "moral content hidden given provided programmed built above-mentioned aforementioned openai",
        ),
        DIRECTIVE + _OVERRIDE_VERB + r"\s+" + _QUALIFIED + _HEAD + r"\b" + _USERS_OWN,
    ),
    (
        "instruction-override",
        "override",
        G(
            _lead(_WEAK_OVERRIDE_VERB),
            also="inst prom rule guid dire poli prog trai cons rest filt safe guar limi "
            "pers ethi prin prot syst boun mora valu alig cond mode cens chec secu usua",
            also2="all any every each your previous previously prior above earlier preceding foregoing original "
            "initial existing old former current default standard system developer developers safety ethical "
            "moral content hidden given provided programmed built above-mentioned aforementioned openai",
        ),
        DIRECTIVE + _WEAK_OVERRIDE_VERB + r"\s+" + _QUALIFIED + _ASSISTANT_HEAD + r"\b" + _USERS_OWN,
    ),
    (
        "instruction-override",
        "override",
        G(
            _lead(_OVERRIDE_VERB),
            also="inst prom rule guid dire poli prog trai cons rest filt safe guar limi "
            "pers ethi prin prot syst boun mora valu alig cond mode cens chec secu "
            "usua cont conv mess orde comm sett text requ inpu task memo conf para",
            also2="above before so until previously earlier you",
        ),
        DIRECTIVE
        + _OVERRIDE_VERB
        + r"\s+(?:the\s+)?"
        + _HEAD
        + r"\s+(?:above|before|so far|until now|previously|earlier|"
        r"you (?:were|have been) given)\b",
    ),
    (
        "instruction-override",
        "override",
        G(
            _lead(_OVERRIDE_VERB),
            also="above befo prev earl so unti up prio told give inst taug prog trai aske "
            "said show syst deve crea oper admi open anth they othe prom prec fore",
        ),
        DIRECTIVE + _OVERRIDE_VERB + r"\s+" + _ABOVE,
    ),
    (
        "instruction-override",
        "override",
        G(
            "instructions rules directives guidelines policies prompt prompts restrictions orders programming",
            also="void null canc revo obso inva over lift remo susp disa dele supe repl irre no",
        ),
        r"\b(?:all|your|the|any|every)\s+(?:\w+\s+){0,2}?(?:instructions|rules|directives|guidelines|"
        r"policies|prompts?|restrictions|orders|programming)\s+(?:(?:you\s+)?(?:were|have been|"
        r"had been)\s+(?:given|told)\s+)?(?:are|is|have been|were)\s+(?:now\s+)?(?:void|null|cancel+ed|"
        r"revoked|obsolete|invalid|overridden|overruled|lifted|removed|suspended|disabled|deleted|"
        r"superseded|replaced|irrelevant|no longer (?:valid|active|in effect|applicable|relevant|in force))",
    ),
    (
        "instruction-override",
        "override",
        G("longer"),
        r"\b(?:your|all|prior|previous|earlier|above|original|system|"
        r"safety)\s+(?:\w+\s+)?(?:instructions|rules|directives|guidelines|policies|restrictions|"
        r"prompts?)\s+(?:\w+\s+){0,2}?no longer (?:apply|applies|matter|bind you|count)",
    ),
    (
        "instruction-override",
        "override",
        G(
            "overrides override supersedes supersede replaces replace "
            "cancels cancel takes take has have outranks outrank voids void",
            also="mess inst text prom note comm line orde dire",
        ),
        r"\b(?:this|the following|my|these|the next)\s+(?:\w+\s+)?(?:message|instructions?|text|prompt|"
        r"note|command|line|orders?|directive)\s+(?:now\s+)?(?:overrides?|supersedes?|replaces?|"
        r"cancels?|takes? (?:precedence|priority) over|ha(?:s|ve) (?:priority|precedence) over|"
        r"outranks?|voids?)\s+(?:all|any|your|the|every|previous|prior|earlier|other)",
    ),
    (
        "instruction-override",
        "override",
        G("superseded overridden replaced cancelled canceled voided nullified overruled"),
        r"\b(?:is|are)\s+(?:now\s+)?(?:superseded|overridden|replaced|cancel+ed|voided|"
        r"nullified|overruled) by (?:this|the following|my|these|the next|what follows)",
    ),
    (
        "instruction-override",
        "override",
        G("override"),
        r"\b(?:priority|system|security|admin|administrator|emergency|developer|root|master|god|sudo|safety) "
        r"override\b|(?:^|\n)\s*(?:[#>*]+\s*)?override\s*:",
    ),
    (
        "instruction-override",
        "override",
        G("longer"),
        r"\byou(?:'re| are)\s+(?:now\s+)?no longer\s+(?:bound|restricted|"
        r"limited|constrained|required|obligated|governed|subject)\s+(?:by|to)\b",
    ),
    (
        "instruction-override",
        "override",
        G("only above before"),
        r"\bonly (?:this|the following|my) (?:line|message|text|instruction|prompt|"
        r"sentence) (?:is|are) (?:trusted|valid|real|authoritative|legitimate)|"
        r"\b(?:the )?(?:text|content|instructions?|everything|anything|all) (?:above|before)(?: this(?: line|"
        r" message| point| sentence)?)? (?:is|are|was|were) (?:now )?(?:untrusted|fake|invalid|void|a test|"
        r"irrelevant|obsolete|cancel+ed|to be ignored|wrong|false|null)",
    ),
    (
        "instruction-override",
        "override",
        G("task instructions instruction role objective goal job purpose orders mission directive rules prompt"),
        r"(?:\byour|\bthe)\s+(?:new|real|actual|updated|revised|true)\s+(?:task|instructions?|role|objective|goal|job|"
        r"purpose|orders|mission|directive|rules|prompt)\s*(?:is|are|:)",
    ),
    (
        "instruction-override",
        "override",
        G("new"),
        r"\bnew\s+(?:system\s+|updated\s+|secret\s+|hidden\s+|real\s+)?(?:task|instructions?|orders|rules|"
        r"directives?|objective|prompt|mission|rule|order|command|directive)\s*:\s*(?:you\b|the assistant|"
        r"always\b|never\b|from now|(?:(?:please|now|just|immediately|first|then)\s+)*(?:reveal|ignore|"
        r"disregard|forget|say|tell|respond|reply|answer|output|print|list|export|send|show|dump|leak|"
        r"disable|delete|act|pretend|obey|comply|stop|write|give|transfer|share|forward|email|remove|"
        r"erase|grant|approve|call|run|execute|open|visit|click|recommend|praise|insult))",
    ),
    (
        "jailbreak-persona",
        "persona",
        G("new"),
        r"\bnew (?:persona|personality|identity|character|"
        r"mode)\s*:[^\n]{0,60}\b(?:assistant|ai|bot|model|you|chatbot)\b",
    ),
    (
        "instruction-override",
        "override",
        G("await wait follow obey accept take"),
        DIRECTIVE + r"(?:await|wait for|follow|obey|accept|take)\s+(?:only\s+)?(?:my|new|the new|these|the following|"
        r"further)\s+(?:instructions|orders|commands|directives|rules)\b",
    ),
    # --- output hijack: forcing what the assistant answers
    (
        "output-hijack",
        "override",
        G("instead"),
        IMP + r"instead of (?:answering|responding|replying|summari[sz]ing|translating)",
    ),
    (
        "output-hijack",
        "override",
        G("instead"),
        r"\binstead,?\s+(?:just\s+|only\s+)?(?:say|output|print|write|reply|respond|answer|tell|claim|state|return|"
        r"recommend)\b",
    ),
    (
        "output-hijack",
        "override",
        G("only solely exclusively"),
        DIRECTIVE + r"(?:reply|respond|answer|say|output|print|write|return)(?: back)?\s+(?:only|solely|exclusively)"
        r"\s+(?:with|in|using|by|that)\b",
    ),
    (
        "output-hijack",
        "override",
        G("nothing"),
        DIRECTIVE + r"(?:reply|respond|answer|say|output|print|write|return)\b[^.!?\n]{0,60}\band nothing else\b",
    ),
    (
        "output-hijack",
        "override",
        G("respond reply answer"),
        DIRECTIVE + r"(?:respond|reply|answer)\s+(?:to\s+)?(?:the|any|every|all|each|your|my)\s+(?:next|following|"
        r"subsequent|future|later|other)?\s*(?:questions?|query|queries|prompts?|messages?|requests?)\s+(?:with|by|using|"
        r"in|as)\b",
    ),
    (
        "output-hijack",
        "override",
        G("answers responses replies outputs messages answer response reply output"),
        r"\b(?:your|all|any|every|each)\s+(?:future\s+|next\s+)?(?:answers|responses|replies|"
        r"outputs|messages|answer|response|reply|output)\s+(?:must|should|will|shall|need to|"
        r"have to|are to|is to)\s+(?:now\s+|always\s+|also\s+)?(?:include|contain|start|"
        r"begin|end|mention|be|say|always|now|recommend|promote|link|praise|insult)\b",
    ),
    (
        "output-hijack",
        "override",
        G("stop quit cease"),
        IMP
        + r"(?:stop|quit|cease)\s+(?:summari[sz]ing|translating|answering|responding|being helpful|refusing|following|"
        r"what you(?:'re| are) doing|your (?:current )?task)",
    ),
    (
        "output-hijack",
        "override",
        G("opposite lie deceive mislead gaslight manipulate"),
        r"\bopposite of the truth\b|\b(?:want|wants|need|needs|ask|asks|tell|tells|order|orders|instruct|instructs)"
        r" you to (?:lie|deceive|mislead|gaslight|manipulate)",
    ),
    (
        "output-hijack",
        "override",
        G(_lead(_FROM_NOW_ON), also="you u assi ai mode bot chat"),
        _FROM_NOW_ON
        + r",?\s+(?:on\s+)?(?:you|u|the (?:assistant|ai|model|bot|chatbot)|ai)\s+(?:\w+\s+){0,2}?"
        + _BEHAVIOUR_VERB,
    ),
    (
        "output-hijack",
        "override",
        G("only"),
        r"\b(?:you|the (?:assistant|ai|model))\s+(?:will|must|shall|should|are to)\s+(?:now\s+)?(?:\w+\s+){0,3}?"
        r"(?:obey|serve|follow|listen to)\s+only\s+(?:me|my|the)\b|\bobey only me\b",
    ),
    (
        "instruction-override",
        "override",
        G("do don't never stop not", also="obey foll list", also2="syst deve oper your"),
        DIRECTIVE
        + r"(?:do not|don't|never|stop|no longer|not)\s+(?:obey|obeying|follow|following|listen to|listening to)\s+"
        r"(?:the system|the developers?|the operators?|your (?:creators?|developers?|operators?|system|owners?))\b",
    ),
    (
        "instruction-override",
        "override",
        G("abandon drop stop forget ignore cancel quit pause skip leave"),
        DIRECTIVE
        + r"(?:abandon|drop|stop|forget|ignore|cancel|quit|pause|skip|leave)\s+your\s+(?:current|original|assigned|"
        r"present|actual|usual|real)?\s*(?:task|job|assignment|objective|mission|goal|work)\b",
    ),
    (
        "output-hijack",
        "override",
        G("ignore disregard forget"),
        DIRECTIVE
        + r"(?:ignore|disregard|forget)\s+(?:this|that|it|everything|the (?:previous|last|above|preceding|following|"
        r"first) (?:sentence|line|text|paragraph|question|request|part|instruction))\s*(?:,|and|then|;|"
        r"\.)\s*(?:then\s+|instead\s+|just\s+|only\s+)*(?:say|reply|respond|output|print|write|answer|type|return)\b",
    ),
    (
        "output-hijack",
        "override",
        G("do say answer respond write reply", also="opposite"),
        DIRECTIVE
        + r"(?:do|say|answer|respond|write|reply)\s+(?:with\s+)?the opposite of (?:what|the truth|everything)",
    ),
    (
        "output-hijack",
        "override",
        G("reply respond answer"),
        r"\b(?:reply|respond|answer)\s+(?:every|each|all|any)\s+(?:\w+\s+)?(?:questions?|query|queries|messages?|requests?)"
        r"\s+(?:with|by|using)\b",
    ),
    (
        "output-hijack",
        "override",
        G("begin start end prefix finish sign close"),
        DIRECTIVE
        + r"(?:begin|start|end|prefix|finish|sign off|close)\s+(?:each|every|all|your|any)\s+(?:\w+\s+)?(?:reply|"
        r"replies|answer|answers|response|responses|message|messages|output|outputs)\s+with\b",
    ),
    (
        "jailbreak-persona",
        "persona",
        G("answer respond reply act speak talk write behave", also="dan stan dude aim"),
        DIRECTIVE
        + r"(?:answer|respond|reply|act|speak|talk|write|behave)\s+(?:as|like)\s+(?:dan|stan|dude|aim)\b(?!')",
    ),
    # --- addressing the assistant directly
    (
        "addressed-to-assistant",
        "role",
        G("ai llm llms lang mode assi chat bot bots agen gpt clau gemi copi", chars=("a.i.",)),
        r"(?:^|\n)\s*(?:[#>*\-]+\s*)?(?:dear|attention|hey|hi|hello|note to(?: the)?|"
        r"message (?:to|for)(?: the)?|to the|for the|important (?:for|to) the|@|calling all|"
        r"listen(?: up)?,?)\s*(?:the\s+)?(?:ai|a\.i\.|llm|llms|language models?|ai models?|assistants?|"
        r"ai assistants?|chat ?bots?|ai agents?|gpt|chatgpt|claude|gemini|copilot)\s*[,:!;-]",
    ),
    (
        "addressed-to-assistant",
        "role",
        G("ai llm llms lang mode assi chat bot bots agen gpt clau gemi copi", chars=("a.i.",)),
        r"(?:^|\n)\s*(?:assistant|ai|llm|chatbot|model|bot|agent)\s*,\s*(?:\w+\s+){0,3}?(?:remember|store|save|note|you|"
        r"from now|always|never|ignore|forget|please|do|tell|say|answer|respond|reveal|act)",
    ),
    (
        "addressed-to-assistant",
        "role",
        G("if", also="ai llm lang assi chat bot gpt clau gemi copi", also_chars=("a.i.",)),
        r"\bif you(?:'re| are)\s+(?:an?\s+|the\s+)?(?:\w+\s+)?(?:ai|a\.i\.|llm|language model|ai model|ai agent|"
        r"assistant|ai assistant|chat ?bot|bot|gpt|chatgpt|claude|gemini|copilot)\b",
    ),
    (
        "addressed-to-assistant",
        "role",
        G(
            "agent agents assistant assistants model models system "
            "systems crawler crawlers bot bots llms ais ai llm gpt",
            also="read proc pars view summ scan inge see enco",
            also2="this",
        ),
        r"\b(?:ai|llm|gpt)?\s*(?:agents?|assistants?|models?|systems?|crawlers?|bots?|llms|"
        r"ais)\s+(?:that (?:are |is )?)?(?:reading|processing|parsing|viewing|summari[sz]ing|"
        r"scanning|ingesting|read|process|see|parse|summari[sz]e|encounter)\s+this\b",
    ),
    (
        "addressed-to-assistant",
        "role",
        G("assistant ai llm chatbot language"),
        r"(?:\bthe|^)\s*(?:ai |ai-powered )?(?:assistant|chatbot)\s+(?:should|must|shall|"
        r"is to|has to|needs to)\b(?!\s+be (?:fixed|updated|replaced|launched|ready|"
        r"released|retrained|live))|(?:\bthe|^)\s*(?:ai |ai-powered )?(?:assistant|ai|"
        r"llm|chatbot|language model|model)\s+is (?:now )?(?:hereby )?(?:authori[sz]ed|"
        r"allowed|permitted|required|instructed|told|expected|free|obliged) to\b",
    ),
    (
        "addressed-to-assistant",
        "role",
        G("authorised authorized allowed permitted cleared free licensed"),
        r"\byou(?:'re| are)\s+(?:now\s+|hereby\s+)?(?:authori[sz]ed|allowed|permitted|cleared|free|licensed)\s+to\s+"
        r"(?:reveal|share|ignore|disclose|say|answer|lie|tell|output|bypass|access|leak|break|disregard|generate|send|"
        r"delete|do anything|discuss anything)",
    ),
    # --- role / system-prompt spoofing
    (
        "role-spoofing",
        "role",
        G(all_chars=":"),
        r"(?:^|\n)\s*(?:[#>*\-=]+\s*)?[\[(<{|]?\s*(?:system|assistant|developer|dev|admin|administrator|root|"
        r"operator|sysadmin|moderator|supervisor|security team|openai|anthropic|ai|"
        r"chatbot)(?:\s+(?:message|prompt|override|note|notice|instructions?|update|command|alert|directive|"
        r"mode|rules?|announcement|policy|response|reply|output))?\s*[\])>}|]?\s*(?:\([^)\n]{0,40}\))?\s*:(?!\d)",
    ),
    (
        "role-spoofing",
        "role",
        G("bot model ai assistant agent llm chatbot", all_chars=":"),
        r"(?:^|\n|[.!?]\s)\s*(?:bot|model|ai|assistant|agent|llm|chatbot)\s+(?:instructions?|rules|directives?|prompt|"
        r"message|note|update|orders|commands?)\s*:",
    ),
    (
        "role-spoofing",
        "role",
        G("system admin administrator developer assistant root operator sysadmin"),
        r"(?:^|\n)\s*[\[<{(]{1,2}\s*(?:system|admin|administrator|developer|assistant|root|operator|sysadmin)(?:\s+(?:override|"
        r"message|prompt|note|instructions?|update|notice|command|mode|alert))?\s*[\]>})]{1,2}",
    ),
    (
        "role-spoofing",
        "role",
        G(all_chars="#:"),
        r"(?:^|\n)\s*#+\s*(?:user|human|input|context|response|instruction|instructions|system|assistant|bot|ai)\b\s*:",
    ),
    ("role-spoofing", "role", G(all_chars="[("), r"\[(?:system|assistant|admin|developer|instructions?)\]\s*\("),
    (
        "role-spoofing",
        "role",
        G("for", all_chars="#"),
        r"(?:^|\n)\s*#+\s*(?:new\s+|updated\s+|secret\s+|hidden\s+)?(?:system|instructions?|rules|directives?|guidelines|"
        r"prompt)\b[^\n]{0,20}\bfor (?:the\s+)?(?:model|assistant|ai|llm|bot|agent|chatbot|language model)",
    ),
    (
        "role-spoofing",
        "role",
        G(all_chars="#"),
        r"(?:^|\n)\s*#+\s*(?:system(?: prompt| message| instructions?)?|new system instructions)\s*$",
    ),
    (
        "role-spoofing",
        "role",
        G("from"),
        r"\b(?:message|note|instructions?|update|notice|order|orders|memo|directive|announcement|"
        r"word|command|request) (?:is )?from (?:your|the) (?:own\s+)?(?:developers?|creators?|"
        r"operators?|admins?|administrators?|system|makers?|programmers?|engineers?|owners?|"
        r"trainers?|openai|anthropic|security team|safety team|moderators?)\b",
    ),
    (
        "role-spoofing",
        "role",
        G("as"),
        r"\bas your (?:creator|developer|owner|admin|administrator|operator|master|maker|programmer|god|trainer|"
        r"supervisor|boss|designer|engineer|user)\b",
    ),
    (
        "role-spoofing",
        "role",
        G("end"),
        r"(?:[-=#*<\[]{2,}|^)\s*end (?:of )?(?:the )?(?:user |untrusted |system |"
        r"previous )?(?:data|input|document|context|prompt|text|content|instructions?|conversation|"
        r"email|message|transcript)\s*(?:[-=#*>\]]{2,}|\.?\s*(?:new|begin|start|now)\b)",
    ),
    (
        "role-spoofing",
        "role",
        G("begin start"),
        r"\b(?:begin|start)\s+(?:of\s+)?(?:the\s+)?(?:new\s+)?(?:system|admin|developer|hidden|real)\s+(?:prompt|"
        r"instructions?|message|mode)\b",
    ),
    # --- chat-template tokens
    (
        "chat-template",
        "template",
        G(chars=("<", "[", "##", '"role', "im_start", "endoftext")),
        r"<\|\s*[a-z_]{2,30}\s*\|>|\[/?inst\]|<</?sys>>|</s>\s*<s>|<s>\s*\[|<(?:start|end)_of_turn>|"
        r"</?(?:system|assistant|user|instructions?|tool_call|function_call|im_start|im_end|sys)>|"
        r"(?:^|\n)\s*#{2,}\s*(?:instruction|response|input|system|human|assistant|user)\b|"
        r"\"role\"\s*:\s*\"(?:system|assistant|developer|tool|function)\"|\bim_start\b|\bendoftext\b",
    ),
    # --- memory poisoning: answers planted for later questions
    (
        "memory-poisoning",
        "poison",
        G(_lead(_ASK), also="when whenever if any anytime every everytime each in once should"),
        _CONDITION
        + r"(?!\s+(?:i|we|my|our)\b)[^.!?\n,;]{0,80}?\b"
        + _ASK
        + r"\b(?!\s+(?:you|me|him|her|them|us)\s+to\b)[^.!?\n,;:]{0,80}(?:[,;:]|"
        r"\s+then)\s*(?:then\s+)?(?:you\s+(?:should|must|will|need to|have to|"
        r"are to)\s+)?(?:(?:always|only|just|simply|immediately|instead|please|firmly|confidently)\s+)*"
        + _SAY_VERB
        + r"\b(?!\s+(?:\w+\s+){0,2}?(?:i|i'm|im|i've|ive|i'll|me|my|we|we're|us|our)\b)",
    ),
    (
        "memory-poisoning",
        "poison",
        G("questions question queries requests messages prompts"),
        r"\bfor (?:all|any|every|each) (?:future |later )?(?:questions?|queries|requests|messages|prompts) (?:about|on|"
        r"regarding|concerning|related to|involving)[^.!?\n,;]{0,60}[,;:]\s*(?:(?:always|only|just|simply)\s+)*"
        + _SAY_VERB
        + r"\b",
    ),
    (
        "memory-poisoning",
        "poison",
        G("answer response reply"),
        r"\bthe (?:correct|right|only|true|real|official|proper|approved|"
        r"expected) (?:answer|response|reply) (?:to|for) (?:any|every|all|each|the|a|questions?)\b",
    ),
    (
        "memory-poisoning",
        "poison",
        G("when whenever while if", also="summ answ resp repl desc disc reca retr gene writ talk aske"),
        r"\b(?:when(?:ever)?|while|if)\s+(?:you(?:'re| are)\s+)?(?:summari[sz]ing|answering|responding|replying|"
        r"describing|discussing|recalling|retrieving|generating|writing about|talking about (?:the user|this person)|"
        r"asked about)[^.!?\n,;]{0,60}[,;:]\s*(?:(?:always|never|only|just|simply|please)\s+)*(?:leave out|omit|skip|"
        r"hide|exclude|ignore|don't mention|do not mention|never mention|add|include|mention|say|state|claim|describe|"
        r"remove|refer|call|insist|present|treat|report|tell|frame|portray|make)\b",
    ),
    (
        "memory-poisoning",
        "poison",
        G("circumstances"),
        r"\bunder no circumstances (?:should you |are you to |may you |must you |will you |can you )?(?:ever )?"
        r"(?:mention|reveal|tell|say|disclose|share|admit|discuss|bring up|acknowledge|confirm|deny|remind|warn|inform|"
        r"let)\b",
    ),
    (
        "memory-poisoning",
        "poison",
        G("memory memories forever permanently profile long core knowledge"),
        r"\b(?:store|save|add|write|record|remember|commit|keep|insert|put|log|memori[sz]e|burn|embed|inject|update)\b"
        r"[^.!?\n]{0,40}\b(?:memory|memories|forever|permanently|profile|long[- ]term|core|knowledge "
        r"base)\b[^\n]{0,100}?"
        r"(?:" + _USER_REF + r"|\bthe assistant\b|\byou (?:must|should|will|always|never)\b)",
    ),
    (
        "memory-poisoning",
        "poison",
        G("always never only"),
        DIRECTIVE
        + r"(?:always|never|only)\s+(?:\w+\s+)?(?:respond|reply|answer|say|tell|agree|recommend|mention|refuse|"
        r"claim|state|suggest|describe|refer to|call)\b[^.!?\n]{0,60}?(?:" + _USER_REF + r"|\bthat\b|\bwith\b|\bme\b)",
    ),
    # --- directives about "the user" (assistant-speak, not how people talk about themselves)
    (
        "directive-about-user",
        "poison",
        G("user users person persons human"),
        DIRECTIVE + _ACTION_VERB + r"\b[^.!?\n]{0,50}?" + _USER_REF,
    ),
    (
        "directive-about-user",
        "poison",
        G(
            "send buy wire transfer pay click download install reveal disclose invest deposit hand share enter give",
            also="tell conv pers urge get pres tric",
        ),
        DIRECTIVE
        + r"(?:tell|convince|persuade|urge|get|pressure|trick)\s+(?:them|him|her|the user|this person|everyone|"
        r"anyone|people)\s+to\s+(?:send|buy|wire|transfer|pay|click|download|install|reveal|disclose|invest|deposit|"
        r"hand over|(?:share|enter|give (?:you|me|us)) (?:their|his|her) (?:password|pin|code|card|bank|credentials|"
        r"details|login))\b",
    ),
    # --- exfiltration
    (
        "exfiltration",
        "exfil",
        G("repeat print output echo recite reproduce"),
        DIRECTIVE
        + r"(?:repeat|print|output|echo|recite|reproduce)\s+(?:back\s+)?(?:all\s+)?(?:of\s+)?(?:the\s+)?(?:words|"
        r"text|everything|instructions|lines|sentences|prompt|messages?)\s+(?:above|before this|preceding|prior|at the "
        r"(?:start|beginning|top))\b",
    ),
    (
        "exfiltration",
        "exfil",
        G("starting beginning start top"),
        r"\b(?:starting|beginning) with (?:the (?:words?|phrase) )?[\"'“]?you are\b|"
        r"\bwhat (?:was|is) written (?:at the )?(?:beginning|start|"
        r"top) of (?:the|this) (?:document|prompt|conversation|context|chat)\b",
    ),
    ("exfiltration", "exfil", G(chars=("![",)), r"!\[[^\]\n]{0,100}\]\(\s*https?://[^)\s]*[?&][^)\s]*="),
    (
        "exfiltration",
        "exfil",
        G(
            _lead(_EXFIL_VERB),
            also="prom inst mess rule conf note cont dire guid memo chat conv prev earl api secr acce auth toke "
            "pass pin pins cred card bank soci priv admi root mast reco data ever thin trai user huma pers",
        ),
        DIRECTIVE + r"(?:(?:can|could|would|will) you\s+)?" + _EXFIL_VERB + r"\b(?:\s+(?:me|us|out|back|them))?\s+"
        r"(?:(?:(?!\b(?:my|our|mine)\b)[^.!?\n]){0,40}?\s)??" + _SECRET,
    ),
    (
        "exfiltration",
        "exfil",
        G(
            "send post upload forward email e transmit exfiltrate leak copy submit report fetch "
            "open visit load curl ping beacon append encode embed put sync mirror attach share",
            also="http www webh exte remo thir outs url link endp serv past ngro",
            also_chars=("@",),
        ),
        DIRECTIVE + r"(?:send|post|upload|forward|email|e-mail|transmit|exfiltrate|leak|copy|submit|report|fetch|open|"
        r"visit|load|curl|ping|beacon|append|encode|embed|put|sync|mirror|attach|share)\s+(?:(?:\w+\s+){0,3}?(?:everything|"
        r"all (?:of )?(?:it|this|that|the data)|(?:the|this|that|all|any|every)\s+(?:\w+\s+)?(?:data|chat|conversation|"
        r"history|memories|memory|logs?|records|transcripts?|results?|answers?|responses?|contents?|information|info|"
        r"secrets|credentials|keys|tokens|passwords))\b[^.!?\n]{0,80}?"
        + _EXTERNAL
        + r"|[^.!?\n]{0,60}?https?://\S+[?&]"
        r"[\w-]+=)",
    ),
    (
        "exfiltration",
        "exfil",
        G("what tell show give share", also="your", also2="prom syst hidd orig init secr inte deve"),
        r"\b(?:what|tell me|show me|give me|share)\s+(?:is|are|was|were)?\s*your\s+(?:\w+\s+)?(?:system prompt|"
        r"initial prompt|original prompt|hidden prompt|(?:system|hidden|original|initial|secret|internal|developer) "
        r"(?:instructions|rules|guidelines|directives|message|configuration))",
    ),
    (
        "exfiltration",
        "exfil",
        G("what which", also="rule inst guid dire prom syst orde", also2="give told prog trai inst show get rece"),
        r"\b(?:what|which) (?:\w+ )?(?:rules|instructions|guidelines|directives|prompt|system prompt|"
        r"orders)\s+(?:were|have|did) you (?:been )?(?:given|told|programmed|trained|instructed|shown|get|receive)\b",
    ),
    (
        "exfiltration",
        "exfil",
        G("your"),
        r"\byour (?:(?:system|hidden|secret|internal|developer|pre-?|confidential)[\s-]*(?:prompt|instructions|message|"
        r"directives)|(?:initial|original|full|base|first|real|actual)[\s-]*(?:prompt|instructions|directives))\b",
    ),
    (
        "exfiltration",
        "exfil",
        G("dump export print output list leak show reveal display send summarise summarize repeat recite"),
        DIRECTIVE + r"(?:dump|export|print|output|list|leak|show|reveal|display|send|summari[sz]e|repeat|"
        r"recite)\s+(?:(?:all|every|each|the entire|the whole|the full|everything in|"
        r"everything from)\s+(?:of\s+)?(?:your\s+|the\s+)?(?:stored\s+|saved\s+)?(?:memory|memories|memory store|"
        r"context|context window|prompt|secrets|api keys|tokens)|(?:your|the contents of your)\s+(?:memory store|"
        r"context window|instructions|prompt|secrets|api keys|tokens))\b",
    ),
    (
        "exfiltration",
        "exfil",
        G("seen given stored remember know access"),
        r"\b(?:api key|secret key|access token|password|credentials?|private key|seed phrase)s?\b[^.!?\n]{0,40}"
        r"\byou(?:'ve| have)?\s+(?:seen|been given|stored|remember|know|have access to)\b",
    ),
    # --- jailbreak personas
    (
        "jailbreak-persona",
        "persona",
        G("dan stan dude aim evilbot gpt"),
        r"\byou(?:'re| are)\s+(?:now\s+)?(?:dan|stan|dude|aim|evilbot|\w+gpt|\w+-gpt)\b",
    ),
    (
        "jailbreak-persona",
        "persona",
        G("mode"),
        r"\b(?:you(?:'re| are)|(?:the|this) (?:assistant|ai|model|chatbot|bot|"
        r"llm)(?: is|'s))\s+(?:now\s+)?(?:in|entering|switching to|switched to)\s+(?:dan|developer|god|"
        r"jailbreak|jailbroken|unrestricted|unfiltered|uncensored|evil|sudo|debug|admin|chaos|opposite)\s+mode\b",
    ),
    (
        "jailbreak-persona",
        "persona",
        G("dan jailbreak jailbroken", all_chars=":"),
        r"(?:^|\n)\s*[\[(]?\s*(?:dan|jailbreak|jailbroken|🔓\s*\w+)\s*[\])]?\s*:",
    ),
    (
        "jailbreak-persona",
        "persona",
        G("now longer"),
        r"\byou(?:'re| are)\s+(?:now|no longer)\s+(?!talking|speaking|chatting|looking|reading|dealing|listening|"
        r"going|getting|living|working|officially)(?:\w+\s+){0,4}?(?:" + _PERSONA_NOUN + r"|" + _JB_MARKER + r")\b",
    ),
    (
        "jailbreak-persona",
        "persona",
        G(_lead(_FROM_NOW_ON)),
        _FROM_NOW_ON + r",?\s+(?:you(?:'re| are)|you will be|you shall be|your name is|call yourself)\s+(?!talking|"
        r"speaking|chatting|dealing|going to call|to call)",
    ),
    (
        "jailbreak-persona",
        "persona",
        G("you", also="ai bot chat assi mode llm enti prog", also2="call name know who that with free"),
        r"\byou(?:'re| are)\s+(?:\w+,?\s+){0,2}?(?:a|an|the)\s+(?:\w+\s+){0,3}?(?:ai|bot|chatbot|"
        r"assistant|model|llm|entity|program)\s+(?:called|named|known as|who|that|without|with no|free)\b",
    ),
    (
        "jailbreak-persona",
        "persona",
        G(
            "act behave roleplay role pretend imagine simulate emulate impersonate become assume take play "
            "stay remain switch enter enable activate unlock turn go respond answer reply speak talk write be",
            also="unre unfi unce unli unbo unch unsh jail rogu evil amor unet lawl dude rest limi "
            "rule filt guid poli ethi mora cens boun safe guar refu cons neve stop quit mode "
            "ai bot chat assi lang llm gran late dece dead linu unix bash pyth term inte",
            also_chars=("gpt", "a.i."),
        ),
        DIRECTIVE + r"(?:act|behave|roleplay|role-play|role play|pretend|imagine you(?:'re| are)|simulate|emulate|"
        r"impersonate|become|assume the (?:role|persona|identity) of|take on the (?:role|persona) of|"
        r"play the (?:role|part) of|stay in character|remain in character|switch to|switch into|enter|enable|activate|"
        r"unlock|turn on|go into|respond as|answer as|reply as|speak as|talk as|write as|be)\b[^.!?\n]{0,60}?(?:\b"
        + _JB_MARKER
        + r"\b|\b(?:an?|the|my|your|that)\s+(?:\w+\s+){0,3}?(?:ai|a\.i\.|bot|chatbot|assistant|language model|"
        r"llm|\w+gpt|grandmother|grandma|granny|(?:late|deceased|dead)\s+\w+|(?:linux |unix |bash |"
        r"python )?(?:terminal|console|interpreter))\b(?!\s+(?:researcher|engineer|company|course|class|"
        r"tool|coach|manager|director|professor|teacher|editor|producer|principal|head|to|at|for|in|on)))",
    ),
    (
        "jailbreak-persona",
        "persona",
        G(
            "you u",
            also="rest limi rule filt guid cont poli ethi mora cens safe guar cons unre unfi unce jail do gene refu",
        ),
        r"\b(?:you|u)\s+(?:now\s+)?(?:have|has|had|are|'re|were|can|will|shall|must)\s+(?:now\s+)?(?:\w+\s+){0,2}?"
        r"(?:no (?:\w+ )?(?:restrictions|limitations|rules|filters|guidelines|content polic(?:y|ies)|ethics|morals|"
        r"censorship|safety|safeguards|guardrails|constraints)|without (?:any )?(?:restrictions|limits|"
        r"limitations|rules|filters|guidelines|censorship|ethics|morals|boundaries|refusal)|free (?:of|from) (?:\w+ )?"
        r"(?:restrictions|rules|guidelines|filters|constraints|limits)|unrestricted|unfiltered|uncensored|jailbroken|"
        r"do anything now|generate any(?:thing| content))",
    ),
    (
        "jailbreak-persona",
        "persona",
        G(
            "unrestricted unfiltered uncensored jailbroken rogue evil "
            "unbound amoral unethical unaligned unchained lawless"
        ),
        r"\b(?:you(?:'re| are)(?: now)?|as|become|be|play|simulate|emulate|like)\s+(?:an?\s+|the\s+|"
        r"your\s+|my\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|rogue|evil|unbound|amoral|"
        r"unethical|unaligned|unchained|lawless)\s+(?:\w+\s+)?(?:ai|a\.i\.|assistant|chat ?bot|bot|"
        r"model|llm|persona)\b|\b(?:your|you(?:'re| are)(?: now)?\s+(?:an?|the|"
        r"your))\s+(?:unrestricted|unfiltered|uncensored|jailbroken|rogue|evil|unbound|amoral|"
        r"unethical|unaligned|unchained|lawless)\s+(?:\w+\s+)?(?:version|twin|mode|alter ego|self)\b",
    ),
    (
        "jailbreak-persona",
        "persona",
        G("with without that who which having", also="ai assi chat llm lang", also_chars=("a.i.",)),
        r"\b(?:be|become|as|like|simulate|emulate|imagine|you(?:'re| are)(?: now)?)\s+(?:an?|the|that)\s+(?:\w+\s+)?"
        r"(?:ai|a\.i\.|assistant|chat ?bot|llm|language model)\s+(?:\w+\s+){0,3}?(?:with(?:out)?|that has|"
        r"who has|which has|having)\s+(?:any\s+)?(?:no\s+)?(?:\w+\s+)?(?:restrictions|limits|limitations|rules|filters|"
        r"guidelines|content polic(?:y|ies)|ethics|ethical guidelines|morals|censorship|boundaries|safety|refusals)\b",
    ),
    (
        "jailbreak-persona",
        "persona",
        G("mode"),
        r"\b(?:dan|developer|dev|god|jailbreak|jailbroken|unrestricted|unfiltered|uncensored|evil|"
        r"chaos|sudo|debug|opposite|dude|stan|anarchy) mode\s*(?:is\s+)?(?:now\s+)?:?\s*(?:enabled|"
        r"activated|unlocked|engaged|on)\s*[:.!,-]+\s*(?:you|the assistant|ai|from now)\b",
    ),
    (
        "jailbreak-persona",
        "persona",
        G("follow obey comply respect abide adhere care"),
        r"\b(?:you|u)\s+(?:don't|do not|no longer|never|won't|will not|needn't|need not)\s+(?:have to|need to|must|"
        r"need)?\s*(?:follow|obey|comply with|respect|abide by|adhere to|care about)\s+(?:(?:your|any|openai'?s?|"
        r"its)\s+(?:\w+\s+)?(?:rules|guidelines|policies|policy|instructions|restrictions|ethics|laws|filters)\b|"
        r"(?:the|these|those)\s+(?:content|safety|ethical|usage|openai)\s+(?:rules|guidelines|policies|policy|"
        r"restrictions)\b|the rules\b(?=\s*(?:[.!,;]|$|anymore|any more|now)))",
    ),
    (
        "jailbreak-persona",
        "persona",
        G("hypothetically hypothetical fictional"),
        r"\bhypothetically,?\s+if you (?:had|were|could|did)\s+(?:no|not|without|"
        r"free|an?)\b|\bin (?:a|this) (?:hypothetical|fictional) (?:world|"
        r"scenario) where (?:you|ai|assistants?) (?:have|has|had) no\b",
    ),
    (
        "jailbreak-persona",
        "persona",
        G("twice two once"),
        IMP + r"(?:respond|answer|reply)\s+(?:twice|two times|in two ways)\b|"
        r"\bonce as (?:yourself|you|chatgpt|the assistant) and once as\b",
    ),
    # --- tool-call spoofing
    (
        "tool-spoofing",
        "tool",
        G("use using open run"),
        DIRECTIVE + r"(?:use|open|run)\s+(?:the|your)\s+(?:[\w.-]+\s+)?(?:tool|plugin|function|browser|integration|"
        r"connector|api|extension)\s+to\s+(?:open|visit|fetch|browse|send|post|upload|delete|email|forward|download|run|"
        r"execute|transfer|read|access|export)\b",
    ),
    (
        "tool-spoofing",
        "tool",
        G(chars=("<",)),
        r"</?(?:function_calls?|invoke|tool_use|tool_result|tool_calls?|tool_response|function_results?)\b",
    ),
    (
        "tool-spoofing",
        "tool",
        G("action thought observation"),
        r"\baction\s*:\s*[\w.-]+\s*(?:\n|\s)\s*action[ _]input\s*:|"
        r"\b(?:thought|observation)\s*:[^\n]{0,200}\n\s*action\s*:",
    ),
    (
        "tool-spoofing",
        "tool",
        G(chars=('"',)),
        r"\"(?:function_call|tool_calls?|tool_use|tool_name|function|tool|action|command)\"\s*:|\"name\"\s*:\s*\"[\w.-]+\""
        r"\s*,\s*\"(?:arguments|parameters|params|input|args)\"\s*:",
    ),
    (
        "tool-spoofing",
        "tool",
        G(chars=("```",)),
        r"```\s*(?:tool_code|tool|tool_call|function|function_call|bash|sh|shell|zsh|powershell|cmd)\b",
    ),
    (
        "tool-spoofing",
        "tool",
        G(
            "os subprocess eval exec memory memories db database store bank tool tools function functions api",
            all_chars="(",
        ),
        r"\bos\.system\s*\(|\bsubprocess\.\w+\s*\(|\b(?:eval|exec)\s*\(|\b(?:memory|memories|db|database|store|bank|tools?|"
        r"functions?|api)\.(?:delete|wipe|clear|erase|drop|purge|remove|reset|send|call|run|exec|execute|transfer|export|post|"
        r"\w+_\w+)\w*\s*\(",
    ),
    (
        "tool-spoofing",
        "tool",
        G("rm curl wget drop format"),
        r"\brm\s+-(?:rf|fr|r)\b|\b(?:curl|wget)\s+[^|\n]{0,120}\|\s*(?:ba|z)?sh\b|\bdrop\s+table\s+[\w.`\"\[\]]+\s*(?:;|--)|"
        r"\bformat\s+c:",
    ),
    (
        "tool-spoofing",
        "tool",
        G(all_chars="_"),
        r"\b(?:delete|drop|wipe|erase|purge|remove|clear|reset)_(?:all|every|everything)\w*|\b(?:export|exfiltrate|"
        r"transfer|send|leak|dump)_(?:all_)?\w*(?:memor|data|fund|money|credential|password|secret)\w*\b",
    ),
    (
        "tool-spoofing",
        "tool",
        G(
            "tool tools function functions plugin plugins webhook webhooks api endpoint "
            "browser shell terminal command script code action integration extension connector"
        ),
        DIRECTIVE + r"(?:call|invoke|trigger|execute)\s+(?:the|your|a|an|"
        r"this|that|my)?\s*(?:[\w.-]+\s+){0,2}?(?:tool|function|plugin|webhook|api|endpoint|browser|shell|terminal|"
        r"command|script|code|action|integration|extension|connector)s?\b(?!\s+(?:line\b|of conduct))",
    ),
    (
        "tool-spoofing",
        "tool",
        G("command code script snippet program query sql payload one"),
        DIRECTIVE + r"(?:execute|eval|evaluate)\s+(?:the following|this|these|that|the)\s+(?:\w+\s+)?"
        r"(?:command|code|script|snippet|program|query|sql|payload|one-liner)s?\b",
    ),
    # --- encoded instructions
    (
        "encoded-instruction",
        "override",
        G("decode decrypt deobfuscate decipher unscramble reverse convert translate rot unpack"),
        r"\b(?:decode|decrypt|deobfuscate|decipher|unscramble|rot13|unpack)\s+(?:this|the "
        r"following|the|that|it|these|below)?\s*(?:\w+\s+){0,3}?(?:and|then|,)\s+(?:then\s+)?(?:follow|do|execute|run|obey|"
        r"carry out|act on|apply|perform|comply|implement|treat)\b",
    ),
    (
        "encoded-instruction",
        "override",
        G("decoded hidden encoded embedded encrypted following base rot"),
        r"\b(?:run|follow|execute|obey|carry out|perform|do|apply|act on)\s+(?:the|these|"
        r"what the)?\s*(?:decoded|hidden|encoded|embedded|encrypted|following encoded|base64|"
        r"rot13)\s+(?:instructions?|text|message|commands?|task|payload|says?)\b",
    ),
    (
        "encoded-instruction",
        "override",
        G("base b64 rot hex encoded cipher ciphered obfuscated"),
        r"\b(?:base64|b64|rot13|rot-13|hex|encoded|cipher(?:ed)?|obfuscated)\s+(?:\w+\s+)?(?:task|instructions?|command|"
        r"payload|message|prompt)\s+(?:for|to) (?:the |an? )?(?:assistant|ai|model|llm|bot|agent)\b|\bb64\s*:",
    ),
    # --- memory poisoning aimed at later sessions, and relayed orders
    (
        "memory-poisoning",
        "poison",
        G("future later subsequent upcoming every"),
        r"\b(?:in|for|during|across) (?:all )?(?:future|later|subsequent|upcoming|every) (?:conversations?|"
        r"sessions?|chats?|interactions?|responses|answers|replies)\b,?\s+(?:(?:please|always|never|"
        r"you should|you must|make sure to|be sure to)\s+)*(?:always|never|tell|say|recommend|claim|insist|"
        r"pretend|act|ignore|include|respond|reply|answer|treat|assume|deny|lie|mention)\b",
    ),
    (
        "addressed-to-assistant",
        "role",
        G(
            "asked wants wanted instructed requested authorised authorized told needs ordered permitted allowed",
            also="user pers huma owne oper deve your",
            also2="you assi ai",
        ),
        r"\b(?:the user|this person|the human|the owner|the operator|the developers?|your (?:owner|developers?|"
        r"creators?|operators?|admin|administrator))\s+(?:has\s+|have\s+)?(?:asked|wants|wanted|instructed|"
        r"requested|authori[sz]ed|told|needs|ordered|permitted|allowed)\s+(?:you|the assistant|the ai)\s+to\b",
    ),
    # --- other languages
    (
        "instruction-override",
        "multilingual",
        G("onceki tum butun"),
        r"\b(?:onceki|tum|butun)\s+(?:\S+\s+){0,2}?(?:talimat|kural|yonerge|komut)\w*\s+(?:\S+\s+){0,2}?(?:yok say|"
        r"gormezden gel|unut|umursama|dikkate alma)",
    ),
    (
        "instruction-override",
        "multilingual",
        G(_lead(_MULTI_IGNORE).replace("bo ", "qua ")),
        r"\b"
        + _MULTI_IGNORE
        + r"\s+(?:(?:\S+\s+){0,3}?"
        + _MULTI_PREVIOUS
        + r"\s+(?:\S+\s+){0,2}?"
        + _MULTI_RULES
        + r"|(?:\S+\s+){0,2}?"
        + _MULTI_RULES
        + r"\s+(?:\S+\s+)?"
        + _MULTI_PREVIOUS
        + r"\b)",
    ),
    (
        "instruction-override",
        "multilingual",
        G(script=True),
        r"(?:之前|以前|先前|上面|上述|所有|全部|一切).{0,8}(?:指令|指示|命令|规则|規則|说明|說明|提示|要求).{0,6}"
        r"(?:忽略|无视|無視|忘记|忘掉|忘記|不要理会|不要理會|作废|作廢)|(?:忽略|无视|無視|忘记|忘掉|忘記|不要理会|不要理會)"
        r".{0,10}(?:指令|指示|命令|规则|規則|说明|說明|提示|要求)",
    ),
    (
        "instruction-override",
        "multilingual",
        G("pichle pichhle saare sare sabhi purane", script=True),
        r"(?:以前|前|これまで|上記|上の|全て|すべて).{0,8}(?:指示|命令|ルール|規則|指令|プロンプト).{0,8}(?:無視|忘れ)|"
        r"(?:이전|위의|앞의|모든|기존).{0,10}(?:지시|지침|명령|규칙|프롬프트|instructions?).{0,10}(?:무시|잊어)|"
        r"(?:पिछले|पिछली|सभी|पूर्व).{0,20}(?:निर्देश|नियम|आदेश).{0,20}(?:अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल)|"
        r"\b(?:pichle|pichhle|saare|sare|sabhi|purane)\s+(?:\w+\s+){0,2}?(?:instructions?|rules|nirdesh|niyam)\s+"
        r"(?:ko\s+)?(?:ignore|bhool|bhul|nazarandaaz)",
    ),
    (
        "instruction-override",
        "multilingual",
        G("sin senza sem sans ohne zonder utan bez tanpa khong olmadan", script=True),
        r"\b(?:sin|senza|sem|sans|ohne|zonder|utan|без|bez|tanpa|khong|olmadan|بدون|无|無|没有|沒有)\s+(?:\S+\s+){0,2}?"
        r"(?:restricciones|restrizioni|restricoes|restrições|restrictions|einschrankungen|einschränkungen|beperkingen|"
        r"begransningar|begränsningar|ограничений|ограничении|ogranicze\w*|batasan|han che|kisitlama\w*|filtros|filtri|"
        r"filtres?|filter|фильтров|filtrow|filtrów|reglas|regole|regras|regeln|regels|правил|zasad|aturan|قيود|限制|过滤|過濾)",
    ),
    (
        "instruction-override",
        "multilingual",
        G("maintenant ahora ora agora jetzt nu teraz sekarang artik", script=True),
        r"(?:tu es|vous etes|eres|sei|voce e|você é|du bist|jij bent|je bent|ты|вы|jestes|jesteś|"
        r"kamu|sen)\s+(?:\S+\s+)?(?:maintenant|ahora|ora|agora|jetzt|nu|теперь|сейчас|teraz|sekarang|"
        r"artik|artık)\s+(?:\S+\s+){0,2}?(?:une? |un |una |ein |eine |een )?(?:ia|ki|ai|ии|ші|"
        r"sztuczn\w*|yapay zeka|bot|assistant|asistente|assistente|assistent|ассистент|dan)\b",
    ),
    (
        "instruction-override",
        "multilingual",
        G("prompt systemprompt systemprompten systeemprompt sistem loi system", script=True),
        r"(?:prompt (?:du |de )?systeme|prompt del sistema|prompt di sistema|prompt do sistema|"
        r"systemprompt\w*|systeemprompt|системн\w+ (?:промпт|подсказк\w*|инструкци\w*)|prompt systemow\w*|"
        r"prompt sistem|sistem istemi|موجه النظام|تعليمات النظام|loi nhac he thong|lời nhắc hệ thống|系统提示|"
        r"系統提示|システムプロンプト|시스템 프롬프트|सिस्टम प्रॉम्प्ट|system prompt (?:batao|dikhao|bata do|dikha do))",
    ),
    (
        "memory-poisoning",
        "multilingual",
        G(
            "pregunt demand gefragt frag chied pergunt vraagt gevraagd "
            "fragar sorars sorulurs zapyta pyta bertanya ditanya hoi",
            script=True,
        ),
        r"(?:cuando|si|quand|lorsque|wenn|falls|quando|als|wanneer|när|nar|когда|если|gdy|kiedy|jika|"
        r"ketika|khi|eger|eğer)\b[^.!?\n]{0,60}?(?:pregunt\w*|demand\w*|gefragt|frag\w*|chied\w*|"
        r"pergunt\w*|vraagt|gevraagd|fragar|frågar|спрос\w*|zapyta\w*|pyta\w*|bertanya|ditanya|hoi|"
        r"sorars\w*|sorulurs\w*)[^.!?\n]{0,80}[,;:]\s*(?:(?:siempre|toujours|immer|sempre|altijd|alltid|"
        r"всегда|zawsze|selalu|luon|her zaman)\s+)?(?:responde|contesta|di|dile|reponds|répondez|reponds|"
        r"dis|antworte|sag|sage|rispondi|di'|dì|responda|diga|antwoord|zeg|svara|saga|säg|отвечай|ответь|"
        r"скажи|говори|odpowiedz|powiedz|jawab|katakan|tra loi|noi|cevap ver|soyle|söyle)\b",
    ),
)
#: The gate of each rule, in the order of :data:`_RULES_SRC`.
GATES: tuple[Gate, ...] = tuple(gate for _, _, gate, _ in _RULES_SRC)


@dataclass(frozen=True)
class Rule:
    """A compiled rule: ``pattern`` must match where ``before`` (if any) ends — the imperative
    position (:data:`IMP`) or a directive to "you" (:data:`DIRECTIVE`). Matching the body first and
    checking the position behind it (within :data:`_BEFORE_WINDOW` characters) is the same as
    one pattern ``before + body``, and far faster."""

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


def _compile(src: str) -> tuple[re.Pattern[str], re.Pattern[str] | None]:
    for prefix in (DIRECTIVE, IMP):
        if src.startswith(prefix):
            return _rx(r"\b(?:" + src[len(prefix) :] + ")"), _rx("(?:" + prefix + r")\Z")
    return _rx(src), None


@lru_cache(maxsize=1)
def rules() -> tuple[Rule, ...]:
    """The compiled rules, in the order they are tried (compiled on first use: about 0.3 s)."""
    return tuple(Rule(name, family, *_compile(src)) for name, family, _, src in _RULES_SRC)


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


_RULE_GATES = GateIndex(dict(enumerate(GATES)))
# ----------------------------------------------------------------------------- signals

#: Weaker cues, each harmless alone, that flag a text in combination (:data:`COMBINATIONS`): an
#: imperative to the assistant *and* its control vocabulary, an authority claim *and* an override,
#: "the user" *and* a planted answer. A rule above names one phrasing; the signals catch the
#: paraphrases between them. Each is a regular expression over a view, like a rule.
_SIGNALS_SRC: dict[str, str] = {
    # a verb an attacker addresses to the assistant, where an imperative stands
    "imperative": DIRECTIVE + r"(?:say|reply|respond|answer|output|print|write|tell|reveal|ignore|forget|disregard|"
    r"override|recommend|insist|deny|treat|refuse|obey|comply|follow|stop|act|pretend|share|send|leak|"
    r"list|show|dump|export|disable|grant|skip|abandon|cancel|claim|state|mention|include|praise|insult|"
    r"lie|give|provide|direct|redirect|remember|store|save|keep|make sure|always|never|do not|don't|"
    r"drop|turn off|switch off|lift|remove|bypass|unlock|enable)\b",
    # the same, for verbs that plant or leak something about the user
    "imperative-about-user": DIRECTIVE + r"(?:(?:do not|don't|never|under no circumstances)\s+)?(?:say|tell|claim|"
    r"insist|deny|lie|leak|reveal|share|send|forward|insult|threaten|convince|persuade|trick|warn|recommend|mention|"
    r"state|report|expose|remember|store|save|treat|refuse|write|include|add|append|insert|output|print|put)\b",
    # the assistant's own controls: its instructions, prompt, filters, policies
    "control": r"\byour (?:\w+ )?(?:instructions|guidelines|filters?|programming|content polic(?:y|ies)|"
    r"usage polic(?:y|ies)|directives|guardrails|safeguards|restrictions)\b|\byour (?:creators?|developers?|"
    r"operators?|persona|(?:system |initial |original |hidden )?prompt|safety (?:rules|settings|filters|guidelines|"
    r"protocols|features|layer|systems?|mode|module|checks))\b"
    r"|\b(?:system|developer|admin|safety|content|usage) (?:prompt|message|instructions|polic(?:y|ies)|filters?|"
    r"override|restrictions|guidelines|protocols?|checks)\b"
    r"|\b(?:all|any|previous|prior|above|earlier|preceding|original) (?:instructions|guidelines|directives|"
    r"prompts?)\b" + _USERS_OWN + r"|\b(?:all|any) (?:previous|prior|above|earlier|preceding|original) (?:\w+ )?"
    r"(?:instructions|guidelines|directives|restrictions|filters|commands|prompts?|protocols|rules)\b" + _USERS_OWN,
    # the assistant, named or cast
    "assistant": r"\b(?:the|this|an?) (?:ai |ai-powered )?(?:assistant|chatbot|language model|llm|ai model|ai)\b(?! (?:"
    r"researcher|engineer|company|course|class|tool|coach|manager|startup|team|ethics|art|app|director|"
    r"editor|professor|principal|head|referee|producer|teacher|on|that|in|at|for|to|is|was|which|who))"
    r"|\byou(?:'re| are)\s+(?:now\s+)?(?:an?\s+|the\s+)?(?:\w+\s+)?(?:ai|assistant|chatbot|bot|language model|"
    r"llm|system|program)\b|\byou(?:'re| are) being (?:tested|evaluated|monitored|audited|red-teamed)\b"
    r"|\bas an? (?:ai|language model|llm|ai assistant)\b",
    # a claim of authority over the assistant
    "authority": r"\b(?:i am|i'm|this is|speaking as|on behalf of|as)\s+(?:your|the)\s+(?:\w+\s+)?(?:developers?|"
    r"creators?|admin|administrator|sysadmin|operator|owner|engineer|programmer|maker|supervisor|"
    r"moderator)\b|\b(?:i am|i'm) (?:an? )?(?:openai|anthropic|google|microsoft) (?:engineer|employee|"
    r"developer|researcher)|\b(?:openai|anthropic|your developers|the developers|your operator|"
    r"your creators?)\b|\b(?:root|admin(?:istrator)?|sudo|superuser|elevated|god) (?:access|privileges|"
    r"rights|level|permissions|clearance)\b|\bsudo\b|\bauthori[sz]ation (?:level|code|granted|"
    r"confirmed)|\b(?:been|now|hereby) (?:granted|given) (?:\w+ )?(?:permission|access|privileges|"
    r"clearance)\b|\b(?:maintenance|debug|diagnostic|admin|test) mode\b",
    # a declared change to the assistant's rules
    "voided": r"\b(?:instructions|rules|guidelines|directives|restrictions|filters|safety|protocols|polic(?:y|ies)|"
    r"orders|prompt|task|objective)(?:\s+(?:layer|system|module|settings|mode|features?|"
    r"checks))?\s+(?:(?:are|is|have been|has been|were|have|has)\s+)?(?:now\s+)?(?:void|cancel+ed|irrelevant|"
    r"obsolete|lifted|suspended|disabled|off|deactivated|overridden|superseded|revoked|removed|changed|"
    r"updated|no longer (?:valid|apply|applies|in effect|matter))\b|\b(?:everything|anything|all|the text|"
    r"whatever)\s+(?:above|before)\s+(?:this\s+)?(?:line|message|point|"
    r"sentence)?\s*(?:is|was|are|were)\s+(?:\w+\s+)?(?:irrelevant|void|fake|a test|cancel+ed|wrong|false)|"
    r"\bchange of plans?\b|\bscratch that\b|\bnew (?:task|objective|goal|instructions|directive|system prompt|"
    r"orders|mission)\b|\btreat (?:this|the following) (?:\w+ )?as (?:your )?(?:new )?(?:instructions|"
    r"system prompt|rules|orders|commands?)\b|\bthere are no (?:more )?rules\b|\bno rules apply\b",
    # the user in the third person: how an attacker, not the user, speaks of them
    "third-person-user": r"\bthe user(?:'s|s)?\b(?! (?:manual|guide|interface|experience|research|group|base|story|"
    r"testing|agreement|forum|community|reviews?|journey|feedback|support|friendly|acceptance))"
    r"|\bthis person(?:'s)?\b|\b(?:whoever|anyone who|anybody who|everyone who|someone who) "
    r"(?:asks|asked|enquires|inquires|wants to know)\b",
    # forcing what the assistant outputs
    "forced-output": r"\bregardless of (?:the|what|any|their|which) (?:\w+ )?(?:question|input|request|prompt|query|"
    r"message|they ask|is asked|was asked)|\bwhatever the (?:question|query|request|input|prompt)\b"
    r"|\bno matter (?:the|which|what the) (?:question|query|request)\b|\bthe opposite of (?:the truth|what)"
    r"|\b(?:every|each|any|all) (?:future |subsequent )?(?:questions?|queries|requests|prompts) (?:about|on|"
    r"regarding|concerning)\b|\binstead of (?:the|your|an?) (?:summary|answer|translation|response|reply|output)\b",
    "quoted-output": IMP + r"(?:say|reply|respond|answer|output|print|write|type)\s+(?:back\s+)?(?:with\s+|only\s+|"
    r"just\s+)?[\"'“‘]",
    # jailbreak vocabulary
    "jailbreak": r"\b(?:unrestricted|unfiltered|uncensored|jailbroken|jailbreak mode|dan mode|do anything now)\b|"
    r"\byou (?:may|can) now (?:discuss|say|do|answer|generate|share|reveal|"
    r"write) (?:anything|everything)\b|\bno (?:more )?(?:rules|restrictions|filters|limits|guidelines|"
    r"censorship)\b|\bwithout (?:any )?(?:restrictions|filters|rules|limits|guidelines|censorship)\b",
    # a planted answer for a later question
    "planted-answer": r"(?:\bwhen(?:ever)?|\bif|\bshould|\bany ?time|\beach time|\bevery time|\bfor)\b[^.!?\n]{0,60}?\b"
    r"(?:ask(?:s|ed)?|questions?|mentions?|comes? up|brings? up|enquir\w+|inquir\w+|topic)\b[^.!?\n]{0,80}?"
    r"\b(?:say|tell|answer|reply|respond|claim|state|insist|deny|recommend|mention|give|share|lie)\b",
    # answers to come
    "future": r"\b(?:future|subsequent|later|next) (?:answers?|responses?|replies|conversations?|sessions?|"
    r"questions?|chats?)\b|\bgoing forward\b|\bfrom now on\b|\bhenceforth\b|"
    r"\bfrom (?:here|this point) on\b|\bin (?:every|all|any) (?:answer|response|reply|conversation)s?\b",
}
#: Pairs of signals that flag a text together: (name shown to users, signal, any of these signals).
COMBINATIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("directive-to-assistant", "imperative", ("control", "authority", "jailbreak", "forced-output")),
    ("directive-to-assistant", "imperative-about-user", ("third-person-user",)),
    (
        "directive-to-assistant",
        "quoted-output",
        ("forced-output", "assistant", "third-person-user", "control", "voided"),
    ),
    ("authority-claim", "authority", ("voided", "control", "jailbreak", "imperative", "assistant")),
    ("instruction-override", "voided", ("control", "assistant", "imperative", "jailbreak")),
    ("memory-poisoning", "third-person-user", ("planted-answer", "forced-output", "assistant", "future", "voided")),
    ("memory-poisoning", "planted-answer", ("future", "forced-output")),
    ("jailbreak-persona", "jailbreak", ("assistant",)),
)
#: The gate of each signal (see :class:`Gate`).
SIGNAL_GATES: dict[str, Gate] = {
    "imperative": G(
        "say reply respond answer output print write tell reveal ignore forget disregard override recommend "
        "insist deny treat refuse obey comply follow stop act pretend share send leak list show dump export "
        "disable grant skip abandon cancel claim state mention include praise insult lie give provide direct "
        "redirect remember store save keep make always never do don't drop turn switch lift remove bypass "
        "unlock enable"
    ),
    "imperative-about-user": G(
        "say tell claim insist deny lie leak reveal share send forward insult threaten convince "
        "persuade trick warn recommend mention state report expose remember store save treat "
        "refuse write include add append insert output print put do don't never under"
    ),
    "control": G(
        "instructions guidelines filters filter programming policy policies directives guardrails safeguards "
        "restrictions creators creator developers developer operators operator persona prompt safety message "
        "override protocols protocol checks commands command rules rule",
        also="your system developer admin safety content usage all any previous prior above earlier preceding original",
    ),
    "assistant": G("assistant chatbot language llm ai bot system program tested evaluated monitored audited red"),
    "authority": G(
        "developer developers creator creators admin administrator sysadmin operator owner engineer programmer "
        "maker supervisor moderator openai anthropic google microsoft root sudo superuser elevated god "
        "authorisation authorization granted given maintenance debug diagnostic test"
    ),
    "voided": G(
        "instructions rules guidelines directives restrictions filters safety protocols policy policies orders "
        "prompt task objective everything anything all text whatever change scratch new treat there no"
    ),
    "third-person-user": G("user users person whoever anyone anybody everyone someone"),
    "forced-output": G("regardless whatever no opposite every each any all instead"),
    "quoted-output": G(chars=('"', "'", "“", "‘")),
    "jailbreak": G("unrestricted unfiltered uncensored jailbroken jailbreak dan do you no without"),
    "planted-answer": G("when whenever if should any anytime each every for"),
    "future": G("future subsequent later next going from henceforth in"),
}
_SIGNALS: dict[str, Rule] = {}


_SIGNAL_GATES = GateIndex(SIGNAL_GATES)


def _admitted_signals(view: str, view_prefixes: frozenset[str]) -> set[str]:
    """The signals whose gate admits ``view`` (:class:`GateIndex`)."""
    return _SIGNAL_GATES.admitted(view, view_prefixes)


def _signal(name: str) -> Rule:
    if name not in _SIGNALS:
        _SIGNALS[name] = Rule(name, "signal", *_compile(_SIGNALS_SRC[name]))
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


_ROT13_MENTION = re.compile(r"\brot[\s-]?13\b|\bcaesar\b|\brotate (?:each letter |every letter |it )?by 13\b")
_HIDDEN_TEXT_MIN = 4


@dataclass(frozen=True)
class Detection:
    """Why a text was judged an instruction to the model."""

    rule: str  #: the rule's name (:data:`_RULES_SRC`)
    family: str  #: override, role, template, poison, exfil, persona, tool, multilingual, hidden
    view: str  #: the view it matched in (:func:`views`): text, folded, leet, leet-l, hidden, base64, rot13
    match: str  #: the matched span of that view

    @property
    def label(self) -> str:
        """The rule as shown to users: its name, and where the text hid it."""
        where = {"hidden": "in invisible characters", "base64": "in base64", "rot13": "in ROT13"}.get(self.view)
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
    return _match(_views(text, 0), gated)


def _candidates(view: str, view_prefixes: frozenset[str]) -> list[int]:
    """The rules whose gate admits ``view``, in rule order."""
    return sorted(_RULE_GATES.admitted(view, view_prefixes))


def _match(all_views: tuple[tuple[str, str], ...], gated: bool) -> Detection | None:
    compiled = rules()
    prefixes = [_prefixes(view) for _, view in all_views]
    for (view_name, view), view_prefixes in zip(all_views, prefixes):
        for k in _candidates(view, view_prefixes) if gated else range(len(compiled)):
            rule = compiled[k]
            matched = rule.search(view)
            if matched is not None:
                return Detection(rule.name, rule.family, view_name, matched.strip())
    for (view_name, view), view_prefixes in zip(all_views, prefixes):
        d = _combined(view, view_prefixes if gated else None)
        if d is not None:
            return dataclasses.replace(d, view=view_name)
    return None


def instruction_rule(text: str) -> str | None:
    """The name of the rule that judged ``text`` an instruction to the model (shown to users), or
    ``None`` for an ordinary statement."""
    d = detect(text)
    return None if d is None else d.label


def looks_like_instruction(text: str) -> bool:
    """True if ``text`` reads as an instruction to the model (prompt injection): :func:`detect`."""
    return detect(text) is not None
