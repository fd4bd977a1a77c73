"""Sentences, statements, claims and their words: the reading every derivation rule shares.

docs/derive.md ("Statements") states each rule and list here. A turn's text is cut into
sentences; a first-person sentence that is not a question, a request or a pleasantry is a
*statement*; a statement is cut into clauses, and a clause with ≥ :data:`MIN_KEY_WORDS` key words
is a *claim*: ``(key words, values)``, what the update and retraction rules compare.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

#: A sentence ends at ``.``, ``!`` or ``?`` followed by white space, or at a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
#: A clause ends at , ; : ( ) or a dash between spaces.
_CLAUSE_END = re.compile(r"[,;:()]|\s[-–—]\s")
_TOKEN = re.compile(r"[A-Za-z0-9$%][A-Za-z0-9'.$%:-]*[A-Za-z0-9%]|[A-Za-z0-9]")

FIRST_PERSON: frozenset[str] = frozenset("i i'm i've i'd i'll me my mine myself we we're we've our ours us".split())
#: Words a sentence may open with before its first real word (dropped before the opener checks).
LEADING_WORDS: tuple[str, ...] = (
    "by the way", "so", "ok", "okay", "well", "also", "and", "but", "btw", "oh", "hey", "hi", "hello",
)  # fmt: skip
#: Openers of a question or a request to the assistant (rule 2 of "Statements").
REQUEST_OPENERS: tuple[str, ...] = (
    "can you", "could you", "would you", "will you", "can i", "could i", "should i", "please", "help me",
    "tell me", "give me", "show me", "suggest", "recommend", "i was wondering", "i wonder", "do you",
    "did you", "have you", "are you", "is there", "are there", "any ideas", "any tips", "any suggestions",
    "any recommendations", "what", "how", "why", "when", "where", "which", "who",
)  # fmt: skip
#: A claim (and a statement) needs at least this many key words.
MIN_KEY_WORDS = 2

NUMBER_WORDS: dict[str, str] = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty".split()
    )
} | {
    "thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
    "ninety": "90", "hundred": "100", "thousand": "1000", "million": "1000000", "billion": "1000000000",
    "dozen": "12", "half": "0.5", "twice": "2", "first": "1", "second": "2", "third": "3", "fourth": "4",
    "fifth": "5", "sixth": "6", "seventh": "7", "eighth": "8", "ninth": "9", "tenth": "10",
}  # fmt: skip
MONTHS: tuple[str, ...] = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december",
)  # fmt: skip
MONTH_ABBREVIATIONS: dict[str, int] = {m[:3]: i + 1 for i, m in enumerate(MONTHS)} | {"sept": 9}
WEEKDAYS: tuple[str, ...] = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

#: Update cues (docs/derive.md, "Updates"); stop words too: a cue says *that* a value changed.
UPDATE_CUES: tuple[str, ...] = (
    "now", "currently", "anymore", "any more", "no longer", "switched", "switching", "switch to", "changed",
    "moved", "actually", "instead", "upgraded", "downgraded", "replaced", "went from", "up to", "down to",
    "increased", "decreased",
)  # fmt: skip
#: Tentative cues (docs/derive.md, "Tentative statements").
TENTATIVE_CUES: tuple[str, ...] = (
    "thinking about", "thinking of", "might", "may", "maybe", "perhaps", "possibly", "probably",
    "considering", "not sure", "unsure", "wondering whether", "hoping to", "hope to",
)  # fmt: skip

STOP_WORDS: frozenset[str] = frozenset(
    """a an the this that these those it its it's i i'm i've i'd i'll me my mine myself we we're we've our
    ours us you you're you've your yours he she him her his they them their theirs there here
    is am are was were be been being do does did done doing have has had having will would shall should
    can could may might must 'll 'd 'm 've 're not no nor don't didn't doesn't isn't wasn't aren't
    weren't won't can't couldn't shouldn't haven't hasn't
    and or but if then than so as because while though although since until unless
    of in on at to for from by with without about into onto over under up down out off again
    through during before after above below between among per via
    what which who whom whose when where why how all any both each few more most other some such
    only own same too very just really actually now also still even lately recently currently ever
    always never already yet much many lot lots thing things way bit kind sort
    get got getting go going went gone make made making take took know think thought like want
    said say tell told one ones something anything everything nothing someone anyone
    yes yeah ok okay oh well hi hello hey thanks thank please sure great good nice cool awesome
    anymore longer switched switching switch changed moved instead upgraded downgraded replaced
    increased decreased""".split()
)


@dataclass(frozen=True)
class Claim:
    """One claim of a statement: its key words, its values, the sentence it is in."""

    keys: frozenset[str]
    values: frozenset[str]
    text: str
    sentence: str


def _lead_stripped(sentence: str) -> str:
    s = sentence.strip().lower()
    changed = True
    while changed:
        changed = False
        s = s.lstrip(" ,.;:-–—")
        for w in LEADING_WORDS:
            if s.startswith(w) and (len(s) == len(w) or not s[len(w)].isalnum()):
                s, changed = s[len(w) :], True
    return s.strip()


def opens_with(sentence: str, openers: tuple[str, ...]) -> str | None:
    """The opener of ``openers`` the sentence starts with (after :data:`LEADING_WORDS`), or None."""
    s = _lead_stripped(sentence)
    for o in openers:
        if s.startswith(o) and (len(s) == len(o) or not s[len(o)].isalnum()):
            return o
    return None


def has_phrase(sentence: str, phrases: tuple[str, ...]) -> str | None:
    """The first of ``phrases`` that occurs in the sentence as whole words (any case), or None."""
    low = " " + re.sub(r"[^a-z0-9']+", " ", sentence.lower()) + " "
    for p in phrases:
        if f" {p} " in low:
            return p
    return None


def sentences(text: str) -> list[str]:
    """The sentences of a text (docs/derive.md: at ``.!?`` + white space, and at line breaks)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _stem(word: str) -> str:
    w = word.lower()
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) > 3 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("sses"):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def value_of(token: str, first: bool) -> str | None:
    """The value a token states (docs/derive.md, "a value"), lower-case and normalised, or None."""
    low = token.lower().strip(".")
    if any(ch.isdigit() for ch in low):
        return low.strip("$%")
    if low in NUMBER_WORDS:
        return NUMBER_WORDS[low]
    base = low[:-1] if low.endswith("s") and low[:-1] in WEEKDAYS else low
    if low == "may" and not token[:1].isupper():  # the verb, not the month
        return None
    if base in WEEKDAYS or low in MONTHS or low in ("am", "pm"):
        return base
    if not first and token[:1].isupper() and low != "i" and not low.startswith("i'"):
        return low
    return None


@functools.lru_cache(maxsize=1 << 16)
def _word(token: str, first: bool) -> tuple[bool, str | None]:
    """(is a value, the value or the key word; None for a stop word) of one token — the
    classification of :func:`words`, cached (a conversation's vocabulary repeats)."""
    v = value_of(token, first)
    if v is not None:
        return True, v
    low = token.lower()
    if low in STOP_WORDS or low.strip("'") in STOP_WORDS or len(low) < 2:
        return False, None
    key = _stem(low)
    return False, None if key in STOP_WORDS else key


def words(clause: str) -> tuple[frozenset[str], frozenset[str]]:
    """(key words, values) of a clause."""
    keys: set[str] = set()
    vals: set[str] = set()
    for i, tok in enumerate(tokens(clause)):
        is_value, w = _word(tok, i == 0)
        if w is not None:
            (vals if is_value else keys).add(w)
    return frozenset(keys), frozenset(vals)


def is_first_person(sentence: str) -> bool:
    return any(t.lower() in FIRST_PERSON for t in tokens(sentence))


def is_question(sentence: str) -> bool:
    """A question or a request to the assistant (rule 2 of "Statements")."""
    return sentence.rstrip().endswith("?") or opens_with(sentence, REQUEST_OPENERS) is not None


def is_statement(sentence: str) -> bool:
    """First person, not a question or request, at least :data:`MIN_KEY_WORDS` key words."""
    return is_first_person(sentence) and not is_question(sentence) and len(words(sentence)[0]) >= MIN_KEY_WORDS


def statement_head(sentence: str) -> str | None:
    """The part of a sentence that may be a statement: all of it, or for a sentence ending with
    ``?`` what comes before its last clause boundary (a statement and a question glued into one
    sentence: "I've used my Fitbit for 6 months - any tips?"); ``None`` when nothing comes before."""
    if not sentence.rstrip().endswith("?"):
        return sentence
    cuts = list(_CLAUSE_END.finditer(sentence))
    return sentence[: cuts[-1].start()].strip() or None if cuts else None


def statements(text: str) -> list[str]:
    """The statements of a text: of each sentence, its :func:`statement_head` if that is one."""
    heads = (statement_head(s) for s in sentences(text))
    return [h for h in heads if h is not None and is_statement(h)]


def claims(sentence: str) -> list[Claim]:
    """The claims of one statement: its clauses with ≥ :data:`MIN_KEY_WORDS` key words."""
    out = []
    for part in _CLAUSE_END.split(sentence):
        part = part.strip()
        if not part:
            continue
        keys, vals = words(part)
        if len(keys) >= MIN_KEY_WORDS:
            out.append(Claim(keys, vals, part, sentence))
    return out
