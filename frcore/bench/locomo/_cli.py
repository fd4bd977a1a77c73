"""``fr bench locomo``: read the data, run, write the JSON and print the tables."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..._params_io import add_params_arguments, param_changes, params_from_args
from ._data import DEFAULT_DATA, load_locomo
from ._report import markdown_locomo
from ._run import run_locomo


def _cli(args) -> int:
    from .._inputs import make_embedder, parse_kv

    base = params_from_args(args)  # before anything runs: a bad file or override fails fast
    overrides = dict(parse_kv("--pipeline", x, strings=True) for x in args.pipeline) or None
    data = load_locomo(args.data, args.conversations)
    emb = make_embedder(args.embedder)
    result = run_locomo(
        data,
        args.systems,
        emb,
        base_params=base,
        n_boot=args.n_boot,
        keep_questions=args.questions,
        pipeline_overrides=overrides,
    )
    if base is not None:
        result["param_overrides"] = param_changes(base)
    if args.params:
        result["params_file"] = str(args.params)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, default=str, indent=1))
    table = markdown_locomo(result)
    print(table)
    if args.markdown:
        Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
        Path(args.markdown).write_text(table)
    c = result["counts"]
    print(
        f"\n{c['conversations']} conversations, {c['qa']} questions, {len(result['systems'])} systems in "
        f"{result['seconds']} s",
        file=sys.stderr,
    )
    return 0


def register_locomo(sub) -> None:
    """Add ``fr bench locomo`` to the ``fr bench`` sub-parsers."""
    p = sub.add_parser("locomo", help="LoCoMo evidence retrieval (recall@k per QA category)")
    p.add_argument("--data", default=None, help=f"path of locomo10.json (default {DEFAULT_DATA})")
    p.add_argument(
        "--systems",
        default="fr-full,fr-plus,flat-cosine,bm25,uniform-decay",
        help="comma-separated system names (default: fr-full,fr-plus,flat-cosine,bm25,uniform-decay)",
    )
    p.add_argument("--embedder", default="minilm", help="minilm (default, cached) or hash")
    p.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    p.add_argument("--n-boot", type=int, default=10000, help="bootstrap resamples (default 10000)")
    p.add_argument("--questions", action="store_true", help="keep the per-question records in the JSON")
    p.add_argument(
        "--pipeline",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a PipelineConfig field on every FR system (repeatable)",
    )
    add_params_arguments(p)
    p.add_argument("--json", required=True, help="write the result here")
    p.add_argument("--markdown", help="also write the markdown table here")
    p.set_defaults(func=_cli)
