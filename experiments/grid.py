"""``fr sweep grid``: any grid of score parameters on any suite, as batched kernel calls.

``--param NAME=V1,V2,…`` (repeatable, names as ``fr bench run --param``: ``rate.CATEGORY``,
``alpha.CATEGORY``, ``floor.*``, ``clock.KIND.CATEGORY``, scalars…) gives one axis per flag; the
grid is their product, applied on top of ``--params FILE`` (or the default parameters).

How it is evaluated: every question of the suite runs once through FR-Bank's pipeline (the
system's pipeline, FR-full by default) and its scored candidate set is kept
(:func:`experiments.candidate_table.build_table`); each setting then **re-scores each
question's fixed candidate set** — the parameter sets are stacked and scored by one vmapped kernel call
(:func:`frcore.score_sweep`) per chunk of settings, never a Python loop over settings. Score
parameters do not enter candidate generation (stages 1–5 read similarities, routing, states and
the pipeline's switches only), so for a system whose pipeline is FR-full's up to score switches
that leave those stages alone, each setting's pass rate is the one ``fr bench run --param …``
gives (tested). With ``--scheduler ADDRESS`` both maps run on a Dask cluster
(:func:`frcore.bench.map_tasks`): the candidate table is built a persona per task, then each
chunk of settings is a task (the table scattered to the workers once); the result equals the
in-process run's.

Per setting: pass, staleness, pass per attack vector, and Jaccard@10 / Kendall τ of its ranking
against the ranking under the default parameters (same system), averaged over questions.
Written as JSON (``{"grid": [{"params", "pass", "staleness", "per_av", "jaccard_at_10",
"kendall_tau"}], …}``), CSV (one row per setting) and a figure: a heat map for two parameters,
curves for one, pass per setting for more (above 60 settings, the settings ranked by pass).
"""

from __future__ import annotations

import csv
import itertools
import json
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

import frcore
from frcore import ScoreConfig, default_params, stack_params
from frcore.bench import (
    SYSTEMS,
    System,
    connect,
    git_revision,
    load_suites_arg,
    make_embedder,
    map_tasks,
    question_outcome,
    resolve_systems,
)

from .candidate_table import SweepTable, build_table, compare_to, scores

#: Settings scored per kernel call (and per Dask task): bounds the (P, Q, B) score array.
DEFAULT_CHUNK = 64
#: Above this many settings of three or more parameters the figure ranks them by pass (a line)
#: instead of drawing a labelled bar per setting.
LABELLED_BARS = 60
#: The JSON ``method`` note (also printed).
METHOD = (
    "re-scores each question's fixed candidate set (FR-Bank's pipeline run once per question with the system's "
    "pipeline; "
    "score parameters do not enter candidate generation), one batched kernel call over stacked parameter sets per chunk"
)


# ----------------------------------------------------------------------------- the grid


def parse_grid(specs: Sequence[str]) -> list[tuple[str, list]]:
    """``["NAME=V1,V2", …]`` → [(NAME, [override per value])] (one axis per flag, in order);
    a name given twice is an error naming it."""
    axes = []
    seen: set[str] = set()
    for text in specs:
        name, overrides = frcore.parse_param_grid(text)
        if name in seen:
            raise frcore.ParamsError(
                name, "given twice; put every value of one parameter in one --param NAME=V1,V2,…", "--param"
            )
        seen.add(name)
        axes.append((name, overrides))
    if not axes:
        raise frcore.ParamsError("--param", "no grid: give at least one --param NAME=V1,V2,…")
    return axes


def _axis_value(o) -> Any:
    return list(o.value) if isinstance(o.value, tuple) else o.value


def grid_settings(axes, base=None, system: System | None = None) -> tuple[list[dict], list[frcore.LifecycleParams]]:
    """The product of the axes: per setting ``{NAME: value}`` and its parameter set (``base``
    with the setting's overrides, then the system's own transform, e.g. a collapse). Every
    setting is validated here, before any scoring; an invalid one names its parameter."""
    system = system or SYSTEMS["fr-full"]
    labels, sets = [], []
    for combo in itertools.product(*(ovs for _, ovs in axes)):
        p = frcore.apply_param_overrides(base, list(combo))
        labels.append({name: _axis_value(o) for (name, _), o in zip(axes, combo)})
        sets.append(system.params(p))
    return labels, sets


def rescorable(system: System) -> System:
    """``system`` if the fixed-candidate rescoring is exact for it (its pipeline is FR-full's but
    for score switches that leave candidate generation and distillation alone); else a
    ``ValueError`` saying why."""
    full = SYSTEMS["fr-full"].pipeline
    pipe = system.pipeline
    if replace(pipe, score=full.score) != full:
        raise ValueError(
            f"--system: {system.name} changes the retrieval pipeline, not only the score; "
            "the grid re-scores FR-full's candidate sets, so it cannot evaluate it (use `fr bench run --param` per "
            "setting)"
        )
    for f in ("routing", "lifecycle", "numeric_exemption"):  # these also steer stages 3 and 5
        if getattr(pipe.score, f) != getattr(full.score, f):
            raise ValueError(
                f"--system: {system.name} switches score.{f}, which also changes candidate generation; not rescorable"
            )
    return system


def _metrics(total: np.ndarray, ref_total: np.ndarray, table: SweepTable) -> list[dict]:
    """Per setting (axis 0 of ``total``, (P, Q, B)): pass, staleness, per-AV pass, Jaccard@10
    and Kendall τ against ``ref_total`` (Q, B)."""
    cmp_ = compare_to(ref_total, total, table)
    ranked = cmp_["ranked"]
    out = []
    for p in range(total.shape[0]):
        passed: list[bool] = []
        stale: list[bool] = []
        per: dict[str, list[bool]] = {}
        for qi, q in enumerate(table.questions):
            o = question_outcome(q["attack_vector"], ranked[p, qi], q["support"], q["wrong"])
            passed.append(bool(o.passed))
            stale.append(bool(o.stale))
            per.setdefault(q["attack_vector"][:3], []).append(bool(o.passed))
        out.append(
            {
                "pass": float(np.mean(passed)),
                "staleness": float(np.mean(stale)),
                "per_av": {k: float(np.mean(v)) for k, v in sorted(per.items(), key=lambda kv: int(kv[0][2:]))},
                "jaccard_at_10": float(cmp_["jaccard"][p].mean()),
                "kendall_tau": float(cmp_["tau"][p].mean()),
                "passed": passed,
            }
        )
    return out


def _chunk_task(table: SweepTable, config: ScoreConfig, ref_total: np.ndarray, sets: list) -> list[dict]:
    """One batched kernel call over a chunk of parameter sets, then its metrics."""
    return _metrics(scores(table, stack_params(sets), config), ref_total, table)


def evaluate_grid(
    table: SweepTable,
    sets: Sequence[frcore.LifecycleParams],
    system: System | None = None,
    *,
    chunk: int = DEFAULT_CHUNK,
    scheduler: str | None = None,
    client=None,
    progress: bool = False,
) -> tuple[list[dict], dict, int]:
    """Score every parameter set on the table's fixed candidate sets: returns (metrics per set,
    the reference's metrics (the system under the default parameters), number of kernel calls)."""
    system = rescorable(system or SYSTEMS["fr-full"])
    config = system.pipeline.score
    if chunk < 1:
        raise ValueError(f"--chunk: must be ≥ 1, got {chunk}")
    ref_total = scores(table, stack_params([system.params(default_params())]), config)[0]
    ref = _metrics(ref_total[None], ref_total, table)[0]
    chunks = [(list(sets[i : i + chunk]),) for i in range(0, len(sets), chunk)]
    parts = map_tasks(
        _chunk_task,
        chunks,
        (table, config, ref_total),
        scheduler=scheduler,
        client=client,
        desc="scoring settings",
        unit="chunk",
        progress=progress,
    )
    return [m for part in parts for m in part], ref, len(chunks)


def run_grid(
    suites,
    embedder,
    axes,
    *,
    base=None,
    system: str = "fr-full",
    label: str = "",
    chunk: int = DEFAULT_CHUNK,
    scheduler: str | None = None,
    client=None,
    table: SweepTable | None = None,
    progress: bool = True,
    params_inputs: dict | None = None,
) -> dict:
    """The ``fr sweep grid`` result (the output contract in the module docstring)."""
    sys_ = rescorable(resolve_systems([system])[0])
    labels, sets = grid_settings(axes, base, sys_)
    t0 = time.perf_counter()
    client = connect(scheduler, client)
    if table is None:
        table = build_table(suites, embedder, source=label, progress=progress, client=client)
    t1 = time.perf_counter()
    metrics, ref, calls = evaluate_grid(table, sets, sys_, chunk=chunk, client=client, progress=progress)
    t2 = time.perf_counter()
    grid = [{"params": lab, **{k: v for k, v in m.items() if k != "passed"}} for lab, m in zip(labels, metrics)]
    return {
        "grid": grid,
        "axes": [{"name": name, "values": [_axis_value(o) for o in ovs]} for name, ovs in axes],
        "system": sys_.name,
        "reference": {"params": "default", **{k: v for k, v in ref.items() if k != "passed"}},
        "method": METHOD,
        "suite": label or table.source,
        "n_personas": len({q["persona"] for q in table.questions}),
        "n_questions": table.n,
        "n_settings": len(grid),
        "kernel_calls": calls,
        "chunk": chunk,
        "scheduler": scheduler or ("client" if client is not None else None),
        "embedder": getattr(embedder, "name", str(embedder)),
        "base_params": {
            **(params_inputs or {}),
            "changes_from_default": frcore.param_changes(base) if base is not None else {},
        },
        "git_revision": git_revision(),
        "seconds": {"candidate_sets": round(t1 - t0, 2), "scoring": round(t2 - t1, 2)},
        "questions": [
            {"persona": q["persona"], "id": q["id"], "attack_vector": q["attack_vector"]} for q in table.questions
        ],
        "passed": [m["passed"] for m in metrics],
    }


# ----------------------------------------------------------------------------- outputs


def _label(v: Any) -> str:
    return "/".join(f"{x:g}" for x in v) if isinstance(v, list) else f"{v:g}"


def write_csv(result: dict, path: str | Path) -> Path:
    """One row per setting: the grid's parameters, pass, staleness, Jaccard@10, τ, pass per AV."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    names = [a["name"] for a in result["axes"]]
    avs = sorted({k for g in result["grid"] for k in g["per_av"]}, key=lambda k: int(k[2:]))
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(names + ["pass", "staleness", "jaccard_at_10", "kendall_tau"] + [f"pass_{a}" for a in avs])
        for g in result["grid"]:
            w.writerow(
                [_label(g["params"][n]) for n in names]
                + [f"{g[k]:.6f}" for k in ("pass", "staleness", "jaccard_at_10", "kendall_tau")]
                + [f"{g['per_av'].get(a, float('nan')):.6f}" for a in avs]
            )
    return path


def plot_grid(result: dict, path: str | Path) -> Path:
    """A heat map of pass (and staleness) for two parameters; curves of pass, staleness,
    Jaccard@10 and τ for one; pass per setting for three or more (a bar each up to
    :data:`LABELLED_BARS` settings, beyond that the settings ranked by pass)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    axes, grid, ref = result["axes"], result["grid"], result["reference"]
    title = (
        f"{result['system']} on {Path(str(result['suite'])).name or result['suite']} ({result['n_questions']} "
        f"questions); default: pass {100 * ref['pass']:.1f}%"
    )
    if len(axes) == 2:
        a, b = axes
        shape = (len(a["values"]), len(b["values"]))
        fig, panels = plt.subplots(
            1, 2, figsize=(4.2 + 1.1 * shape[1] * 2, 1.6 + 0.6 * shape[0]), squeeze=False, layout="constrained"
        )
        for ax, key, cmap in zip(panels[0], ("pass", "staleness"), ("viridis", "magma_r")):
            m = np.array([g[key] for g in grid]).reshape(shape) * 100
            im = ax.imshow(m, cmap=cmap, aspect="auto")
            ax.set_xticks(range(shape[1]), [_label(v) for v in b["values"]])
            ax.set_yticks(range(shape[0]), [_label(v) for v in a["values"]])
            ax.set_xlabel(b["name"])
            ax.set_ylabel(a["name"])
            ax.set_title(f"{key} %")
            for i, j in np.ndindex(shape):
                ax.text(
                    j,
                    i,
                    f"{m[i, j]:.1f}",
                    ha="center",
                    va="center",
                    color="w" if (m[i, j] - m.min()) < 0.5 * (np.ptp(m) or 1) else "k",
                    fontsize=8,
                )
            fig.colorbar(im, ax=ax, shrink=0.8)
    elif len(axes) == 1:
        a = axes[0]
        xs = range(len(a["values"]))
        fig, (p1, p0, p2) = plt.subplots(1, 3, figsize=(13, 3.8), layout="constrained")
        for ax, key, color in ((p1, "pass", "C0"), (p0, "staleness", "C3")):
            ax.plot(xs, [100 * g[key] for g in grid], marker="o", color=color, label=key)
            ax.axhline(100 * ref[key], ls=":", lw=1, color=color, label="default parameters")
            ax.set_ylabel(f"{key} % of questions")
        for key, name in (("jaccard_at_10", "Jaccard@10"), ("kendall_tau", "Kendall τ")):
            p2.plot(xs, [g[key] for g in grid], marker="o", label=name)
        p2.set_ylabel("vs the default ranking")
        for ax in (p1, p0, p2):
            ax.set_xticks(list(xs), [_label(v) for v in a["values"]], rotation=30 if len(xs) > 6 else 0)
            ax.set_xlabel(a["name"])
            ax.legend(fontsize=8)
            ax.grid(alpha=0.3)
    elif len(grid) > LABELLED_BARS:
        order = sorted(range(len(grid)), key=lambda i: -grid[i]["pass"])
        fig, ax = plt.subplots(figsize=(8, 4), layout="constrained")
        ax.plot(range(1, len(grid) + 1), [100 * grid[i]["pass"] for i in order], lw=1.2)
        ax.axhline(100 * ref["pass"], ls=":", color="k", lw=1)
        best = grid[order[0]]["params"]
        ax.set_xlabel(f"the {len(grid):,} settings, ranked by pass")
        ax.set_ylabel("pass % (dotted: default)")
        ax.set_title("best: " + ", ".join(f"{k} = {_label(v)}" for k, v in best.items()), fontsize=8)
        ax.grid(alpha=0.3)
    else:
        fig, ax = plt.subplots(figsize=(max(6, 0.35 * len(grid)), 4), layout="constrained")
        ax.bar(range(len(grid)), [100 * g["pass"] for g in grid])
        ax.axhline(100 * ref["pass"], ls=":", color="k", lw=1)
        ax.set_xticks(
            range(len(grid)),
            [", ".join(_label(v) for v in g["params"].values()) for g in grid],
            rotation=90,
            fontsize=7,
        )
        ax.set_xlabel(" × ".join(a["name"] for a in axes))
        ax.set_ylabel("pass % (dotted: default)")
    fig.suptitle(title, fontsize=9)  # layouts are explicit: a global rc (e.g. paper_figures' style) must not matter
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def format_grid(result: dict) -> str:
    names = [a["name"] for a in result["axes"]]
    avs = sorted({k for g in result["grid"] for k in g["per_av"]}, key=lambda k: int(k[2:]))
    head = "| " + " | ".join(names + ["pass %", "stale %", "Jaccard@10", "τ"] + avs) + " |"
    lines = [head, "|" + "---|" * len(names) + "---:|" * (4 + len(avs))]
    ref = result["reference"]
    rows = [({n: "default" for n in names}, ref)] + [(g["params"], g) for g in result["grid"]]
    for params, g in rows:
        cells = [params[n] if isinstance(params[n], str) else _label(params[n]) for n in names]
        cells += [
            f"{100 * g['pass']:.1f}",
            f"{100 * g['staleness']:.1f}",
            f"{g['jaccard_at_10']:.3f}",
            f"{g['kendall_tau']:.3f}",
        ]
        cells += [f"{100 * g['per_av'][a]:.1f}" if a in g["per_av"] else "—" for a in avs]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- CLI


def _cli(args) -> int:
    axes = parse_grid(args.param)  # fail fast: names, values, ranges — before the suite is read
    base = frcore.resolve_params(args.params, args.set)
    system = rescorable(resolve_systems([args.system])[0])
    grid_settings(axes, base, system)
    if not (args.json or args.csv or args.fig):
        raise ValueError("--json: give at least one of --json, --csv, --fig")
    suites, label = load_suites_arg(args.suite, args.personas, args.seed)
    result = run_grid(
        suites,
        make_embedder(args.embedder),
        axes,
        base=base,
        system=args.system,
        label=label,
        chunk=args.chunk,
        scheduler=args.scheduler,
        params_inputs={**frcore.params_record(args), **({"set": list(args.set)} if args.set else {})},
    )
    stem = Path(args.json) if args.json else Path(args.csv or args.fig)
    written = []
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=1, default=str))
        written.append(args.json)
    written.append(str(write_csv(result, args.csv or stem.with_suffix(".csv"))))
    written.append(str(plot_grid(result, args.fig or stem.with_suffix(".png"))))
    print(format_grid(result))
    s = result["seconds"]
    print(
        f"\n{result['n_settings']} settings × {result['n_questions']} questions ({result['n_personas']} personas), "
        f"system {result['system']}: "
        f"{result['kernel_calls']} batched kernel call(s); candidate sets {s['candidate_sets']} s, scoring "
        f"{s['scoring']} s.\n"
        f"Method: {METHOD}. Jaccard@10 and τ are against the ranking under the default parameters.\nwrote "
        f"{', '.join(map(str, written))}"
    )
    return 0


def register_grid(sub, suite_arguments) -> None:
    """Add ``fr sweep grid`` to ``fr sweep``'s actions."""
    g = sub.add_parser(
        "grid",
        help="any grid of score parameters: --param NAME=V1,V2,… (repeatable; the grid is the product)",
        description="Evaluate the product of --param NAME=V1,V2,… axes on a suite. "
        + METHOD[0].upper()
        + METHOD[1:]
        + ". "
        "Writes per-setting pass, staleness, pass per attack vector, Jaccard@10 and Kendall τ against the default "
        "ranking "
        "(JSON, CSV) and a figure (heat map for two parameters, curves for one).",
    )
    suite_arguments(g)
    g.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=V1,V2,…",
        required=True,
        help="one axis of the grid (repeatable): rate.CATEGORY, alpha.CATEGORY, floor.CATEGORY, "
        "cognitive_rate.CATEGORY "
        "(CATEGORY or *), clock.CATEGORY=A/S/C, clock.KIND.CATEGORY (KIND abs|session|conv) or a scalar (global_alpha, "
        "…)",
    )
    g.add_argument(
        "--params",
        metavar="FILE",
        help="base parameter file (frcore-params-v1) the grid is applied on (default: the default parameters)",
    )
    g.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a fixed override of the base, on top of --params (repeatable)",
    )
    g.add_argument(
        "--system",
        default="fr-full",
        help="the FR system whose score is swept (default fr-full; one whose pipeline is FR-full's up to score "
        "switches)",
    )
    g.add_argument(
        "--chunk",
        type=int,
        default=DEFAULT_CHUNK,
        help=f"settings per batched kernel call / Dask task (default {DEFAULT_CHUNK})",
    )
    g.add_argument("--json", help="write the result here (the CSV and figure go beside it unless --csv / --fig)")
    g.add_argument("--csv", help="write one row per setting here")
    g.add_argument("--fig", help="write the figure here (PNG)")
    g.set_defaults(func=_cli)
