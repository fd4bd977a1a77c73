"""The parameter file ``frcore-params-v1`` and ``NAME=VALUE`` overrides of :class:`LifecycleParams`.

One format, read and written here (the core's own pytree is core I/O): a JSON object

    {"format": "frcore-params-v1", "params": {LEAF: value, ...}, "certificate": {...}, "provenance": {...}}

where ``params`` holds every leaf of :class:`LifecycleParams` by name (per-category leaves as
lists of 11 numbers in table order, ``clocks`` as 11 rows of 3), ``certificate`` (what produced
the values, e.g. ``fr calibrate``'s margin) and ``provenance`` (command, suite, revision) are
optional objects kept as they are. Validation happens at the boundary: every error is a
:class:`ParamsError` (a ``ValueError``) whose one-line message names the file and the field.

Overrides name one value of the pytree (docs/formats.md, "Overrides"):

* ``NAME=V`` — a scalar leaf (``global_alpha=0.2``, ``numeric_exempt_weight=1``);
* ``GROUP.CATEGORY=V`` — one category of a per-category leaf, ``GROUP`` one of ``rate``,
  ``alpha``, ``floor``, ``cognitive_rate`` (or the leaf names ``rates``, ``floors``,
  ``cognitive_rates``); ``CATEGORY`` a category name (any case) or ``*`` for every category;
* ``clock.CATEGORY=A/S/C`` — a category's whole clock row (absolute / inter-session /
  conversational sensitivities, summing to 1);
* ``clock.KIND.CATEGORY=V`` — one sensitivity (``KIND`` one of ``abs``, ``session``, ``conv``);
  the other two of the row are rescaled in proportion so that it still sums to 1.

Overrides apply in order, on top of a base (the default parameters or a file).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ._ontology import CATEGORY_NAMES, N_CATEGORIES
from ._params import (
    CATEGORY_LEAVES,
    CLOCK_KINDS,
    LifecycleParams,
    ParamsError,
    _fmt,
    check_leaves,
    default_params,
    validate_params,
)
from ._shown import shown

#: The ``format`` tag of a parameter file.
PARAMS_FORMAT = "frcore-params-v1"
#: Top-level keys a parameter file may hold (``format`` and ``params`` are required).
FILE_KEYS = ("format", "params", "certificate", "provenance")

#: Override group (singular or leaf name) → leaf.
GROUPS = {**{g: leaf for leaf, g in CATEGORY_LEAVES.items()}, **{leaf: leaf for leaf in CATEGORY_LEAVES}}
#: Scalar leaves (settable as ``NAME=V``).
SCALAR_LEAVES = tuple(n for n in LifecycleParams._fields if n not in CATEGORY_LEAVES and n != "clocks")


# ----------------------------------------------------------------------------- validation


def _category(name: str, field: str, source: str | None) -> list[int]:
    if name == "*":
        return list(range(N_CATEGORIES))
    up = name.strip().upper()
    if up not in CATEGORY_NAMES:
        raise ParamsError(
            field, f"unknown category {shown(name)}; expected one of {', '.join(CATEGORY_NAMES)} or *", source
        )
    return [CATEGORY_NAMES.index(up)]


def _entry(leaf: str | None, depth: int, i: int) -> str:
    """The name of item ``i`` at nesting ``depth`` (1: outer list) of leaf ``leaf`` in a file: a
    category by name (``.OTHER``), a clock by kind (``.conv``); ``[i]`` past the table or in
    another leaf (whose shape is then wrong)."""
    per_category = leaf in CATEGORY_LEAVES or leaf == "clocks"
    if depth == 1 and per_category and i < N_CATEGORIES:
        return "." + CATEGORY_NAMES[i]
    if depth == 2 and leaf == "clocks" and i < len(CLOCK_KINDS):
        return "." + CLOCK_KINDS[i]
    return f"[{i}]"


def _numeric(value: Any, field: str, source: str | None, leaf: str | None = None) -> np.ndarray:
    """A JSON number or (nested) list of numbers → float64 array; booleans, strings and nulls
    are rejected by name (a category's value by the category's name: ``params.rates.OTHER``)."""

    def walk(x, path, depth=0):
        if isinstance(x, bool) or x is None or isinstance(x, (str, dict)):
            raise ParamsError(path, f"expected a number, got {shown(x)}", source)
        if isinstance(x, (list, tuple)):
            return [walk(y, path + _entry(leaf, depth + 1, i), depth + 1) for i, y in enumerate(x)]
        if not isinstance(x, (int, float)):
            raise ParamsError(path, f"expected a number, got {type(x).__name__}", source)
        return float(x)

    try:
        return np.asarray(walk(value, field), dtype=np.float64)
    except ValueError as e:
        if isinstance(e, ParamsError):
            raise
        raise ParamsError(field, f"ragged nested lists ({e})", source) from None


def _to_params(leaves: Mapping[str, np.ndarray], dtype) -> LifecycleParams:
    import jax.numpy as jnp

    return validate_params(LifecycleParams(**{k: jnp.asarray(leaves[k], dtype=dtype) for k in LifecycleParams._fields}))


def _leaves(params: LifecycleParams) -> dict[str, np.ndarray]:
    return {k: np.array(v, dtype=np.float64) for k, v in params._asdict().items()}


def _plain(x, dtype) -> Any:
    """A leaf value as plain Python floats; float32 values as their shortest decimal (0.016,
    not 0.01600000075995922), so that they read back to the same float32."""
    a = np.asarray(x)
    if np.dtype(dtype) == np.float32:
        conv = lambda v: float(str(np.float32(v)))  # noqa: E731
    else:
        conv = float
    return conv(a) if a.ndim == 0 else np.vectorize(conv, otypes=[object])(a).tolist()


# ----------------------------------------------------------------------------- the file


def params_to_dict(
    params: LifecycleParams, certificate: Mapping | None = None, provenance: Mapping | None = None
) -> dict:
    """The ``frcore-params-v1`` document of ``params`` (validated). Float32 leaves are written
    as the shortest decimal that reads back to the same float32 (so 0.0015, not
    0.0015000000130385160), which makes a save / load round trip exact."""
    validate_params(params)
    out = {k: _plain(v, np.asarray(v).dtype) for k, v in params._asdict().items()}
    doc: dict[str, Any] = {"format": PARAMS_FORMAT, "params": out}
    if certificate is not None:
        doc["certificate"] = dict(certificate)
    if provenance is not None:
        doc["provenance"] = dict(provenance)
    return doc


def params_from_dict(doc: Any, source: str = "<params>", dtype=None) -> LifecycleParams:
    """Read a ``frcore-params-v1`` document (already parsed JSON); :class:`ParamsError` naming
    ``source`` and the field on anything malformed."""
    if not isinstance(doc, dict):
        raise ParamsError(
            "format", f'expected a JSON object with "format": {PARAMS_FORMAT!r}, got {type(doc).__name__}', source
        )
    if doc.get("format") != PARAMS_FORMAT:
        raise ParamsError("format", f"expected {PARAMS_FORMAT!r}, got {shown(doc.get('format'))}", source)
    extra = sorted(set(doc) - set(FILE_KEYS))
    if extra:
        raise ParamsError(extra[0], f"unknown top-level key; expected only {', '.join(FILE_KEYS)}", source)
    for key in ("certificate", "provenance"):
        if key in doc and not isinstance(doc[key], dict):
            raise ParamsError(key, f"expected an object, got {type(doc[key]).__name__}", source)
    leaves = doc.get("params")
    if not isinstance(leaves, dict):
        raise ParamsError("params", "expected an object holding every leaf of LifecycleParams by name", source)
    missing = [k for k in LifecycleParams._fields if k not in leaves]
    if missing:
        raise ParamsError(
            f"params.{missing[0]}", f"missing (every leaf is required; missing: {', '.join(missing)})", source
        )
    extra = [k for k in leaves if k not in LifecycleParams._fields]
    if extra:
        raise ParamsError(
            f"params.{extra[0]}", f"unknown field; expected the leaves {', '.join(LifecycleParams._fields)}", source
        )
    arrays = {k: _numeric(leaves[k], f"params.{k}", source, k) for k in LifecycleParams._fields}
    check_leaves(arrays, source)
    return _to_params(arrays, dtype or default_params().rates.dtype)


def save_params(
    params: LifecycleParams, path: str | Path, certificate: Mapping | None = None, provenance: Mapping | None = None
) -> Path:
    """Write ``params`` (and an optional certificate / provenance) as a parameter file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps_params(params_to_dict(params, certificate, provenance)), encoding="utf-8")
    return path


def dumps_params(doc: Mapping) -> str:
    """A parameter document as JSON text with one leaf per line (the layout of docs/formats.md)."""
    leaves = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in doc["params"].items())
    parts = [f' "format": {json.dumps(doc["format"])}', f' "params": {{\n{leaves}\n }}']
    for key in ("certificate", "provenance"):
        if key in doc:
            body = json.dumps(doc[key], indent=1, default=str).replace("\n", "\n ")
            parts.append(f" {json.dumps(key)}: {body}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


class ParamsFile(NamedTuple):
    """A parameter file as read: the validated params and the document's other parts."""

    params: LifecycleParams
    certificate: dict | None
    provenance: dict | None
    path: str


def read_params_file(path: str | Path, dtype=None) -> ParamsFile:
    """Read and validate a parameter file; :class:`ParamsError` naming the file and field."""
    p = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ParamsError("path", "no such file", p) from None
    except (IsADirectoryError, UnicodeDecodeError) as e:
        raise ParamsError("path", f"cannot read a parameter file ({type(e).__name__})", p) from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ParamsError("json", f"not JSON ({e.msg} at line {e.lineno} column {e.colno})", p) from None
    params = params_from_dict(doc, p, dtype)
    return ParamsFile(params, doc.get("certificate"), doc.get("provenance"), p)


def load_params(path: str | Path, dtype=None) -> LifecycleParams:
    """The validated :class:`LifecycleParams` of a parameter file."""
    return read_params_file(path, dtype).params


# ----------------------------------------------------------------------------- overrides


class Override(NamedTuple):
    """One parsed override: the leaf it sets, which entries, and the value(s)."""

    text: str  # NAME=VALUE as given
    name: str  # NAME as given
    leaf: str
    entries: tuple  # () scalar; (cats,) per-category; (cats, None) a clock row; (cats, kind) one clock entry
    value: Any  # float, or a (3,) tuple for a clock row


def _number(text: str, field: str, source: str | None) -> float:
    try:
        v = float(text)
    except ValueError:
        raise ParamsError(field, f"value {shown(text.strip())} is not a number", source) from None
    if not math.isfinite(v):
        raise ParamsError(field, f"value {shown(text.strip())} is not finite", source)
    return v


def _parse_name(name: str, source: str | None) -> tuple[str, tuple]:
    parts = name.strip().split(".")
    head = parts[0]
    if len(parts) == 1:
        if head in SCALAR_LEAVES:
            return head, ()
        if head in GROUPS or head in ("clock", "clocks"):
            raise ParamsError(
                name,
                f"{head} has one value per category: name one, e.g. {head}.OBLIGATIONS, or every one with {head}.*",
                source,
            )
        raise ParamsError(
            name,
            f"unknown parameter; expected a scalar ({', '.join(SCALAR_LEAVES)}), "
            f"GROUP.CATEGORY ({', '.join(CATEGORY_LEAVES.values())}), clock.CATEGORY or clock.KIND.CATEGORY",
            source,
        )
    if head in GROUPS:
        if len(parts) != 2:
            raise ParamsError(name, f"expected {head}.CATEGORY", source)
        return GROUPS[head], (tuple(_category(parts[1], name, source)),)
    if head in ("clock", "clocks"):
        if len(parts) == 2:
            return "clocks", (tuple(_category(parts[1], name, source)), None)
        if len(parts) == 3:
            if parts[1] not in CLOCK_KINDS:
                raise ParamsError(
                    name, f"unknown clock {shown(parts[1])}; expected one of {', '.join(CLOCK_KINDS)}", source
                )
            return "clocks", (tuple(_category(parts[2], name, source)), CLOCK_KINDS.index(parts[1]))
        raise ParamsError(name, "expected clock.CATEGORY=A/S/C or clock.KIND.CATEGORY=V", source)
    if head in SCALAR_LEAVES:
        raise ParamsError(name, f"{head} is a scalar: set it as {head}=V", source)
    raise ParamsError(
        name,
        f"unknown parameter group {shown(head)}; expected one of {', '.join(CATEGORY_LEAVES.values())}, "
        "clock, or a scalar",
        source,
    )


def _parse_value(leaf: str, index: tuple, text: str, name: str, source: str | None):
    if leaf == "clocks" and index[1] is None:
        bits = text.split("/")
        if len(bits) != 3:
            raise ParamsError(
                name,
                "a clock row is three numbers A/S/C (absolute/inter-session/conversational), "
                f"got {shown(text.strip())}",
                source,
            )
        return tuple(_number(b, name, source) for b in bits)
    return _number(text, name, source)


def parse_param_override(text: str, source: str | None = "--param") -> Override:
    """``NAME=VALUE`` → :class:`Override` (names and values checked; ranges are checked when
    applied). :class:`ParamsError` naming the field on an unknown name, category or bad value."""
    name, sep, value = str(text).partition("=")
    if not sep or not name.strip():
        raise ParamsError(str(text), "expected NAME=VALUE (e.g. rate.LOGISTICAL_CONTEXT=0.016)", source)
    leaf, index = _parse_name(name.strip(), source)
    return Override(str(text), name.strip(), leaf, index, _parse_value(leaf, index, value, name.strip(), source))


def parse_param_grid(text: str, source: str | None = "--param") -> tuple[str, list[Override]]:
    """``NAME=V1,V2,…`` → (NAME, one :class:`Override` per value, in order)."""
    name, sep, values = str(text).partition("=")
    if not sep or not name.strip():
        raise ParamsError(str(text), "expected NAME=V1,V2,… (e.g. alpha.OBLIGATIONS=0.1,0.35)", source)
    vals = [v.strip() for v in values.split(",")]
    if not vals or any(not v for v in vals):
        raise ParamsError(name.strip(), f"empty value in {shown(values)}", source)
    if len(set(vals)) != len(vals):
        raise ParamsError(name.strip(), f"repeated value in {shown(values)}", source)
    return name.strip(), [parse_param_override(f"{name.strip()}={v}", source) for v in vals]


def _set(leaves: dict[str, np.ndarray], o: Override, source: str | None) -> None:
    if not o.entries:
        leaves[o.leaf] = np.asarray(o.value, dtype=np.float64)
    elif o.leaf != "clocks":
        leaves[o.leaf][list(o.entries[0])] = o.value
    elif o.entries[1] is None:
        leaves["clocks"][list(o.entries[0])] = np.asarray(o.value)
    else:
        k, v = o.entries[1], float(o.value)
        if not 0.0 <= v <= 1.0:
            raise ParamsError(o.name, f"a clock sensitivity must lie in [0, 1], got {_fmt(v)}", source)
        others = [j for j in range(3) if j != k]
        for r in o.entries[0]:
            row = leaves["clocks"][r]
            rest = row[others].sum()
            row[others] = row[others] * ((1.0 - v) / rest) if rest > 0 else (1.0 - v) / 2.0
            row[k] = v


def apply_param_overrides(
    params: LifecycleParams | None, overrides: Iterable[str | Override], source: str | None = "--param"
) -> LifecycleParams:
    """``params`` (default: the default parameters) with every override applied in order;
    the result is validated, and a violation names the override that caused it."""
    base = default_params() if params is None else params
    leaves = _leaves(base)
    for o in overrides:
        o = o if isinstance(o, Override) else parse_param_override(o, source)
        _set(leaves, o, source)
        try:
            check_leaves(leaves, prefix="")
        except ParamsError as e:
            raise ParamsError(o.name, e.problem, source) from None
    return _to_params(leaves, base.rates.dtype)


def override_value(params: LifecycleParams, override: str | Override):
    """The current value at an override's name (a float, or the (3,) clock row as a list)."""
    o = (
        override
        if isinstance(override, Override)
        else parse_param_override(f"{override}=0" if "=" not in str(override) else override)
    )
    leaf = getattr(params, o.leaf)
    v = _plain(leaf, np.asarray(leaf).dtype)
    if not o.entries:
        return v
    c = o.entries[0][0]
    return v[c] if o.leaf != "clocks" or o.entries[1] is None else v[c][o.entries[1]]


def param_changes(
    params: LifecycleParams, reference: LifecycleParams | None = None, rtol: float = 0.0
) -> dict[str, Any]:
    """Every value of ``params`` that differs from ``reference`` (default parameters), by
    override name: ``{"alpha.OBLIGATIONS": 0.1, "clock.LOGISTICAL_CONTEXT": [0.6, 0.2, 0.2]}``."""
    a, b = _leaves(params), _leaves(default_params() if reference is None else reference)
    plain = {k: _plain(v, np.asarray(v).dtype) for k, v in params._asdict().items()}
    out: dict[str, Any] = {}
    for name in LifecycleParams._fields:
        diff = ~np.isclose(a[name], b[name], rtol=rtol, atol=0.0)
        if not diff.any():
            continue
        if name in CATEGORY_LEAVES:
            for c in np.flatnonzero(diff):
                out[f"{CATEGORY_LEAVES[name]}.{CATEGORY_NAMES[c]}"] = plain[name][c]
        elif name == "clocks":
            for c in np.flatnonzero(diff.any(axis=1)):
                out[f"clock.{CATEGORY_NAMES[c]}"] = plain[name][c]
        else:
            out[name] = plain[name]
    return out


# ----------------------------------------------------------------------------- command lines


def resolve_params(
    params_file: str | Path | None = None, overrides: Sequence[str] = (), dtype=None
) -> LifecycleParams | None:
    """The parameter set of a command line: the file (or the defaults), then the overrides.
    ``None`` when neither is given — callers then use the default parameters unchanged."""
    if not params_file and not overrides:
        return None
    base = read_params_file(params_file, dtype).params if params_file else None
    return apply_param_overrides(base, list(overrides))


def add_params_arguments(parser, *, param_help: str | None = None) -> None:
    """Add ``--params FILE`` and ``--param NAME=VALUE`` (repeatable) to an argparse parser
    (read back with :func:`params_from_args`)."""
    parser.add_argument(
        "--params",
        metavar="FILE",
        default=None,
        help="score with this parameter file (frcore-params-v1, as `fr calibrate` writes; docs/formats.md)",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=param_help
        or (
            "override one parameter, on top of --params (repeatable): a scalar (global_alpha=0.2), "
            "GROUP.CATEGORY with GROUP rate|alpha|floor|cognitive_rate (rate.LOGISTICAL_CONTEXT=0.016, "
            "floor.*=0), clock.CATEGORY=A/S/C or clock.KIND.CATEGORY=V (KIND abs|session|conv)"
        ),
    )


def params_from_args(args) -> LifecycleParams | None:
    """The parameters named by :func:`add_params_arguments`' flags (``None``: defaults)."""
    return resolve_params(getattr(args, "params", None), getattr(args, "param", None) or ())


def params_record(args) -> dict:
    """What a result file records about the parameters of its command line (``{}`` for defaults)."""
    out: dict[str, Any] = {}
    if getattr(args, "params", None):
        out["params_file"] = str(args.params)
    if getattr(args, "param", None):
        out["param_args"] = list(args.param)
    return out
