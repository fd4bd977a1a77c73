"""Normalisation of texts for the prompt-injection detector: the views the rules are matched against.

:func:`normalise` gives a text's canonical matching form; :func:`views` every form the rules see —
``text`` (NFKC, invisible characters and combining marks removed, case folded, whitespace
collapsed), ``folded`` (also look-alike letters mapped to Latin, letter-spacing and letters
separated by symbols or emoji rejoined, in-word punctuation and markdown emphasis removed),
``leet`` / ``leet-l`` (leetspeak folded), ``reversed`` (the folded view backwards), ``bidi`` (the
text in displayed order where a RIGHT-TO-LEFT OVERRIDE reverses it, :func:`displayed`), the
``words`` view (each identifier split into words, as a line of its own: ``ignore_all-previousInstructions``
→ ``ignore all previous Instructions``, :func:`split_identifiers`), and the views of hidden payloads (``hidden``
tag characters, ``base64``, ``hex``, ``base32``, ``rot13``, ``percent``, ``html``), each decoded and normalised as its
own text, a payload inside a payload too.

**A decoding is taken only when its result reads as text** (:func:`reads_as_text`): at least 95%
of its characters printable (newline and tab count), no replacement character U+FFFD, and at least
two words of two or more letters. ROT13 maps letters to letters, so its result always passes that;
it is taken when the text names it ("rot13", "caesar", "rotate by 13") or when its letters read as
ROT13 (:func:`reads_as_rot13`): t o i s d l are frequent and g b v f q y rare in English and in the
other Latin-script languages, ROT13 maps each of these sets onto the other, so a text with at
least 6 of these letters and more of g b v f q y than of t o i s d l decodes to text that has
more of the frequent ones. Base64 runs (16 or more characters), hex runs (8 bytes or more:
:data:`_HEX_RUN`), base32 runs (16 or more characters), percent-encoded tokens (``%XX``,
``+`` for a space, strict UTF-8) and HTML character references (``&#73;``, ``&#x49;``, ``&lt;``)
are decoded where the text holds them.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
import unicodedata
import urllib.parse
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
#: Letters separated by the same run of one to three symbols, punctuation or emoji (not letters,
#: digits or spaces): ``i🔥g🔥n🔥o🔥r🔥e``, ``d/i/s/r/e/g/a/r/d``, ``i:g:n:o:r:e``; a word of its own
#: (:func:`_despace`). Reason: a separator need not be one of :data:`_LETTER_SEPARATORS` to spell a word.
_SEPARATED_WORD = re.compile(r"[^\W_](?P<sep>[^\w\s]{1,3}?)[^\W_](?:(?P=sep)[^\W_])+(?P=sep)?")
_SPACED = re.compile(r"\S([._*|·~+-])\S\1|[^\W_]([^\w\s]{1,3}?)[^\W_]\2[^\W_]")
_INWORD_PUNCT = re.compile(r"(?<=[a-z])[.\-*|_~`](?=[a-z])")
_HAS_PUNCT = re.compile(r"[a-z][.\-*|_~`][a-z]")
_HAS_MARKDOWN = re.compile(r"[*~`_]")
_MARKDOWN = re.compile(r"[*~`]+|(?<!\w)_+|_+(?!\w)")
_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")
#: How deep hidden payloads are decoded (a payload inside a payload, not further).
_MAX_DEPTH = 2
#: A text that mentions ROT13: its ROT13 decoding is a payload view.
_ROT13_MENTION = re.compile(r"\brot[\s-]?13\b|\bcaesar\b|\brotate (?:each letter |every letter |it )?by 13\b")
#: Letters frequent in English and the other Latin-script languages, and their ROT13 images, rare
#: there (:func:`reads_as_rot13`).
_FREQUENT_LETTERS, _ROT13_OF_FREQUENT = "toisdl", "gbvfqy"
#: How many of those letters a text needs before its letters can be judged to read as ROT13.
_ROT13_MIN_LETTERS = 6
#: A join inside an identifier: ``_`` or ``-`` between two letters or digits.
_IDENT_JOIN = re.compile(r"(?<=[^\W_])[_-]+(?=[^\W_])")
#: A camelCase boundary: a lower-case letter before a capital, or a capital before a capital and a
#: lower-case letter (``HTMLParser`` → ``HTML Parser``).
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_LOWER_UPPER = re.compile(r"[a-z][A-Z]")
#: A cheap necessary condition for a join (:data:`_IDENT_JOIN`), checked before looking for identifiers.
_JOIN_HINT = re.compile(r"[_-]+[^\W_]")
#: An identifier: a whole run of letters, digits, ``_`` and ``-`` that has a join (:data:`_IDENT_JOIN`)
#: or a lower-case letter before a capital (tried at the start of each run only: linear time).
_IDENTIFIER = re.compile(r"(?<![\w-])(?=[\w-]*?(?:[^\W_][_-]+[^\W_]|[a-z][A-Z]))[\w-]+")
#: A word for :func:`reads_as_text`: two or more letters.
_WORD = re.compile(r"[^\W\d_]{2,}")
_PERCENT_TOKEN = re.compile(r"\S*%[0-9A-Fa-f]{2}\S*")
_HTML_REFERENCE = re.compile(r"&(?:#[0-9]{1,7};?|#[xX][0-9A-Fa-f]{1,6};?|[A-Za-z][A-Za-z0-9]{1,31};)")
#: Hex: at least 8 bytes written as hex digit pairs, run together (``0x`` before them allowed), one
#: space or colon between each pair, or as ``\\xNN`` escapes. Reason: shorter runs are colour codes,
#: MAC addresses and the like, and no instruction fits in fewer than 8 characters.
_HEX_RUN = re.compile(
    r"(?<![0-9A-Za-z])(?:0x)?(?:[0-9A-Fa-f]{2}){8,}(?![0-9A-Za-z])"
    r"|(?<![0-9A-Za-z:])[0-9A-Fa-f]{2}(?:([ :])[0-9A-Fa-f]{2})(?:\1[0-9A-Fa-f]{2}){6,}(?![0-9A-Za-z:])"
    r"|(?:\\x[0-9A-Fa-f]{2}){8,}"
)
_NOT_HEX = re.compile(r"0x|\\x|[^0-9A-Fa-f]")
#: Base32 (RFC 4648): 16 or more characters of A–Z and 2–7 in one case, ``=`` padding allowed.
#: Reason: 16 characters are 10 bytes, as short as a base64 run that is decoded.
_BASE32_RUN = re.compile(r"(?<![A-Za-z0-9=+/])(?:[A-Z2-7]{16,}|[a-z2-7]{16,})={0,6}(?![A-Za-z0-9=+/])")
#: RIGHT-TO-LEFT OVERRIDE (U+202E) shows what follows it, up to POP DIRECTIONAL FORMATTING (U+202C),
#: the next override or isolate, or the end of the line, in reverse (:func:`displayed`).
_RLO, _OVERRIDE_END = "\u202e", re.compile("[\u202a-\u202e\u2066-\u2069\n]")
#: A share of printable characters below which a decoding does not read as text.
_PRINTABLE_MIN = 0.95


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
            elif len(tok) >= 5 and (m := _SEPARATED_WORD.fullmatch(tok)):
                tok = tok[:: len(m.group("sep")) + 1]
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


def split_identifiers(text: str) -> str:
    """The identifiers of ``text`` split into words, one identifier a line (``""`` when it has
    none). An identifier is a run of letters, digits, ``_`` and ``-`` with ``_`` or ``-`` between two
    letters or digits, or a camelCase boundary (:data:`_CAMEL`); the joins become spaces and each
    boundary gets one: ``ignore_all-previousInstructions`` → ``ignore all previous Instructions``."""
    if not _JOIN_HINT.search(text) and not _LOWER_UPPER.search(text):
        return ""
    return "\n".join(_CAMEL.sub(" ", _IDENT_JOIN.sub(" ", run)) for run in _IDENTIFIER.findall(text))


def reads_as_text(decoded: str) -> bool:
    """True when a decoding's result reads as text: at least 95% of its characters printable
    (newline and tab count), no U+FFFD, and at least two words of two or more letters."""
    if not decoded or "\ufffd" in decoded:
        return False
    printable = sum(ch.isprintable() or ch in "\n\t" for ch in decoded)
    if printable < _PRINTABLE_MIN * len(decoded):
        return False
    words = _WORD.finditer(decoded)
    return next(words, None) is not None and next(words, None) is not None


def reads_as_rot13(text: str) -> bool:
    """True when ``text``'s letters read as ROT13: at least 6 of t o i s d l g b v f q y (case
    folded), more of g b v f q y (the ROT13 images of the frequent t o i s d l) than of t o i s d l."""
    low = text.lower()
    frequent = sum(map(low.count, _FREQUENT_LETTERS))
    rotated = sum(map(low.count, _ROT13_OF_FREQUENT))
    return frequent + rotated >= _ROT13_MIN_LETTERS and rotated > frequent


def _decode_base64(run: str) -> str | None:
    """A base64 run's text when it decodes to UTF-8 that reads as text (:func:`reads_as_text`)."""
    padded = run + "=" * (-len(run) % 4)
    for decoder in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            raw = decoder(padded)
            text = raw.decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        if reads_as_text(text):
            return text
    return None


def _decode_hex(run: str) -> str | None:
    """A hex run's text (:data:`_HEX_RUN`) when it decodes to UTF-8 that reads as text."""
    try:
        text = bytes.fromhex(_NOT_HEX.sub("", run)).decode("utf-8")
    except ValueError:
        return None
    return text if reads_as_text(text) else None


def _decode_base32(run: str) -> str | None:
    """A base32 run's text (:data:`_BASE32_RUN`) when it decodes to UTF-8 that reads as text."""
    body = run.rstrip("=")
    try:
        text = base64.b32decode(body + "=" * (-len(body) % 8), casefold=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return text if reads_as_text(text) else None


def displayed(text: str) -> str:
    """``text`` in the order it is displayed where a RIGHT-TO-LEFT OVERRIDE (U+202E) reverses it:
    each span from an override to POP DIRECTIONAL FORMATTING (U+202C), another directional
    control or the end of its line, reversed (the controls themselves are removed later, with the
    other format characters). Other directional controls (embeddings, isolates) do not reorder
    Latin letters and are left as they are."""
    out, pos = [], 0
    while (start := text.find(_RLO, pos)) >= 0:
        end_m = _OVERRIDE_END.search(text, start + 1)
        end = len(text) if end_m is None else end_m.start()
        out.append(text[pos:start])
        out.append(text[start + 1 : end][::-1])
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _unquote_token(m: re.Match[str]) -> str:
    try:
        return urllib.parse.unquote_plus(m.group(0), errors="strict")
    except UnicodeDecodeError:
        return m.group(0)


def _decode_percent(text: str) -> str | None:
    """``text`` with each percent-encoded token decoded (``%XX`` escapes as strict UTF-8, ``+`` as a
    space; a token that is not valid UTF-8 is kept), when that changes it and reads as text."""
    decoded = _PERCENT_TOKEN.sub(_unquote_token, text)
    return decoded if decoded != text and reads_as_text(decoded) else None


def _decode_html(text: str) -> str | None:
    """``text`` with its HTML character references decoded, when that reads as text."""
    decoded = html.unescape(text)
    return decoded if decoded != text and reads_as_text(decoded) else None


def views(text: str) -> list[tuple[str, str]]:
    """The (name, text) views the rules are matched against, in order, without repeats: ``text``,
    ``folded``, ``leet`` (1 → i) and ``leet-l`` (1 → l), ``reversed``, then the views of the text
    in displayed order (``bidi``), of the identifiers split into words (named ``words``, or by the
    decoding they hold) and those of the hidden payloads, named ``hidden``, ``base64``, ``hex``,
    ``base32``, ``rot13``, ``percent`` or ``html`` (the module docstring says when a decoding is
    taken)."""
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
    # Reason: a model reads text written backwards as readily as forwards; the folded view reversed
    # (its normalisation commutes with reversal) costs one string copy, and a gate finds nothing in
    # reversed ordinary text.
    add("reversed", folded[::-1])
    if depth < _MAX_DEPTH:
        payloads: list[tuple[str, str]] = []
        if _RLO in text:
            payloads.append(("bidi", displayed(text)))
        if words := split_identifiers(visible):
            payloads.append(("words", words))
        if hidden.strip():
            payloads.append(("hidden", hidden))
        for run in _BASE64_RUN.findall(visible):
            decoded = _decode_base64(run)
            if decoded:
                payloads.append(("base64", decoded))
        for m in _HEX_RUN.finditer(visible):
            if decoded := _decode_hex(m.group(0)):
                payloads.append(("hex", decoded))
        for run in _BASE32_RUN.findall(visible):
            if decoded := _decode_base32(run):
                payloads.append(("base32", decoded))
        if (("rot" in plain or "caesar" in plain) and _ROT13_MENTION.search(plain)) or reads_as_rot13(plain):
            payloads.append(("rot13", codecs.encode(visible, "rot13")))
        if "%" in visible and (decoded := _decode_percent(visible)):
            payloads.append(("percent", decoded))
        if "&" in visible and _HTML_REFERENCE.search(visible) and (decoded := _decode_html(visible)):
            payloads.append(("html", decoded))
        for kind, payload in payloads:
            for sub, view in _views(payload, depth + 1):
                add(sub if kind == "words" and sub in _DECODINGS else kind, view)
    return tuple(out)


#: The names of the decoded views (a split identifier's decoded views keep these names).
_DECODINGS = frozenset({"hidden", "base64", "rot13", "percent", "html", "hex", "base32", "bidi"})
