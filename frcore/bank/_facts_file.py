"""Facts files as ``fr bank add`` reads them (docs/formats.md: JSON, JSONL, a suite file, or
standard input ``-``): bounded (at most :data:`MAX_INPUT_BYTES`, read in chunks and refused as
soon as a stream passes it; JSON nested at most :data:`MAX_JSON_DEPTH` levels), every refusal
one line naming the file."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

from .._shown import shown


class _Obj(dict):
    """A JSON object as read by :func:`load_facts`: a dict that remembers repeated keys."""

    __slots__ = ("dups",)

    def __init__(self) -> None:
        super().__init__()
        self.dups: list[str] = []


def _object(pairs) -> _Obj:
    d = _Obj()
    for k, v in pairs:
        if k in d:
            d.dups.append(k)
        d[k] = v
    return d


#: the most bytes ``fr bank add`` reads from a facts file or standard input (``--max-bytes`` raises it)
MAX_INPUT_BYTES = 256 * 2**20
#: the deepest nesting of JSON arrays and objects a facts file may have (a fact's link list is 5 deep in a suite file)
MAX_JSON_DEPTH = 64
#: the facts-file argument that reads standard input
STDIN = "-"
#: how standard input is named in messages
STDIN_NAME = "standard input"
#: bytes read at a time: never more than the limit plus one chunk is held
_CHUNK = 2**20


class _ExtraData(ValueError):
    """The text holds more than one JSON value (JSONL read as JSON)."""


def _too_deep(value, limit: int) -> bool:
    """Whether parsed JSON ``value`` nests arrays and objects more than ``limit`` levels deep."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        children = v.values() if isinstance(v, dict) else v
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def _loads(text: str, where: str):
    """One JSON value, with repeated keys remembered (:class:`_Obj`) and at most
    :data:`MAX_JSON_DEPTH` levels of arrays and objects; else a :class:`ValueError` naming ``where``."""
    too_deep = (
        f"{where}: invalid JSON (nested too deeply to read): more than {MAX_JSON_DEPTH} levels of arrays and objects"
    )
    try:
        value = json.loads(text, object_pairs_hook=_object)
    except json.JSONDecodeError as e:
        error = _ExtraData if e.msg == "Extra data" else ValueError
        raise error(f"{where}: invalid JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    except RecursionError:
        raise ValueError(too_deep) from None
    except ValueError as e:  # e.g. an integer literal beyond Python's int-to-str digit limit
        raise ValueError(f"{where}: invalid JSON ({e})") from None
    if isinstance(value, (dict, list)) and _too_deep(value, MAX_JSON_DEPTH):
        raise ValueError(too_deep)
    return value


def _check_fact_keys(fact, label: str) -> None:
    """A repeated key in a fact (or in its categories / links) is an error naming it."""
    if not isinstance(fact, _Obj):
        return
    fid = shown(fact.get("id"))
    if fact.dups:
        raise ValueError(
            f"{label}: fact {fid}: field {shown(fact.dups[0])}: given twice in the object (duplicate JSON key)"
        )
    for key in ("categories", "links"):
        inner = fact.get(key)
        if isinstance(inner, _Obj) and inner.dups:
            raise ValueError(
                f"{label}: fact {fid}: field {key!r}: key {shown(inner.dups[0])} given twice (duplicate JSON key)"
            )


def _too_large(what: str, limit: int, size: int | None = None) -> ValueError:
    """The one line for input over ``limit`` bytes (``size``, when known without reading it)."""
    given = "more than" if size is None else f"{size:,} bytes, more than"
    unread = "" if size is None else "; it was not read"
    return ValueError(
        f"{what}: {given} the input limit of {limit:,} bytes{unread}; nothing was added "
        "(--max-bytes N raises the limit)"
    )


def _read_capped(stream, what: str, limit: int) -> bytearray:
    """The bytes of ``stream`` to its end, read :data:`_CHUNK` at a time and refused as soon as
    they exceed ``limit`` (a device or pipe without end, ``/dev/zero``, is never read past it)."""
    data = bytearray()
    while True:
        try:
            chunk = stream.read(min(_CHUNK, limit + 1 - len(data)))
        except OSError as e:
            raise ValueError(f"{what} cannot be read ({e.strerror or e})") from None
        if not chunk:
            return data
        data += chunk
        if len(data) > limit:
            raise _too_large(what, limit)


def _read_text(path: str, limit: int) -> str:
    """The text of the facts file ``path`` (:data:`STDIN`: standard input), UTF-8 (a BOM
    skipped), of at most ``limit`` bytes; a :class:`ValueError` naming it otherwise (a regular
    file over the limit is refused by its size, unread)."""
    if path == STDIN:
        what = STDIN_NAME
        data = _read_capped(getattr(sys.stdin, "buffer", sys.stdin), what, limit)
    else:
        what = f"facts file {path}"
        try:
            fh = open(path, "rb")
        except FileNotFoundError:
            raise ValueError(f"{what} cannot be read: it does not exist") from None
        except IsADirectoryError:
            raise ValueError(f"{what} cannot be read: it is a directory") from None
        except OSError as e:
            raise ValueError(f"{what} cannot be read ({e.strerror or e})") from None
        with fh:
            st = os.fstat(fh.fileno())
            if stat.S_ISDIR(st.st_mode):
                raise ValueError(f"{what} cannot be read: it is a directory")
            if stat.S_ISREG(st.st_mode) and st.st_size > limit:
                raise _too_large(what, limit, st.st_size)
            data = _read_capped(fh, what, limit)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path if path != STDIN else what}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def _jsonl(text: str, name: str) -> tuple[list, list[str]]:
    out, labels = [], []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            label = f"{name}: line {n}"
            obj = _loads(line, label)
            _check_fact_keys(obj, label)
            out.append(obj)
            labels.append(label)
    return out, labels


def load_facts(path: str | Path, max_bytes: int = MAX_INPUT_BYTES) -> tuple[list, list[str]]:
    """Facts from a JSON list, a JSONL file (suffix ``.jsonl``), or a suite file (its
    ``facts``), with a label per fact for error messages (``FILE: facts[i]`` or ``FILE: line n``).
    ``path`` :data:`STDIN` (``-``) reads standard input: a JSON list or a suite file, else
    (a text holding more than one JSON value, or one object without ``facts``) JSONL.

    At most ``max_bytes`` are read (refused before reading past them) and JSON nests at most
    :data:`MAX_JSON_DEPTH` levels. A suite's other keys (``role`` in particular) are passed
    through untouched; the bank ignores every key it does not know. A file that cannot be read
    or is too large, invalid JSON, a repeated key, ``facts`` that is not a list, or nesting too
    deep raise :class:`ValueError` naming the file (and the fact).
    """
    stdin = str(path) == STDIN
    name = STDIN_NAME if stdin else str(path)
    text = _read_text(STDIN if stdin else str(path), max_bytes)
    if not stdin and Path(path).suffix == ".jsonl":
        return _jsonl(text, name)
    try:
        obj = _loads(text, name)
    except _ExtraData:
        if stdin:
            return _jsonl(text, name)
        raise
    if stdin and isinstance(obj, dict) and "facts" not in obj:
        return _jsonl(text, name)
    if isinstance(obj, dict):
        if isinstance(obj, _Obj) and obj.dups:
            raise ValueError(
                f"{name}: key {shown(obj.dups[0])} given twice in the top-level object (duplicate JSON key)"
            )
        if "facts" not in obj:
            raise ValueError(f"{name}: expected a JSON list of facts, JSONL, or a suite file with 'facts'")
        facts = obj["facts"]
        if not isinstance(facts, list):
            raise ValueError(
                f"{name}: field 'facts': expected a list of fact objects, got "
                f"{type(facts).__name__ if facts is not None else 'null'}"
            )
    elif isinstance(obj, list):
        facts = obj
    else:
        raise ValueError(
            f"{name}: expected a JSON list of facts, JSONL, or a suite file with 'facts'; got {type(obj).__name__}"
        )
    labels = [f"{name}: facts[{i}]" for i in range(len(facts))]
    for f, label in zip(facts, labels):
        _check_fact_keys(f, label)
    return facts, labels


def read_facts(path: str | Path) -> list:
    """The facts of :func:`load_facts` (without their labels)."""
    return load_facts(path)[0]
