"""``fr theory``: run every registered claim; print claim · check · verdict · paper · ours; write JSON.

Each claim gets two results, never merged (:mod:`theory.verdict`): ``check`` (pass / fail /
error: the computation ran and its certificates re-verified) and ``verdict`` against the paper,
decided by the rule stated with the claim. A claim that is not reproduced (or only partly) is
diagnosed (:mod:`theory.diagnose`). Claims that need a corpus get the built-in generated suite
or ``--suite PATH``, read exactly as ``fr bench run`` reads it, with the same embedder (MiniLM
by default). A claim that raises is reported with ``check = error`` and the rest still run; the
exit code is 1 if any check failed or errored — a *not reproduced* verdict is a finding, not a
failure.
"""

from __future__ import annotations

import importlib
import json
import math
import traceback
from typing import Any

from ._base import CLAIMS, ClaimResult
from .revisions import REVISIONS
from .rule_record import provenance
from .verdict import ERROR, FAIL, NOT_COMPARABLE, PASS, REPRODUCED, headline, unverified

#: Modules registering claims.
CLAIM_MODULES = ("theory.formal", "theory.witnesses", "theory.corpus_claims", "theory.search", "theory.eps_frcore")

#: The ``fr theory --json`` keys of each claim (the output contract other tools read).
RECORD_KEYS = (
    "id",
    "kind",
    "title",
    "paper",
    "method",
    "range",
    "ours",
    "check",
    "verdict",
    "rule",
    "rule_commit",
    "rule_date",
    "rule_revised",
    "revisions",
    "reason",
    "parts",
    "diagnosis",
    "inputs",
)
#: Keys a claim's witness may lift into its record (issue 14's contract): the search's histories
#: tried and disagreements, the ε-relaxation's measured L, Δmin and queries meeting the condition.
RECORD_EXTRAS = ("tried", "disagreements", "lipschitz", "delta_min", "queries_satisfying")


def load_claim_modules() -> list[str]:
    """Import every claim module; returns those imported."""
    for m in CLAIM_MODULES:
        importlib.import_module(m)
    return list(CLAIM_MODULES)


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if hasattr(x, "tolist"):
        return _jsonable(x.tolist())
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return x


def run_claims(
    context, ids: list[str] | None = None, *, diagnose: bool = True, inputs: dict | None = None
) -> list[dict]:
    """Run claims (all, or ``ids``) with a :class:`theory.diagnose.Context` (whose corpus is
    built once, only if a claim needs it). Returns one record per claim with the keys of
    :data:`RECORD_KEYS` plus ``witness``."""
    out = []
    for cid, c in CLAIMS.items():
        if ids and cid not in ids:
            continue
        rec: dict[str, Any] = {
            "id": c.id,
            "kind": c.kind,
            "title": c.title,
            "paper": c.paper,
            "method": c.method,
            "range": c.range or (f"corpus: {(inputs or {}).get('suite', '?')}" if c.needs_corpus else ""),
            "rule": c.rule.text,
            "diagnosis": None,
            "inputs": dict(inputs or {}) if c.needs_corpus else {"corpus": None},
        }
        try:
            res = c.check(context.corpus if c.needs_corpus else None)
            if not isinstance(res, ClaimResult):
                raise TypeError(f"check returned {type(res).__name__}, not ClaimResult")
        except Exception as e:
            v = unverified(ERROR, f"{type(e).__name__}: {e}")
            rec.update(
                ours=f"error: {type(e).__name__}: {e}",
                check=ERROR,
                verdict=v.verdict,
                reason=v.reason,
                parts=[],
                witness={"traceback": traceback.format_exc()},
            )
            rec.update(provenance(c.id, c.rule, REVISIONS.get(c.id, ()), None))
            out.append(rec)
            continue
        check = PASS if res.passed else FAIL
        rec.update(ours=res.ours, check=check, witness=_jsonable(dict(res.witness)))
        if isinstance(res.witness.get("range"), str):  # what this run covered
            rec["range"] = res.witness["range"]
        rec.update({k: rec["witness"][k] for k in RECORD_EXTRAS if k in rec["witness"]})
        try:
            v = c.rule.decide(res.witness) if check == PASS else unverified(FAIL, res.ours)
        except Exception as e:
            rec["check"] = ERROR
            v = unverified(ERROR, f"rule: {type(e).__name__}: {e}")
        rec.update(verdict=v.verdict, reason=v.reason, parts=[p.as_dict() for p in v.parts])
        rec.update(provenance(c.id, c.rule, REVISIONS.get(c.id, ()), res.witness if rec["check"] == PASS else None))
        if (
            diagnose
            and c.diagnose is not None
            and rec["check"] == PASS
            and v.verdict not in (REPRODUCED, NOT_COMPARABLE)
        ):
            try:
                rec["diagnosis"] = _jsonable(dict(c.diagnose(context, c, res, v)))
            except Exception as e:
                rec["diagnosis"] = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc(limit=6)}
        out.append(rec)
    return out


def n_failed(records: list[dict]) -> int:
    """Claims whose check failed or errored (the exit status counts these, not verdicts)."""
    return sum(r["check"] != PASS for r in records)


def format_table(records: list[dict]) -> str:
    """Plain-text table: claim, check, verdict, then the paper's statement, ours and the reason."""
    w0 = max([len(r["id"]) for r in records] + [5])
    lines = [f"{'claim':<{w0}}  {'check':<5}  verdict"]
    for r in records:
        lines.append(f"{r['id']:<{w0}}  {r['check'].upper():<5}  {r['verdict']}")
        pad = " " * (w0 + 9)
        lines.append(f"{pad}kind:   {r['kind']}")
        lines.append(f"{pad}paper:  {r['paper']}")
        lines.append(f"{pad}ours:   {r['ours']}")
        lines.append(f"{pad}rule:   {r['rule']} (written in {(r.get('rule_commit') or 'an unrecorded commit')[:10]})")
        for e in r.get("revisions") or []:
            lines.append(f"{pad}earlier rule ({e['commit'][:10]}): {e['verdict'] or '–'} — {e['rule']}")
        if r["verdict"] != REPRODUCED:
            lines.append(f"{pad}why:    {r['reason']}")
        d = r.get("diagnosis")
        if d and d.get("summary"):
            lines.append(f"{pad}cause:  {d['summary']}")
    return "\n".join(lines)


def verdict_counts(records: list[dict]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in records:
        out[r["verdict"]] = out.get(r["verdict"], 0) + 1
    return out


def write_json(records: list[dict], path: str, inputs: dict | None = None) -> None:
    """``{"inputs": ..., "claims": [...], "witnesses": {id: ...}}`` (the output contract)."""
    doc = {
        "inputs": inputs or {},
        "claims": [
            {k: r.get(k) for k in RECORD_KEYS} | {k: r[k] for k in (*RECORD_EXTRAS, "rule_unrecorded") if k in r}
            for r in records
        ],
        "witnesses": {r["id"]: r.get("witness") for r in records},
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(_jsonable(doc), f, indent=1, default=str)


def theory(
    suites,
    embedder,
    label: str,
    embedder_name: str,
    *,
    generated: bool,
    json_path: str | None = None,
    ids: list[str] | None = None,
    diagnose: bool = True,
    log=print,
    deep: bool = False,
    params=None,
    params_inputs: dict | None = None,
) -> list[dict]:
    """Run every claim on ``suites`` with ``embedder`` (shared with the caller, e.g. ``fr
    reproduce``), print the table and write the JSON. Returns the records. ``deep``: every
    search with the large budget and a fresh seed (:mod:`theory.depth`), recorded in the inputs.
    ``params``: the parameters the data claims score the corpus under (default parameters when
    None; the formal claims are about the released parameters and keep them), recorded in the
    inputs with ``params_inputs``."""
    from .depth import set_depth
    from .diagnose import Context

    load_claim_modules()
    d = set_depth(deep)
    inputs = {"suite": label, "embedder": embedder_name, "personas": len(suites)}
    if deep:
        inputs["deep"] = {"seed": d.seed}
    if params is not None:
        import frcore

        inputs["params"] = {**(params_inputs or {}), "changes_from_default": frcore.param_changes(params)}
    records = run_claims(
        Context(suites, embedder, label, generated=generated, params=params), ids, diagnose=diagnose, inputs=inputs
    )
    log(format_table(records))
    counts = verdict_counts(records)
    log(
        f"\nchecks: {len(records) - n_failed(records)}/{len(records)} pass; verdicts: "
        + ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
        + f"  [suite {label}, embedder {embedder_name}]"
    )
    log(headline(records))
    if json_path:
        write_json(records, json_path, inputs)
    return records


def _run(args) -> int:
    import frcore

    from .corpus import get_embedder, load_suites

    params = frcore.params_from_args(args)  # before anything runs: a bad file or override fails fast
    suites, label = load_suites(args.suite, args.personas, args.seed)
    ids = [x.strip() for x in args.only.split(",") if x.strip()] if args.only else None
    if ids:
        load_claim_modules()
        unknown = sorted(set(ids) - set(CLAIMS))
        if unknown:
            raise ValueError(f"--only: unknown claim id(s) {unknown}; known: {', '.join(CLAIMS)}")
    records = theory(
        suites,
        get_embedder(args.embedder),
        label,
        args.embedder,
        generated=args.suite in (None, "synthetic"),
        json_path=args.json,
        ids=ids,
        diagnose=not args.no_diagnose,
        deep=getattr(args, "deep", False),
        params=params,
        params_inputs=frcore.params_record(args),
    )
    return 1 if n_failed(records) else 0


def register(subparsers) -> None:
    import frcore
    from frcore.bench import add_suite_arguments

    p = subparsers.add_parser("theory", help="run every theory claim: check and verdict against the paper")
    add_suite_arguments(p, embedder_choices=("hash", "minilm"))
    frcore.add_params_arguments(p)
    p.add_argument("--only", help="comma-separated claim ids to run (default: all)")
    p.add_argument("--no-diagnose", action="store_true", help="skip the diagnosis experiments of claims not reproduced")
    p.add_argument(
        "--deep",
        action="store_true",
        help="run every search with a large example budget and a fresh seed (recorded); default: quick and "
        "deterministic",
    )
    p.add_argument("--json", help="write {inputs, claims: [...], witnesses: {...}} here")
    p.set_defaults(func=_run)
