"""``fr reproduce``: theory claims, the benchmark, every sweep and latency, then every figure and
table, into one folder with ``REPORT.md`` (our figures beside the paper's, the SPEC §8 ledger)
and ``manifest.json`` (every output with the command that made it, and any failures).

A failure in one part is reported and the rest still runs.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable


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

    def part(self, name: str, fn: Callable[[], Any]) -> Any:
        _log(f"{name} ...")
        t = time.perf_counter()
        try:
            value = fn()
        except Exception as e:  # keep going: one part failing must not stop the rest
            self.failures.append({"part": name, "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc(limit=8)})
            _log(f"{name} FAILED: {type(e).__name__}: {e}")
            value = None
        self.timings[name] = round(time.perf_counter() - t, 1)
        _log(f"{name} done in {self.timings[name]} s")
        return value

    def record(self, path: Path, kind: str, command: str) -> None:
        self.outputs.append({"path": str(Path(path).relative_to(self.out)) if Path(path).is_relative_to(self.out) else str(path), "kind": kind, "command": command})


def reproduce(out: Path, quick: bool = False, suite: str = "synthetic", personas: int | None = None, embedder_name: str = "minilm", scheduler: str | None = None, seed: int = 0) -> dict:
    from frcore.bench.cli import load_suites_arg, make_embedder
    from frcore.cli import main as fr_main

    out.mkdir(parents=True, exist_ok=True)
    run = Run(out)
    R = run.results
    n_personas = personas or (8 if quick else 20)
    suite_args = ["--suite", suite] + (["--personas", str(n_personas)] if suite == "synthetic" or personas else [])
    tag = " ".join(suite_args)

    # 1. theory
    def theory():
        cmd = ["theory", "--json", str(R / "theory.json")] + (["--suite", suite] if suite != "synthetic" else ["--personas", str(min(n_personas, 8))])
        code = fr_main(cmd)
        run.record(R / "theory.json", "results", "fr " + " ".join(cmd))
        return code

    run.part("theory", theory)

    # 2. benchmark (every system)
    suites, label = run.part("load suites", lambda: load_suites_arg(suite, n_personas if (suite == "synthetic" or personas) else None, seed)) or ([], suite)
    emb = run.part("embedder", lambda: make_embedder(embedder_name))

    def bench():
        from frcore.bench._metrics import markdown_table
        from frcore.bench._runner import run_benchmark

        res = run_benchmark(suites, "all", emb, suite_label=label, keep_terms=not quick)
        (R / "bench.json").write_text(json.dumps(res, default=str))
        (R / "bench.md").write_text(markdown_table(res) + "\n")
        cmd = f"fr bench run {tag} --systems all --embedder {embedder_name} --json bench.json"
        run.record(R / "bench.json", "results", cmd)
        run.record(R / "bench.md", "table", cmd)
        return res

    bench_res = run.part("benchmark", bench)

    def bench_gold():
        from frcore.bench._runner import run_benchmark

        res = run_benchmark(suites, "fr-full,flat-cosine,bm25,uniform-decay,overwrite", emb, gold_intent=True, suite_label=label, keep_terms=False)
        (R / "bench_gold_intent.json").write_text(json.dumps(res, default=str))
        run.record(R / "bench_gold_intent.json", "results", f"fr bench run {tag} --gold-intent --embedder {embedder_name} --json bench_gold_intent.json")

    run.part("benchmark (gold intent)", bench_gold)

    # 3. sweeps
    def sweeps():
        from experiments.sweeps import run_all

        only = ["multiplier", "alpha", "noise", "labels", "granularity", "holdout"]
        written = run_all(suites, emb, label, R, only, quick, scheduler, log=_log)
        for name, path in written.items():
            run.record(path, "results", f"fr sweep {tag} --embedder {embedder_name} --only {name}{' --quick' if quick else ''} --out results")

    run.part("sweeps", sweeps)

    # 4. latency
    def latency():
        cmd = ["latency", "--json", str(R / "latency.json")] + (["--quick"] if quick else [])
        code = fr_main(cmd)
        run.record(R / "latency.json", "results", "fr " + " ".join(cmd))
        return code

    run.part("latency", latency)

    # 5. figures and tables
    def figures():
        from paper_figures.build import build_all

        res = build_all(R, out / "figures")
        for o in res.get("outputs", []):
            run.record(Path(o["path"]), o["kind"], o["command"])
        for f in res.get("failures", []):
            run.failures.append({"part": f"figure {f.get('script')}", "error": f.get("error")})

    run.part("figures", figures)

    # 6. report
    report = out / "REPORT.md"
    run.part("report", lambda: report.write_text(render_report(R, run, quick=quick, label=label, embedder=embedder_name)))
    run.record(report, "table", "fr reproduce" + (" --quick" if quick else ""))
    manifest = {"outputs": run.outputs, "failures": run.failures, "timings_s": run.timings, "suite": label, "embedder": embedder_name, "quick": quick}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, default=str))
    _log(f"wrote {report} and {out / 'manifest.json'} ({len(run.outputs)} outputs, {len(run.failures)} failures)")
    return manifest


def _load(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except Exception:
        return None


def _pct(x) -> str:
    return "–" if x is None else f"{100 * float(x):.1f}%"


def render_report(R: Path, run: Run, quick: bool, label: str, embedder: str) -> str:
    """REPORT.md: the SPEC §8 ledger — each paper claim beside our figure."""
    bench = _load(R / "bench.json") or {}
    theory = _load(R / "theory.json") or {}
    lat = _load(R / "latency.json") or {}
    mult = _load(R / "sweep_multiplier.json") or {}
    alpha = _load(R / "sweep_alpha.json") or {}
    noise = _load(R / "sweep_noise.json") or {}
    labels = _load(R / "sweep_labels.json") or {}
    gran = _load(R / "sweep_granularity.json") or {}
    hold = _load(R / "sweep_holdout.json") or {}
    claims = {c["id"]: c for c in theory.get("claims", [])}
    sysr = bench.get("systems", {})

    def sp(name, key="pass"):
        return sysr.get(name, {}).get("overall", {}).get(key)

    def claim(cid):
        c = claims.get(cid)
        return "–" if c is None else f"{c['ours']} ({'pass' if c['passed'] else 'FAIL'})"

    lat_k20 = next((r["median_us"] for r in lat.get("results", []) if r.get("impl") == "jax" and r.get("k") == 20), None)
    slope = lat.get("slope_ns", {}).get("jax")
    other = lat.get("other_dispatch") or {}
    other_k20 = next((r["median_us"] for r in other.get("results", []) if r.get("impl") == "jax" and r.get("k") == 20), None)
    lat_mode = (lat.get("machine") or {}).get("cpu_dispatch", "?")
    lat_text = "–"
    if lat_k20 and slope is not None:
        lat_text = f"{lat_k20:.1f} μs at k=20 ({lat_mode} CPU dispatch"
        lat_text += f"; {other_k20:.1f} μs with {other.get('cpu_dispatch')} dispatch" if other_k20 else ""
        lat_text += f"); {slope:.1f} ns/candidate (jitted JAX, this 2-core machine)"
    slot = noise.get("summary", {}).get("slot_key", {})
    slot_hi = slot.get(max(slot, key=float)) if slot else None
    lab = labels.get("summary", {}).get("label_pair", {})
    g_rows = gran.get("rows", [])
    rows = [
        ("47 μs median at k=20; 1.96 μs/candidate", "latency scaling", lat_text),
        ("P_e ≥ 1/2 for (σ, Δt) scorers; basis minimal; 3′, 3″", "theory", "; ".join(claim(c) for c in ("thm1", "thm2", "thm3p", "thm3pp"))),
        ("99.8% of 1,566 cross-pairs infeasible under global α; 0 feasible 11x11 cells", "theory A.10", claim("a10_global_alpha")),
        ("10 of 11 categories tolerate 0.25x–4x at Jaccard ≥ 0.95", "multiplier sweep", f"{mult.get('n_whole_range', '–')} of 11 tolerate the whole range" + ("; RELATIONAL_BONDS " + str(mult.get("per_category", {}).get("RELATIONAL_BONDS", {}).get("feasible")) if mult else "")),
        ("13.3pp predicted vs 12pp observed", "theory A.12", claim("a12_decomposition")),
        ("partition variances 3.60e-3 / 2.09e-2 / 4.69e-2; 4.2x", "theory A.5", claim("a5_partition")),
        ("10% label noise → Jaccard 0.974; 50% → 0.905, τ 0.897", "label perturbation", "; ".join(f"{r}: J {v['jaccard'][0]:.3f} ± {v['jaccard'][1]:.3f}, τ {v['tau'][0]:.3f}, {v['displaced_per_query'][0]:.2f} displaced/query" for r, v in sorted(lab.items(), key=lambda kv: float(kv[0]))) or "–"),
        ("slot-key noise: τ ≈ 0.997 while Jaccard falls to 0.76", "metadata-noise sweep", f"at the highest rate: τ {slot_hi['tau'][0]:.3f}, Jaccard {slot_hi['jaccard'][0]:.3f}" if slot_hi else "–"),
        ("gains saturate near 7 clusters", "granularity sweep", ", ".join(f"k={r['k']}: {_pct(r['pass'])}" for r in g_rows) + (f"; cognitive-3: {_pct(gran.get('cognitive_3', {}).get('pass'))}" if gran else "") if g_rows else "–"),
        ("full 72.9 / no-routing 66.7 / uniform 66.5 / baseline 60.7", "ablation table", f"fr-full {_pct(sp('fr-full'))} / fr-no-routing {_pct(sp('fr-no-routing'))} / fr-uniform-decay {_pct(sp('fr-uniform-decay'))} / flat-cosine {_pct(sp('flat-cosine'))}"),
        ("floors: Hit@1 19% → 31%; uniform α=0.3 drops AV8 to 12.5%", "ablations", f"Hit@1 fr-no-floors {_pct(sp('fr-no-floors', 'hit@1'))} → fr-full {_pct(sp('fr-full', 'hit@1'))}; AV8 at uniform α=0.3: {_pct(alpha.get('uniform_alpha_0.3_per_av', {}).get('AV8'))} (fr-full {_pct(alpha.get('fr_full_per_av', {}).get('AV8'))})"),
        ("66.8% of entries have primary weight < 0.90; 2.0 categories per entry", "corpus statistics", claim("a14_corpus")),
        ("20/20 persona holdout: 77.0% vs 76.8%", "holdout", f"held-out half: calibrated α {_pct(hold.get('calibrated_pass_test'))} vs default {_pct(hold.get('default_pass_test'))}" if hold else "–"),
    ]
    lines = [
        "# Fortunate Recall — reproduction report",
        "",
        f"Suite: `{label}`; embedder: `{embedder}`; {'quick (reduced grids)' if quick else 'full run'}. "
        "Every number below was produced by this run; the commands are in `manifest.json`. Where our figure differs "
        "from the paper's, the paper measured its own system (LLM extraction, Graphiti / its bank, LLM judge) on its own data; "
        "ours is judge-free retrieval scoring on the suite named above. Nothing was tuned to match.",
        "",
        "## Ledger (SPEC §8)",
        "",
        "| paper claim | where | ours |",
        "|---|---|---|",
        *[f"| {a} | {b} | {c} |" for a, b, c in rows],
        "",
    ]
    md = R / "bench.md"
    if md.exists():
        lines += ["## Benchmark (every system)", "", md.read_text(), ""]
    if claims:
        lines += ["## Theory claims", "", "| claim | paper | ours | result |", "|---|---|---|---|"]
        lines += [f"| {c['id']}: {c['title']} | {c['paper']} | {c['ours']} | {'pass' if c['passed'] else 'FAIL'} |" for c in theory.get("claims", [])]
        lines.append("")
    if run.failures:
        lines += ["## Failures", ""] + [f"- **{f['part']}**: {f['error']}" for f in run.failures] + [""]
    lines += ["## Timings (s)", "", ", ".join(f"{k}: {v}" for k, v in run.timings.items()), ""]
    return "\n".join(lines)


def register(subparsers) -> None:
    p = subparsers.add_parser("reproduce", help="run theory, benchmark, sweeps, latency and regenerate every figure and table")
    p.add_argument("--out", default="paper_figures/out")
    p.add_argument("--quick", action="store_true", help="reduced grids for a first look (under 10 minutes)")
    p.add_argument("--suite", default="synthetic", help="'synthetic' (built-in generator, default) or a suite file/folder, e.g. ../shared/data/lifemembench")
    p.add_argument("--personas", type=int, default=None)
    p.add_argument("--embedder", default="minilm")
    p.add_argument("--scheduler", help="Dask scheduler address for the sweep grid")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=lambda a: 0 if not reproduce(Path(a.out), a.quick, a.suite, a.personas, a.embedder, a.scheduler, a.seed)["failures"] else 1)
