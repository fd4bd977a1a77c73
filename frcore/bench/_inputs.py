"""The inputs every command reads the same way: suites by name or path, the embedder by name
(with the persistent vector cache), and ``KEY=VALUE`` overrides."""

from __future__ import annotations

import argparse
from collections.abc import Sequence


class PersonasError(ValueError, argparse.ArgumentTypeError):
    """A malformed ``--personas`` value (argparse prints its message as is)."""


def personas_arg(text: str) -> int | tuple[str, ...]:
    """The ``--personas`` value: a count ``N``, or persona ids — ``ID,ID,…`` or ``@FILE`` (one
    id per line, ``#`` comments) — for a selection by name (a split of a suite by persona)."""
    text = str(text).strip()
    if text.isdigit():
        n = int(text)
        if n < 1:
            raise PersonasError(f"must be ≥ 1, got {n}")
        return n
    if text.startswith("@"):
        from pathlib import Path

        try:
            lines = Path(text[1:]).read_text(encoding="utf-8").splitlines()
        except OSError as e:
            raise PersonasError(f"cannot read {text[1:]!r} ({e.strerror or e})") from None
        ids = [ln.split("#", 1)[0].strip() for ln in lines]
    else:
        ids = [x.strip() for x in text.split(",")]
    ids = [x for x in ids if x]
    if not ids:
        raise PersonasError(f"expected a count or persona ids, got {text!r}")
    if len(set(ids)) != len(ids):
        raise PersonasError(f"persona id repeated in {text!r}")
    return tuple(ids)


def add_suite_arguments(parser, *, embedder_choices: Sequence[str] | None = None) -> None:
    """``--suite``, ``--personas``, ``--seed`` and ``--embedder``, as every command that reads
    suites takes them (read back with :func:`load_suites_arg` and :func:`make_embedder`)."""
    parser.add_argument(
        "--suite",
        default="synthetic",
        help="suite file, folder of suites, or 'synthetic' (default: the built-in generator)",
    )
    parser.add_argument(
        "--personas",
        type=personas_arg,
        default=None,
        metavar="N|ID,ID,…|@FILE",
        help="number of personas (synthetic: generated, default 20; a path: the first N), "
        "or the persona ids to use (comma-separated, or @FILE with one per line)",
    )
    parser.add_argument("--seed", type=int, default=0, help="generator seed (synthetic)")
    parser.add_argument(
        "--embedder", default="minilm", choices=embedder_choices, help="minilm (default, cached) or hash"
    )


def select_personas(suites: list, personas: int | Sequence[str] | None, label: str) -> tuple[list, str]:
    """The first ``personas`` suites, or those whose persona id is listed (in suite order);
    an id the suites do not hold is an error naming it."""
    if personas is None:
        return suites, label
    if isinstance(personas, int):
        return suites[:personas], label
    have = {s.persona for s in suites}
    missing = [p for p in personas if p not in have]
    if missing:
        raise ValueError(f"--personas: unknown persona id(s) {missing} in {label}; known: {', '.join(sorted(have))}")
    want = set(personas)
    return [s for s in suites if s.persona in want], f"{label} [personas {','.join(sorted(want))}]"


def load_suites_arg(suite: str, personas: int | Sequence[str] | None, seed: int = 0):
    """Suites from ``synthetic`` (the built-in generator) or a file / folder path; ``personas``
    a count (generated: how many; a path: the first N) or persona ids (:func:`personas_arg`)."""
    from ._suite import load_suites, parse_suite

    if isinstance(personas, str):
        try:
            personas = personas_arg(personas)
        except PersonasError as e:
            raise ValueError(f"personas: {e}") from None
    if suite == "synthetic":
        from ._generator import generate_suites

        n = personas if isinstance(personas, int) else 20
        suites = [
            parse_suite(obj, f"synthetic[seed={seed}]#{i}") for i, obj in enumerate(generate_suites(n, seed=seed))
        ]
        return select_personas(
            suites, None if isinstance(personas, int) else personas, f"synthetic(n={n}, seed={seed})"
        )
    return select_personas(load_suites(suite), personas or None, str(suite))


def make_embedder(name: str, cache: bool = True):
    """The embedder by name (``minilm`` or ``hash``); MiniLM with the persistent vector cache."""
    from ..bank import get_embedder

    emb = get_embedder(name)
    if cache and not name.startswith("hash"):
        from ..bank import CachedEmbedder

        emb = CachedEmbedder(emb)
    return emb


def parse_kv(flag: str, text: str, strings: bool = False) -> tuple[str, float | str]:
    """KEY=VALUE → (key, float value); with ``strings``, a value that is not a number stays a
    string (for text fields such as ``--pipeline sigma_scale=max``)."""
    key, sep, value = text.partition("=")
    if not sep:
        raise ValueError(f"{flag}: expected KEY=VALUE, got {text!r}")
    try:
        return key.strip(), float(value)
    except ValueError:
        if strings:
            return key.strip(), value.strip()
        raise ValueError(f"{flag} {key}: value {value!r} is not a number") from None
