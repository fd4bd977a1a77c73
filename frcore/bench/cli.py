"""``fr bench run|report|locomo|longmemeval``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .._params_io import add_params_arguments, params_from_args
from ._cluster import add_scheduler_argument
from ._inputs import add_suite_arguments, load_suites_arg, make_embedder, parse_kv
from .locomo import register_locomo
from .longmemeval import register_longmemeval


def _run(args) -> int:
    from ._metrics import markdown_table
    from ._runner import run_benchmark

    base = params_from_args(args)  # before anything runs: a bad file or override fails fast
    pipeline = dict(parse_kv("--pipeline", x, strings=True) for x in args.pipeline)
    ann = _ann_from_args(args)
    suites, label = load_suites_arg(args.suite, args.personas, args.seed)
    emb = make_embedder(args.embedder)
    result = run_benchmark(
        suites,
        args.systems,
        emb,
        gold_intent=args.gold_intent,
        suite_label=label,
        keep_terms=not args.no_terms,
        base_params=base,
        pipeline_overrides=pipeline or None,
        ann=ann,
        raw_turns=args.raw_turns,
        scheduler=args.scheduler,
    )
    if args.params:
        result["params_file"] = str(args.params)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, default=str))
    table = _raw_turns_line(result) + markdown_table(result)
    print(table)
    if args.markdown:
        Path(args.markdown).write_text(table + "\n")
    print(
        f"\n{result['n_personas']} personas, {result['n_questions']} questions, {len(result['systems'])} systems in "
        f"{result['seconds']} s",
        file=sys.stderr,
    )
    return 0


def _raw_turns_line(result) -> str:
    """The line a raw-turn result's table starts with (empty for the normal mode)."""
    if not result.get("raw_turns"):
        return ""
    return f"raw-turn mode: {result['n_scorable']} of {result['n_suite_questions']} questions scorable\n\n"


def _ann_from_args(args):
    """``--ann``: every persona's bank ranks through an approximate index, whatever its size."""
    if not args.ann:
        if args.ann_candidates is not None:
            raise ValueError("--ann-candidates: only with --ann")
        return None
    from ..bank import AnnConfig

    if args.ann_candidates is None:
        return AnnConfig(min_rows=0)
    return AnnConfig(min_rows=0, candidates=args.ann_candidates)


def _report(args) -> int:
    from ._metrics import markdown_table

    result = json.loads(Path(args.result).read_text())
    print(_raw_turns_line(result) + markdown_table(result))
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("bench", help="LifecycleBench: run systems on suites and report")
    sub = p.add_subparsers(dest="command_bench", metavar="ACTION", required=True)
    r = sub.add_parser("run", help="run systems on a suite (file, folder, or 'synthetic')")
    add_suite_arguments(r)
    r.add_argument("--systems", default="all", help="comma-separated system names, or 'all'")
    r.add_argument(
        "--gold-intent", action="store_true", help="use the suite's intent labels instead of inferring intent"
    )
    r.add_argument("--json", help="write the full result (with per-question records) here")
    r.add_argument("--markdown", help="also write the markdown table here")
    r.add_argument("--no-terms", action="store_true", help="omit per-result score terms from the records")
    r.add_argument(
        "--pipeline",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a PipelineConfig field on every FR system, e.g. hybrid_weight=0.3 (repeatable)",
    )
    r.add_argument(
        "--ann",
        action="store_true",
        help="rank through FR-Bank's approximate nearest-neighbour index (built for every bank, whatever its size), "
        "to compare with the exact cosine",
    )
    r.add_argument(
        "--ann-candidates",
        type=int,
        default=None,
        metavar="N",
        help="with --ann: rows the approximate index proposes per query (default 1,000: every row of a persona's "
        "bank; fewer exercise the approximation)",
    )
    r.add_argument(
        "--raw-turns",
        action="store_true",
        help="raw-turn mode: each bank holds every user turn of the suite (critical sessions included) and no gold "
        "fact; only the questions whose support names a turn are scored (the others are listed in the JSON)",
    )
    add_params_arguments(r)
    add_scheduler_argument(r)
    r.set_defaults(func=_run)
    rep = sub.add_parser("report", help="print the tables of a saved result")
    rep.add_argument("result")
    rep.set_defaults(func=_report)
    register_locomo(sub)
    register_longmemeval(sub)
