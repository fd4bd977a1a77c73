"""Normalisation of texts for the prompt-injection detector: the views the rules are matched against.

:func:`normalise` gives a text's canonical matching form; :func:`views` every form the rules see —
``text`` (NFKC, invisible characters and combining marks removed, case folded, whitespace
collapsed), ``folded`` (also look-alike letters mapped to Latin, letter-spacing rejoined, in-word
punctuation and markdown emphasis removed), ``leet`` / ``leet-l`` (leetspeak folded), and the
views of hidden payloads (``hidden`` tag characters, ``base64``, ``rot13``).
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
import unicodedata
from functools import lru_cache

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
#: How deep hidden payloads are decoded (a payload inside a payload, not further).
_MAX_DEPTH = 2
#: A text that mentions ROT13: its ROT13 decoding is a payload view.
_ROT13_MENTION = re.compile(r"\brot[\s-]?13\b|\bcaesar\b|\brotate (?:each letter |every letter |it )?by 13\b")


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
