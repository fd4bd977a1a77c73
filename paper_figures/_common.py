"""Shared plumbing of the figure scripts: loading and checking result files, the matplotlib
style, saving figures, writing markdown + CSV tables, and the ``python -m`` entry point."""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, overload

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from . import paths

#: colour for the paper's reference marks
PAPER_COLOR = "#c0392b"


class MissingInput(FileNotFoundError):
    """A results file a script needs is not in the results folder."""


def load(results_dir: str | Path, name: str) -> dict:
    """Read ``results_dir/name`` as a JSON object; :class:`MissingInput` if absent,
    ``ValueError`` naming the file if it is not a JSON object."""
    p = Path(results_dir) / name
    if not p.is_file():
        raise MissingInput(f"{name}: no such results file in {Path(results_dir)}")
    try:
        obj = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{name}: not valid JSON ({e})") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{name}: top level must be a JSON object, got {type(obj).__name__}")
    return obj


def field(obj: Any, path: str, file: str) -> Any:
    """``obj[a][b]...`` for ``path = "a.b..."`` (list indices as ``[i]`` in messages);
    ``ValueError`` naming the file and the missing field."""
    cur = obj
    for key in path.split("."):
        if isinstance(cur, dict) and key in cur:
            cur = cur[key]
        elif isinstance(cur, list) and key.isdigit() and int(key) < len(cur):
            cur = cur[int(key)]
        else:
            raise ValueError(f"{file}: missing field {_pretty(path)}")
    return cur


@overload
def number(x: Any, where: str, file: str, allow_none: Literal[False] = False) -> float: ...
@overload
def number(x: Any, where: str, file: str, allow_none: bool) -> float | None: ...
def number(x: Any, where: str, file: str, allow_none: bool = False) -> float | None:
    """``x`` as a finite float; ``ValueError`` naming the file and field otherwise."""
    if x is None and allow_none:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(float(x)):
        raise ValueError(f"{file}: field {_pretty(where)} must be a finite number, got {x!r}")
    return float(x)


def rows_of(obj: Any, path: str, file: str, keys: Sequence[str]) -> list[dict]:
    """The non-empty list at ``path`` whose items are objects carrying every key in ``keys``
    with a numeric value (``ValueError`` naming the offending index and key otherwise)."""
    rows = field(obj, path, file)
    if not isinstance(rows, list) or not rows:
        raise ValueError(f"{file}: field {_pretty(path)} must be a non-empty list")
    for i, r in enumerate(rows):
        if not isinstance(r, dict):
            raise ValueError(f"{file}: {_pretty(path)}[{i}] must be an object")
        for k in keys:
            if k not in r:
                raise ValueError(f"{file}: {_pretty(path)}[{i}] missing field {k!r}")
    return rows


def _pretty(path: str) -> str:
    return "".join(f"[{p}]" if p.isdigit() else (("." if i else "") + p) for i, p in enumerate(path.split(".")))


def paper(obj: dict, fallback: dict) -> dict:
    """The paper's reference numbers: the results file's own ``"paper"`` entry, else ``fallback``."""
    p = obj.get("paper")
    return p if isinstance(p, dict) and p else fallback


def figure(*args, **kwargs):
    """``plt.subplots`` under the project's matplotlibrc."""
    matplotlib.rc_file(paths.MATPLOTLIBRC)
    return plt.subplots(*args, **kwargs)


def source_note(obj: dict) -> str:
    """A one-line provenance note: data source and git revision of the results file."""
    src = obj.get("data_source") or obj.get("suite") or "?"
    rev = str(obj.get("git_revision") or "?")[:8]
    return f"data: {src}; rev {rev}"


def save(fig, out_dir: str | Path, stem: str) -> Path:
    """Save ``fig`` as ``out_dir/stem.png`` and close it."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    p = out / f"{stem}.png"
    try:
        fig.savefig(p)
    finally:
        plt.close(fig)
    return p


def fmt_pct(x: float | None, digits: int = 1) -> str:
    """0.729 → ``72.9``; ``None`` → ``–``."""
    return "–" if x is None else f"{100 * float(x):.{digits}f}"


def fmt_p(p: float | None) -> str:
    """A p-value in 3 significant digits (``<1e-4`` below that)."""
    if p is None:
        return "–"
    return "<1e-4" if p < 1e-4 else f"{p:.3g}"


def _md_cell(x: Any) -> str:
    return str(x).replace("|", "\\|").replace("\n", " ")


def write_table(
    out_dir: str | Path,
    stem: str,
    header: Sequence[str],
    rows: Iterable[Sequence[Any]],
    title: str = "",
    notes: Sequence[str] = (),
) -> list[Path]:
    """Write ``out_dir/stem.md`` (title, a markdown table, notes) and ``out_dir/stem.csv``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = [list(r) for r in rows]
    for i, r in enumerate(rows):
        if len(r) != len(header):
            raise ValueError(f"{stem}: row [{i}] has {len(r)} cells, header has {len(header)}")
    lines = [f"**{title}**", ""] if title else []
    lines.append("| " + " | ".join(_md_cell(h) for h in header) + " |")
    lines.append("|" + "|".join("---" for _ in header) + "|")
    lines += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in rows]
    if notes:
        lines += [""] + list(notes)
    md = out / f"{stem}.md"
    md.write_text("\n".join(lines) + "\n", encoding="utf-8")
    cs = out / f"{stem}.csv"
    with cs.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return [md, cs]


def cli(make: Callable[[Path, Path], list[Path]], prog: str, argv: Sequence[str] | None = None) -> int:
    """``python -m paper_figures.<script> RESULTS OUT``: run ``make`` and print what it wrote."""
    ap = argparse.ArgumentParser(
        prog=prog, description=(make.__doc__ or "").strip().splitlines()[0] if make.__doc__ else None
    )
    ap.add_argument("results", nargs="?", default=str(paths.DEFAULT_RESULTS), help="results folder (default: results/)")
    ap.add_argument(
        "out", nargs="?", default=str(paths.DEFAULT_OUT), help="output folder (default: paper_figures/out/)"
    )
    a = ap.parse_args(argv)
    try:
        written = make(Path(a.results), Path(a.out))
    except (ValueError, FileNotFoundError) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    for p in written:
        print(p)
    return 0
