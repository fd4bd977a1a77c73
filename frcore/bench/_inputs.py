"""The inputs every command reads the same way: suites by name or path, the embedder by name
(with the persistent vector cache), and ``KEY=VALUE`` overrides."""

from __future__ import annotations


def load_suites_arg(suite: str, personas: int | None, seed: int = 0):
    """Suites from ``synthetic`` (the built-in generator) or a file / folder path."""
    from ._suite import load_suites, parse_suite

    if suite == "synthetic":
        from ._generator import generate_suites

        n = personas or 20
        return [parse_suite(obj, f"synthetic[seed={seed}]#{i}") for i, obj in enumerate(generate_suites(n, seed=seed))], f"synthetic(n={n}, seed={seed})"
    suites = load_suites(suite)
    if personas:
        suites = suites[:personas]
    return suites, str(suite)


def make_embedder(name: str, cache: bool = True):
    """The embedder by name (``minilm`` or ``hash``); MiniLM with the persistent vector cache."""
    from ..bank._embed import get_embedder

    emb = get_embedder(name)
    if cache and not name.startswith("hash"):
        from ..bank._cache import CachedEmbedder

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
