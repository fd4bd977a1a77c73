"""``fr reproduce``: theory claims, the benchmark, the σ-scale diagnosis, every sweep and
latency, then every figure and table and the ledger's verdicts, into one folder with
``REPORT.md`` (opening with the verdict table: claim · paper · ours · check · verdict · reason)
and ``manifest.json`` (every output with the command that made it, the inputs of every part,
the verdicts, and any failures).

Every part runs on the same suites with the same embedder. A failure in one part is reported
and the rest still runs; the exit status is 1 when any part raised or any check did not pass —
a *not reproduced* verdict is a finding, not a failure.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _log(msg: str) -> None:
    print(f"[reproduce {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Run:
    def __init__(self, out: Path):
        self.out = out
        self.results = out / "results"
        self.results.mkdir(parents=True, exist_ok=True)
        self.outputs: list[dict] = []
        self.failures: list[dict] = []
        self.timings: dict[str, float] = {}
        self.inputs: dict[str, dict] = {}
        #: parts skipped because their data is absent (part → why); their ledger rows are not failures
        self.skipped: dict[str, str] = {}
        #: the figures and tables written, each with the claims it supports (``fr figures``' listing)
        self.figures: list[dict] = []

    def part(self, name: str, fn: Callable[[], Any]) -> Any:
        _log(f"{name} ...")
        t = time.perf_counter()
        try:
            value = fn()
        except Exception as e:  # keep going: one part failing must not stop the rest
            self.failures.append(
                {"part": name, "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc(limit=8)}
            )
            _log(f"{name} FAILED: {type(e).__name__}: {e}")
            value = None
        self.timings[name] = round(time.perf_counter() - t, 1)
        _log(f"{name} done in {self.timings[name]} s")
        return value

    def record(self, path: Path, kind: str, command: str) -> None:
        self.outputs.append(
            {
                "path": str(Path(path).relative_to(self.out)) if Path(path).is_relative_to(self.out) else str(path),
                "kind": kind,
                "command": command,
            }
        )


def _rename_systems(res: dict, names: dict[str, str]) -> dict:
    """A benchmark result with systems renamed (``names``: old → new), records included."""
    res = dict(res)
    res["systems"] = {names.get(k, k): v for k, v in res["systems"].items()}
    res["questions"] = [{**q, "system": names.get(q["system"], q["system"])} for q in res.get("questions", [])]
    res.pop("comparisons_vs_fr_full", None)
    return res


#: The σ-scale diagnosis: these systems with σ max-normalised per query, renamed.
SIGMA_DIAGNOSIS = {
    "fr-full": "fr-sigma-max",
    "fr-no-floors": "fr-sigma-max-no-floors",
    "fr-global-alpha": "fr-sigma-max-global-alpha",
}


def reproduce(
    out: Path,
    quick: bool = False,
    suite: str = "synthetic",
    personas: int | None = None,
    embedder_name: str = "minilm",
    scheduler: str | None = None,
    seed: int = 0,
    longmemeval: str | None = None,
) -> dict:
    """Run every part on one suite with one embedder; returns the manifest (``failures`` lists
    parts that raised and checks that did not pass). LongMemEval runs on ``longmemeval`` (a
    LongMemEval file; default its development part beside the repository) with the same
    embedder."""
    from experiments import ledger
    from frcore.bench import load_suites_arg, make_embedder
    from frcore.cli import main as fr_main
    from theory.verdict import headline

    out.mkdir(parents=True, exist_ok=True)
    run = Run(out)
    R = run.results
    n_personas = personas or (8 if quick else 20)
    generated = suite == "synthetic"
    suite_args = ["--suite", suite] + (["--personas", str(n_personas)] if generated or personas else [])
    tag = " ".join(suite_args)

    suites, label = run.part(
        "load suites", lambda: load_suites_arg(suite, n_personas if (generated or personas) else None, seed)
    ) or ([], suite)
    emb = run.part("embedder", lambda: make_embedder(embedder_name))
    inputs = {"suite": label, "personas": len(suites), "embedder": embedder_name}

    # 1. theory (the same suites and embedder as every other part)
    def theory():
        from theory.run import n_failed, theory as run_theory

        records = run_theory(
            suites,
            emb,
            label,
            embedder_name,
            generated=generated,
            json_path=str(R / "theory.json"),
            log=lambda m: print(m, file=sys.stderr),
        )
        run.record(R / "theory.json", "results", f"fr theory {tag} --embedder {embedder_name} --json theory.json")
        for r in records:
            if r["check"] != "pass":
                run.failures.append({"part": f"theory check {r['id']}", "error": f"check {r['check']}: {r['ours']}"})
        return n_failed(records)

    run.part("theory", theory)
    run.inputs["theory"] = inputs

    # 2. benchmark (every system)
    def bench():
        from frcore.bench import markdown_table, run_benchmark

        res = run_benchmark(suites, "all", emb, suite_label=label, keep_terms=True)
        (R / "bench.json").write_text(json.dumps(res, default=str))
        (R / "bench.md").write_text(markdown_table(res) + "\n")
        cmd = f"fr bench run {tag} --systems all --embedder {embedder_name} --json bench.json"
        run.record(R / "bench.json", "results", cmd)
        run.record(R / "bench.md", "table", cmd)
        return res

    run.part("benchmark", bench)
    run.inputs["benchmark"] = inputs

    def bench_gold():
        from frcore.bench import run_benchmark

        res = run_benchmark(
            suites,
            "fr-full,flat-cosine,bm25,uniform-decay,overwrite",
            emb,
            gold_intent=True,
            suite_label=label,
            keep_terms=False,
        )
        (R / "bench_gold_intent.json").write_text(json.dumps(res, default=str))
        run.record(
            R / "bench_gold_intent.json",
            "results",
            f"fr bench run {tag} --gold-intent --embedder {embedder_name} --json bench_gold_intent.json",
        )

    run.part("benchmark (gold intent)", bench_gold)
    run.inputs["benchmark (gold intent)"] = inputs

    # 2b. diagnosis of the σ scale: the same suite with σ max-normalised per query
    def sigma_diagnosis():
        from frcore.bench import run_benchmark

        res = run_benchmark(
            suites,
            ",".join(list(SIGMA_DIAGNOSIS) + ["flat-cosine"]),
            emb,
            suite_label=label,
            keep_terms=False,
            pipeline_overrides={"sigma_scale": "max"},
        )
        (R / "diagnosis_sigma.json").write_text(json.dumps(_rename_systems(res, SIGMA_DIAGNOSIS), default=str))
        run.record(
            R / "diagnosis_sigma.json",
            "results",
            f"fr bench run {tag} --systems {','.join(SIGMA_DIAGNOSIS)},flat-cosine --pipeline sigma_scale=max "
            f"--embedder {embedder_name} "
            "--json diagnosis_sigma.json (then renamed: "
            f"{', '.join(f'{a} → {b}' for a, b in SIGMA_DIAGNOSIS.items())})",
        )

    run.part("diagnosis (σ scale)", sigma_diagnosis)
    run.inputs["diagnosis (σ scale)"] = {**inputs, "pipeline": {"sigma_scale": "max"}}

    # 2c. the systems only the paper's empirical rows read (experiments/ledger_paper.py), with score terms
    def bench_paper():
        from experiments.ledger_paper import BENCH_PAPER, PAPER_SYSTEMS
        from frcore.bench import run_benchmark

        res = run_benchmark(suites, ",".join(PAPER_SYSTEMS), emb, suite_label=label, keep_terms=True)
        (R / BENCH_PAPER).write_text(json.dumps(res, default=str))
        run.record(
            R / BENCH_PAPER,
            "results",
            f"fr bench run {tag} --systems {','.join(PAPER_SYSTEMS)} --embedder {embedder_name} --json {BENCH_PAPER}",
        )

    run.part("benchmark (paper claims)", bench_paper)
    run.inputs["benchmark (paper claims)"] = inputs

    # 2d. the holdout through cross-validation by persona (fr calibrate --folds)
    def folds():
        from experiments.ledger_paper import CALIBRATE_FOLDS
        from theory.calibrate import calibrate_folds

        k = 2 if quick else 5
        res = calibrate_folds(suites, emb, k, label=label, progress=False)
        (R / CALIBRATE_FOLDS).write_text(json.dumps(res, default=str))
        run.record(
            R / CALIBRATE_FOLDS,
            "results",
            f"fr calibrate {tag} --folds {k} --embedder {embedder_name} --json {CALIBRATE_FOLDS}",
        )

    run.part("holdout (folds)", folds)
    run.inputs["holdout (folds)"] = inputs

    # 3. sweeps
    def sweeps():
        from experiments.sweeps import run_all

        only = ["multiplier", "alpha", "noise", "labels", "granularity", "holdout"]
        written = run_all(suites, emb, label, R, only, quick, scheduler, log=_log)
        for name, path in written.items():
            run.record(
                path,
                "results",
                f"fr sweep {tag} --embedder {embedder_name} --only {name}{' --quick' if quick else ''} --out results",
            )

    run.part("sweeps", sweeps)
    run.inputs["sweeps"] = inputs

    # 3b. LongMemEval (the benchmark's retrieval metrics; every system of `fr bench longmemeval`)
    def lme():
        from frcore.bench.longmemeval import DEFAULT_DATA, load_longmemeval, run_longmemeval

        if longmemeval is None and not DEFAULT_DATA.is_file():
            # the data lives beside the repository, not in it: without it this part is skipped
            run.skipped["longmemeval"] = f"LongMemEval data not found at {DEFAULT_DATA} (pass --longmemeval FILE)"
            _log(f"longmemeval skipped: {run.skipped['longmemeval']}")
            return
        data = load_longmemeval(longmemeval or DEFAULT_DATA)
        folder = R / "longmemeval"
        run_longmemeval(data, "all", emb, folder)
        cmd = f"fr bench longmemeval --data {data.source} --embedder {embedder_name} --out longmemeval"
        for f in sorted(folder.iterdir()):
            run.record(f, "results" if f.suffix in (".json", ".jsonl") else "table", cmd)
        run.inputs["longmemeval"] = {"data": data.source, "questions": len(data.questions), "embedder": embedder_name}

    run.part("longmemeval", lme)

    # 4. latency
    def latency():
        cmd = ["latency", "--json", str(R / "latency.json")] + (["--quick"] if quick else [])
        code = fr_main(cmd)
        run.record(R / "latency.json", "results", "fr " + " ".join(cmd))
        if code:
            raise RuntimeError(f"fr latency exited {code}")
        return code

    run.part("latency", latency)
    run.inputs["latency"] = {"suite": "random kernel inputs (no suite)", "embedder": None}

    # 5. figures and tables
    def figures():
        res = build_figures(R, out / "figures")
        run.figures = res.get("outputs", [])
        for o in res.get("outputs", []):
            run.record(Path(o["path"]), o["kind"], o["command"])
        for f in res.get("failures", []):
            run.failures.append({"part": f"figure {f.get('script')}", "error": f.get("error")})

    run.part("figures", figures)

    # 6. ledger verdicts and the report
    def verdicts():
        rows = ledger.evaluate(R)
        (R / "ledger.json").write_text(json.dumps({"inputs": inputs, "rows": rows}, indent=1, default=str))
        run.record(R / "ledger.json", "results", "fr ledger results --json ledger.json")
        for r in rows:
            if r["check"] != "pass" and r.get("part") not in run.skipped:
                run.failures.append({"part": f"ledger {r['id']}", "error": r["reason"]})
        return rows

    rows = run.part("ledger", verdicts) or []
    report = out / "REPORT.md"
    run.part(
        "report",
        lambda: report.write_text(render_report(R, run, rows, quick=quick, label=label, embedder=embedder_name)),
    )
    run.record(report, "table", "fr reproduce" + (" --quick" if quick else ""))
    every = ledger.every_claim(rows, (_load(R / "theory.json") or {}).get("claims"))
    manifest = {
        "headline": headline([x for x in every if x.get("part") not in run.skipped]),
        "outputs": run.outputs,
        "failures": run.failures,
        "skipped": run.skipped,
        "timings_s": run.timings,
        "suite": label,
        "embedder": embedder_name,
        "quick": quick,
        "inputs": run.inputs,
        "verdicts": {r["id"]: r["verdict"] for r in rows},
        # every claim (ledger rows, then the theory claims the ledger does not restate)
        "kinds": {r["id"]: r.get("kind") for r in every},
        "rule_commits": {r["id"]: r.get("rule_commit") for r in every},
        "revised_rules": [r["id"] for r in every if r.get("rule_revised")],
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, default=str))
    _log(f"wrote {report} and {out / 'manifest.json'} ({len(run.outputs)} outputs, {len(run.failures)} failures)")
    return manifest


def build_figures(results: Path, out: Path) -> dict:
    """Every figure and table from a results folder, by running ``fr figures`` (paper_figures
    sits above experiments: it is run as a command, never imported); returns its listing
    ``{"outputs", "failures", "skipped"}``, read back from the JSON it writes."""
    import contextlib
    import tempfile

    from frcore.cli import main as fr_main

    with tempfile.TemporaryDirectory() as tmp:
        listing = Path(tmp) / "figures.json"
        with contextlib.redirect_stdout(sys.stderr):
            code = fr_main(["figures", "--results", str(results), "--out", str(out), "--json", str(listing)])
        if not listing.is_file():
            raise RuntimeError(f"fr figures exited {code} without writing its listing")
        return json.loads(listing.read_text())


def _load(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except Exception:
        return None


def _figure_links(out: Path, figures: list[dict], cid: str | None) -> list[str]:
    """Markdown for the outputs supporting claim ``cid`` (PNGs embedded as images, tables linked),
    or a link to every output when ``cid`` is None; each by its path relative to the report's
    folder."""
    from experiments.ledger import anchor

    lines = []
    for f in figures:
        if cid is not None and cid not in (f.get("claims") or ()):
            continue
        p = Path(f["path"])
        rel = p.relative_to(out).as_posix() if p.is_absolute() and p.is_relative_to(out) else p.as_posix()
        if cid is None:
            if p.suffix.lower() in (".png", ".md"):
                shown = ", ".join(f"[{c}](#{anchor(c)})" for c in f.get("claims") or ()) or "–"
                lines.append(f"- [{p.name}]({rel}) (shown with: {shown})")
        elif p.suffix.lower() == ".png":
            lines.append(f"![{p.stem}]({rel})")
        elif p.suffix.lower() == ".md":
            lines.append(f"- table: [{p.name}]({rel})")
    return lines


def _diagnosis_lines(d: dict) -> list[str]:
    lines = [f"- **diagnosis**: {d['summary']}"]
    for v in (d.get("variants") or {}).values():
        lines.append(
            f"  - {v.get('cause')} — {v.get('what')}: "
            + (
                f"{v.get('verdict')}; {v.get('ours')}"
                if "verdict" in v
                else str(v.get("skipped") or v.get("error") or v.get("check"))
            )
        )
    if d.get("interpretation"):
        it = d["interpretation"]
        lines.append(
            f"  - interpretation — {it['what']}: satisfiable alone "
            f"{100 * float(it['satisfiable_alone']['share_infeasible']):.1f}% of "
            f"{it['satisfiable_alone']['cross_pairs']:,}; all pairs "
            f"{100 * float(it['all_pairs']['share_infeasible']):.1f}% of {it['all_pairs']['cross_pairs']:,}"
        )
    if d.get("score_regime"):
        sr = d["score_regime"]
        lines.append(
            "  - score regime: "
            + ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in sr.items())
        )
    return lines


def _written(x: dict) -> str:
    c = x.get("rule_commit")
    return f"written in commit `{c[:10]}` ({x.get('rule_date')})" if c else "**no commit recorded for this text**"


def _details(x: dict, out: Path, figures: list[dict]) -> list[str]:
    """A claim's section: anchor, kind, check and verdict, paper and ours, the rule and its commit,
    the parts, earlier rules with their verdicts, the diagnosis, and the figures it rests on."""
    from experiments.ledger import anchor

    lines = [
        f'<a id="{anchor(x["id"])}"></a>',
        "",
        f"### {x['id']}",
        "",
        f"- **{x['verdict']}** ({x.get('kind', '–')}; check {x['check']})",
        f"- paper: {x['paper']}",
        f"- ours: {x['ours']}",
        f"- rule ({_written(x)}): {x['rule']}",
    ]
    for p in x.get("parts") or []:
        lines.append(
            f"  - {'holds' if p['holds'] else 'fails'}{' (core)' if p.get('core') else ''}: {p['name']} — {p['detail']}"
        )
    for e in x.get("revisions") or []:
        lines.append(
            f"- ⚑ **earlier rule** (commit `{(e['commit'] or '')[:10]}`, {e['date']}), replaced after this claim had a "
            f"verdict: {e['rule']} — on this run's witness: **{e['verdict'] or '–'}**"
            + (f" ({e['reason']})" if e.get("reason") else "")
        )
    if x["verdict"] != "reproduced" and not x.get("parts"):
        lines.append(f"- reason: {x['reason']}")
    d = x.get("diagnosis") or {}
    if d.get("summary"):
        lines += _diagnosis_lines(d)
    figs = _figure_links(out, figures, x["id"])
    if figs:
        lines += ["", *figs]
    return lines + [""]


def render_report(R: Path, run: Run, rows: list[dict], quick: bool, label: str, embedder: str) -> str:
    """REPORT.md: its first line the counts by kind (:func:`theory.verdict.headline`, empirical
    first), then the verdict table (every ledger row and every theory claim, each linking to its
    section), the rules revised after a claim had a verdict (with the earlier rule's verdict), one
    section per claim with the figures it rests on, the benchmark table, failures, inputs and
    timings."""
    from experiments.ledger import anchor, every_claim, revision_flag, verdict_table
    from theory.verdict import headline

    theory = _load(R / "theory.json") or {}
    claims = theory.get("claims", [])
    every = every_claim(rows, claims)
    skipped = getattr(run, "skipped", {}) or {}
    counted = [x for x in every if x.get("part") not in skipped]
    n_skipped = len(every) - len(counted)
    out = getattr(run, "out", R.parent)
    figures = getattr(run, "figures", []) or []
    lines = [
        headline(counted) + (f"; {n_skipped} skipped (their data absent)" if n_skipped else ""),
        "",
        "# Fortunate Recall — reproduction report",
        "",
        f"Suite: `{label}`; embedder: `{embedder}` (every part; see *Inputs*); "
        f"{'quick (reduced grids)' if quick else 'full run'}. "
        "Every number below was produced by this run; the commands are in `manifest.json`.",
        "",
        "Each claim has a **kind**: *empirical* (measured on a suite: our data, our machine) or *formal* (a proof, "
        "witness, identity or computation on the paper's own figures: a formal claim *reproduced* is verified, and "
        "says nothing about data); the counts above keep them apart. Two results per claim, never merged: **check** "
        "— our computation ran and its certificates re-verified (pass / fail / error); **verdict** — whether the "
        "paper's statement holds on this suite (reproduced / partly reproduced / not reproduced / not comparable), "
        "decided by the rule printed with the claim, with the commit that wrote the rule's text "
        "(`results/ledger.json`, `results/theory.json`). A rule revised after its claim had a verdict is flagged ⚑, "
        "with the earlier rule's verdict on the same witness. The paper measured its own system (LLM extraction, "
        "Graphiti or its bank, an LLM judge) on its own data; nothing here was tuned to match.",
        "",
        "## Verdicts",
        "",
        *verdict_table(rows, claims, link=True),
        "",
    ]
    revised = [x for x in every if x.get("rule_revised")]
    if revised:
        lines += ["## Rules revised after a verdict", ""]
        for x in revised:
            lines.append(f"- [**{x['id']}**](#{anchor(x['id'])}): now **{x['verdict']}**; {revision_flag(x)}")
        lines.append("")
    unrecorded = [x["id"] for x in every if x.get("rule_unrecorded")]
    if unrecorded:
        lines += [
            "## Rules with no recorded commit",
            "",
            "These rules' texts are not in `theory/rule_record.json` (edited without regenerating it): "
            + ", ".join(unrecorded),
            "",
        ]
    lines += ["## Claims", ""]
    for x in every:
        lines += _details(x, out, figures)
    md = R / "bench.md"
    if md.exists():
        lines += ["## Benchmark (every system)", "", md.read_text(), ""]
    lme = R / "longmemeval" / "summary.md"
    if lme.exists():
        lines += ["## LongMemEval (every system)", "", lme.read_text(), ""]
    if figures:
        lines += ["## Figures and tables", "", *_figure_links(out, figures, None), ""]
    if run.failures:
        lines += ["## Failures", ""] + [f"- **{f['part']}**: {f['error']}" for f in run.failures] + [""]
    if skipped:
        lines += ["## Skipped", ""] + [f"- **{k}**: {v}" for k, v in skipped.items()] + [""]
    if getattr(run, "inputs", None):
        lines += (
            ["## Inputs (per part)", ""]
            + [f"- {k}: " + ", ".join(f"{a} `{b}`" for a, b in v.items()) for k, v in run.inputs.items()]
            + [""]
        )
    lines += ["## Timings (s)", "", ", ".join(f"{k}: {v}" for k, v in run.timings.items()), ""]
    return "\n".join(lines)


def exit_code(manifest: dict) -> int:
    """1 when any part raised or any check did not pass; verdicts never change the status."""
    return 1 if manifest["failures"] else 0


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "reproduce", help="run theory, benchmark, sweeps, latency and regenerate every figure and table"
    )
    p.add_argument("--out", default="paper_figures/out")
    p.add_argument("--quick", action="store_true", help="reduced grids for a first look (under 10 minutes)")
    p.add_argument(
        "--suite",
        default="synthetic",
        help="'synthetic' (built-in generator, default) or a suite file/folder, e.g. ../shared/data/lifemembench",
    )
    p.add_argument("--personas", type=int, default=None)
    p.add_argument("--embedder", default="minilm")
    p.add_argument("--scheduler", help="Dask scheduler address for the sweep grid")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--longmemeval",
        default=None,
        metavar="FILE",
        help="LongMemEval file for the LongMemEval part (default: its development part, "
        "../shared/data/longmemeval/longmemeval_s_dev.json.gz)",
    )
    p.set_defaults(
        func=lambda a: exit_code(
            reproduce(Path(a.out), a.quick, a.suite, a.personas, a.embedder, a.scheduler, a.seed, a.longmemeval)
        )
    )
