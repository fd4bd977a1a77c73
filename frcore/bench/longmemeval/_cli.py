"""``fr bench longmemeval``: read the data, run, write the logs and summary, print the tables."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..._params_io import add_params_arguments, param_changes, params_from_args
from .._cluster import add_scheduler_argument
from ._data import DEFAULT_DATA, GRANULARITIES, load_longmemeval
from ._report import markdown_longmemeval
from ._run import DEFAULT_SYSTEMS, resolve, run_longmemeval


def _cli(args) -> int:
    from .._inputs import make_embedder, parse_kv

    base = params_from_args(args)  # before anything runs: a bad file or override fails fast
    overrides = dict(parse_kv("--pipeline", x, strings=True) for x in args.pipeline) or None
    types = [t.strip() for t in args.types.split(",") if t.strip()] if args.types else None
    resolve(args.systems)  # an unknown system fails before the data is read
    data = load_longmemeval(args.data, args.granularity, types, args.questions)
    emb = make_embedder(args.embedder)
    summary = run_longmemeval(
        data,
        args.systems,
        emb,
        args.out,
        base_params=base,
        n_boot=args.n_boot,
        pipeline_overrides=overrides,
        scheduler=args.scheduler,
    )
    if base is not None:
        summary["param_overrides"] = param_changes(base)
        Path(args.out, "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    print(markdown_longmemeval(summary))
    c = summary["counts"]
    print(
        f"\n{c['questions']} questions, {len(summary['systems'])} systems in {summary['seconds']['total']} s "
        f"(embedding {summary['seconds']['embedding']} s); logs and summary in {args.out}",
        file=sys.stderr,
    )
    return 0


def register_longmemeval(sub) -> None:
    """Add ``fr bench longmemeval`` to the ``fr bench`` sub-parsers."""
    p = sub.add_parser(
        "longmemeval", help="LongMemEval retrieval (recall_any/recall_all/ndcg_any@k, the benchmark's logs)"
    )
    p.add_argument("--data", default=None, help=f"LongMemEval JSON (.json or .json.gz; default {DEFAULT_DATA})")
    p.add_argument("--types", default=None, help="only these question types (comma-separated)")
    p.add_argument(
        "--systems", default="all", help=f"comma-separated system names (default all: {','.join(DEFAULT_SYSTEMS)})"
    )
    p.add_argument(
        "--questions", type=int, default=None, metavar="N", help="only the first N questions (after --types)"
    )
    p.add_argument("--granularity", default="turn", choices=GRANULARITIES, help="corpus items (default turn)")
    p.add_argument("--embedder", default="minilm", help="minilm (default, cached) or hash")
    p.add_argument("--n-boot", type=int, default=10000, help="bootstrap resamples (default 10000)")
    p.add_argument(
        "--pipeline",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a PipelineConfig field on every FR system (repeatable)",
    )
    add_params_arguments(p)
    add_scheduler_argument(p)
    p.add_argument("--out", required=True, help="folder for <system>.jsonl, summary.json and summary.md")
    p.set_defaults(func=_cli)
