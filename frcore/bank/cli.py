"""``fr bank init|add|retract|erase|purge|quarantine|query|explain|export|serve-local``, and the actions
declared in the entry-point group :data:`ACTION_ENTRY_POINT_GROUP` (``bench``, from experiments/).

Every failure is one line on stderr naming the file (and, for a fact, where it is, its id and
the field), with exit status 2; nothing is written by a failed command. ``add`` reads at most
:data:`MAX_INPUT_BYTES` of a facts file or of standard input (``-``; ``--max-bytes`` sets
another limit) and prints the warnings of what it accepted (``Added.warnings``) on stderr.
``query``, ``explain``, ``export`` and ``quarantine`` (without ``--release``) open the bank
read-only: they never write (also on read-only storage).

The embedder: a bank records the one it was created with (``init`` / the first ``add``;
default MiniLM) and every command uses it; ``--embedder`` naming another one is an error naming
both.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import stat
import sys
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from .._shown import shown
from ._facts_file import MAX_INPUT_BYTES, STDIN, load_facts

#: the entry-point group of the ``fr bank`` actions implemented outside frcore (``name = "module:register"``)
ACTION_ENTRY_POINT_GROUP = "frcore.bank.commands"


ANN_HELP = (
    "rank with the approximate nearest-neighbour index (faiss's product quantizer with fast scan, re-ranked "
    "exactly; for banks of 50,000 facts or more; docs/performance.md)"
)


def _open(args, readonly: bool = False, params=None):
    from ._bank import Bank

    return Bank.open(
        args.path,
        embedder=args.embedder,
        params=params,
        readonly=readonly,
        create=False,
        user=_user(args),
        ann=bool(getattr(args, "ann", False)),
        derive=bool(getattr(args, "derive", False)),
    )


def _user(args) -> str:
    """The ``--user`` of a command (the bank's owner without it), checked."""
    from .records import check_user

    return check_user(getattr(args, "user", None), "--user")


def _excerpt(text: str, limit: int = 70) -> str:
    """One line of ``text`` for a listing: control characters escaped, shortened with an ellipsis."""
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _quarantine_lines(held: list[dict]) -> list[str]:
    """What ``add`` says about the facts it stored in quarantine: a slot update is never dropped silently."""
    lines = []
    for q in held:
        where = "" if q["field"] == "text" else f" in its {q['field']}"
        lines.append(f"quarantined {q['id']}: rule {q['rule']}{where}")
        if q.get("slot") is not None:
            lines.append(
                f"  update to slot {q['slot']} held in quarantine (rule {q['rule']}); "
                f"`fr bank quarantine BANK --release {q['id']}` releases it"
            )
    return lines


def _print_result(res, full: bool) -> None:
    print(f"query: {res.query!r}  at {res.at.isoformat()}  intent: {res.intent} ({res.intent_rule})")
    if res.categories:
        print("routing: " + ", ".join(f"{k}={v:.2f}" for k, v in sorted(res.categories.items(), key=lambda kv: -kv[1])))
    if res.question is not None:
        print(question_line(res.question))
    print(f"candidates: {res.n_candidates} after dedup, {res.n_distilled} after distillation")
    for rank, r in enumerate(res.results, 1):
        print(f"{rank:>2}. {r['score']:+.4f}  [{r['state']}] {r['id']}: {r['text']}")
        if full:
            for line in explanation_lines(r["explanation"]):
                print("      " + line)
            print(f"      stages={','.join(r['stages'])}")
            for line in derivation_lines(r.get("derivation")):
                print("      " + line)


def question_line(q: dict) -> str:
    """What the question's own words asked (``QueryResult.question``) as one line."""
    t = q.get("time")
    if t is None:
        when = "time words: none"
    else:
        span = f"window {t['start'] or '…'} .. {t['end'] or '…'}" if (t["start"] or t["end"]) else t["kind"]
        when = f"time words: {t['words']!r} → {span}" + (f", order {t['order']}" if t["order"] else "")
    return when + f"; coverage: {q['coverage']!r}" if q.get("coverage") else when


def explanation_lines(e: dict) -> list[str]:
    """One result's :func:`frcore.bank.pipeline.explanation` as text: σ and its sources, activation
    and blend, then the additive terms of the score (``name=value``, 6 decimals) and their total;
    the printed terms add up to the printed total (to the printed precision)."""
    summands = " + ".join(f"{n}={v:+.6f}" for n, v in e["summands"].items())
    if "sigma" not in e:  # a flat ranker: the similarity is the score
        return [f"{summands} = total={e['total']:+.6f}"]
    s = e["sigma"]
    g = s["hybrid_weight"]
    linked = f"linked={s['linked']:.4f}" + (f" (from {s['linked_from']})" if s["linked_from"] else "")
    sigma = f"sigma = {1 - g:.2f}*{linked} + {g:.2f}*bm25={s['bm25']:.4f} = {s['hybrid']:.4f}"
    if s["scale"] != "raw":
        sigma += f", scaled ({s['scale']})"
    if s.get("context") is not None:
        sigma += f"; from a neighbour {s['context']:.4f}"
    if s.get("window") is not None:
        sigma += f"; time window x{s['window']:g}"
    if s["kernel"] is not None:
        sigma += f"; kernel sigma={s['kernel']:.4f}"
    if s.get("time_order") is not None:
        sigma += f"; ranked by total {s['time_order']:+.4f} (the question's order)"
    return [
        f"cosine={s['cosine']:.4f}  {sigma}",
        f"activation={e['activation']:.4g} (rate={e['rate']:.4g}/h, age={e['age']:.4g} h)  blend={e['blend']:.4f}",
        f"{summands} = total={e['total']:+.6f}",
    ]


def derivation_lines(d: dict | None) -> list[str]:
    """A result's derived lifecycle metadata (:func:`frcore.bank.derive.explain_derivation`) as
    text: one line per derived link or event time, with its rule and evidence."""
    if not d:
        return []
    out = [] if d["reproduced"] else ["derived: the stored metadata is not what derivation gives now"]
    for e in d["evidence"]:
        if e["rule"] == "updates":
            out.append(
                f"derived {e['field']} {e['target']} (rule updates, confidence {e['confidence']}): "
                f"{e['claim']!r} after {e['earlier_claim']!r}; shared {', '.join(e['shared_key_words'])}; "
                f"values {e['earlier_values']} -> {e['values']}" + (f"; cue {e['cue']!r}" if e["cue"] else "")
            )
        elif e["rule"] == "retractions":
            out.append(f"derived retracts {e['target']} (rule retractions): {e['sentence']!r}")
        elif e["rule"] == "soft_updates":
            out.append(
                f"derived tentative_for {e['target']} (rule soft_updates): {e['statement']!r}; "
                f"shared {', '.join(e['shared_terms'])}; quantities {e['earlier_quantities']} -> {e['quantities']}"
                + (f"; cue {e['cue']!r}" if e["cue"] else "")
            )
        elif e["rule"] == "event_times":
            out.append(f"derived event_time (rule event_times): {e['expression']!r} ({e['kind']})")
        else:
            out.append(f"derived confidence 0.5 (rule tentative): {e['statements']}")
    return out


def write_out(path: str, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (a temporary file renamed into place; a
    device or pipe is written directly)."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise ValueError(f"--out {p}: {e.strerror}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise ValueError(f"--out {p}: is a directory")
    if st is not None and not stat.S_ISREG(st.st_mode):
        try:
            with open(p, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as e:
            raise ValueError(f"--out {p}: {e.strerror}; the export is incomplete") from None
        return
    if not p.parent.is_dir():
        raise ValueError(f"--out {p}: folder {str(p.parent)!r} does not exist; nothing was exported")
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except OSError as e:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise ValueError(f"--out {p}: {e.strerror}; nothing was exported") from None


def _emit(text: str) -> None:
    """Write ``text`` to stdout whole, or raise (``BrokenPipeError`` when the reader left, as in
    ``fr bank export BANK | head``). With unbuffered stdout (``PYTHONUNBUFFERED``), a plain
    ``print`` of a large text to a pipe whose reader left writes one pipe-full and silently
    drops the rest; here every short write is continued, so the broken pipe is seen."""
    sys.stdout.flush()
    out = getattr(sys.stdout, "buffer", None)
    if out is None:  # a text-only stream (a redirection in tests)
        sys.stdout.write(text)
        return
    view = memoryview(text.encode("utf-8"))
    while view:
        n = out.write(view)
        view = view[(len(view) if n is None else n) :]
    out.flush()


def _check_k(k: int) -> None:
    from ._bank import result_limit
    from .pipeline import PipelineConfig

    if k < 1:
        raise ValueError(f"--k {k}: must be at least 1")
    limit = result_limit(PipelineConfig())
    if limit is not None and k > limit:
        raise ValueError(
            f"--k {k}: at most {limit} results can be returned (the pipeline ranks its {limit} distilled "
            f"candidates); use --k {limit} or less"
        )


def run(args) -> int:
    """Run one ``fr bank`` action; every failure becomes one line (``ValueError`` for
    :func:`frcore.cli.main` to print, exit status 2)."""
    from .records import FactError
    from .storage import StoreError, storage_error

    path = getattr(args, "path", None)
    try:
        rc = _run(args)
        sys.stdout.flush()  # a full disk or closed pipe on stdout is reported here, not at exit
        return rc
    except StoreError as e:
        msg = str(e)
        if e.kind == "missing":
            msg += f" (create it with `fr bank init {path}`)"
        raise ValueError(_prefixed(args, msg)) from None
    except FactError as e:
        raise ValueError(str(e)) from None
    except sqlite3.Error as e:
        raise ValueError(_prefixed(args, str(storage_error(str(path), e)))) from None
    except BrokenPipeError:
        raise
    except OSError as e:
        if not e.filename:  # stdout itself failed (a full disk): frcore.cli.main also drops its buffer
            raise OSError(e.errno, f"cannot write the output: {e.strerror or e}") from None
        raise ValueError(f"{e.filename}: {e.strerror or e}") from None
    except RecursionError:
        raise ValueError("input nested too deeply to process") from None


def _shown_id(fid: str) -> str:
    return fid if fid.isprintable() else repr(fid)


def _json_id(text: str) -> str:
    """``--json-id``: the id argument is a JSON string literal (for characters a command line cannot carry)."""
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        value = None
    if not isinstance(value, str):
        raise ValueError(f"--json-id: {shown(text)} is not a JSON string literal (e.g. '\"a\\u0000b\"')")
    return value


def _prefixed(args, msg: str) -> str:
    """An erase that failed says that nothing was erased (it is one transaction)."""
    if args.command_bank != "erase":
        return msg
    if msg.startswith("erase:"):
        return f"{msg}; nothing was erased"
    return f"erase of {shown(args.id)} failed, nothing was erased: {msg}"


def _run(args) -> int:
    return _ACTIONS[args.command_bank](args)


def _init(args) -> int:
    from ._bank import EmbedderMismatch
    from .search import DEFAULT_EMBEDDER, embedder_identity
    from .storage import Store

    asked = embedder_identity(args.embedder or DEFAULT_EMBEDDER)
    p = Path(args.path)
    existed = p.is_file() and p.stat().st_size > 0
    with Store.open(args.path, create=True, embedder=asked) as store:
        n = store.count()
        recorded = store.recorded_embedder()
    if existed and args.embedder and recorded is not None and recorded != asked:
        raise EmbedderMismatch(
            f"{args.path}: already an FR-Bank with embedder {recorded[0]!r} ({recorded[1]}-d); "
            f"asked for {asked[0]!r} ({asked[1]}-d); unchanged"
        )
    shown = "" if recorded is None else f", embedder {recorded[0]} ({recorded[1]}-d)"
    print(
        f"{args.path}: already an FR-Bank ({n} edges{shown}); unchanged"
        if existed
        else f"initialised {args.path}{shown}"
    )
    return 0


def _purge(args) -> int:
    from .storage import Store

    with Store.open(args.path, create=False) as store:
        res = store.purge(timeout=args.wait)
    print(json.dumps(res) if args.json else res["note"])
    return 0 if res["purged"] else 1


def _export(args) -> int:
    from .storage import Store

    user = _user(args)
    with Store.open(args.path, readonly=True) as store:
        text = json.dumps(store.export(user=user), default=str, indent=1)
    if args.out:
        write_out(args.out, text)
        print(f"exported to {args.out}")
    else:
        _emit(text + "\n")
    return 0


def _quarantine(args) -> int:
    """List the facts held in quarantine, or (``--release``) release one: no embedder needed, the
    store records the release."""
    from .storage import Store

    if args.release is None and args.reason is not None:
        raise ValueError("--reason: only with --release ID (the reason a fact is released)")
    user = _user(args)
    if args.release is not None:
        with Store.open(args.path, create=False) as store:
            rec = store.release(args.release, reason=args.reason, user=user)
        if args.json:
            print(json.dumps(rec))
        else:
            print(
                f"{args.release}: already released at {rec['released_at']}; unchanged"
                if rec["unchanged"]
                else f"released {args.release} from quarantine (the owner's decision, recorded at {rec['released_at']})"
            )
        return 0
    with Store.open(args.path, readonly=True) as store:
        held = store.quarantine(include_released=args.all, user=user)
    if not args.show_text:  # no interface returns quarantined text unless asked (docs/serve.md)
        held = [{**q, "text": None} for q in held]
    if args.json:
        print(json.dumps({"quarantined": held}))
        return 0
    print(f"{len(held)} fact(s) in quarantine" + (" or released" if args.all else ""))
    for q in held:
        rule = q["rule"] if q["rule"] is not None else "(no rule fires now)"
        field = "" if q["field"] in (None, "text") else f" in {q['field']}"
        released = "" if q["released_at"] is None else f"  [released {q['released_at']}]"
        text = _excerpt(q["text"]) if q["text"] is not None else "(text hidden; --show-text shows it)"
        print(f"{q['id']}  slot={q['slot'] or '-'}  rule={rule}{field}{released}: {text}")
    return 0


def _fact_id(args) -> str:
    """The id argument of ``retract`` / ``erase`` (decoded with ``--json-id``)."""
    return _json_id(args.id) if args.json_id else args.id


def _retract(args) -> int:
    """Retract a fact: no embedder needed, the store does it."""
    from .._time import parse_time_arg
    from .storage import Store

    args.id = _fact_id(args)
    user = _user(args)
    with Store.open(args.path, create=False) as store:
        store.retract(args.id, at=parse_time_arg(args.at, "--at"), reason=args.reason, user=user)
        print(json.dumps({"retracted": args.id}) if args.json else f"retracted {_shown_id(args.id)}")
    return 0


def _erase(args) -> int:
    """Erase a fact: no embedder needed, the store does it."""
    from .storage import Store

    args.id = _fact_id(args)
    user = _user(args)
    with Store.open(args.path, create=False) as store:
        rec = store.erase(args.id, reason=args.reason, wait=args.wait, user=user)
    if args.json:
        print(json.dumps(rec, default=str))
    else:
        print(f"erased {_shown_id(args.id)}")
        print(("" if rec["purged"] else "note: ") + rec["note"])
    return 0


def _add(args) -> int:
    if args.max_bytes < 1:
        raise ValueError(f"--max-bytes {args.max_bytes}: must be at least 1")
    facts, labels = load_facts(args.file, args.max_bytes)  # a bad file fails before the bank is opened
    bank = _open(args)
    try:
        added = bank.add(facts, where=labels)
        for line in added.warnings:  # accepted, but said (docs/formats.md#warnings)
            print(f"fr bank: warning: {line}", file=sys.stderr)
        out = {
            "added": len(added),
            "ids": list(added),
            "unchanged": added.unchanged,
            "quarantined": added.quarantined,
            "warnings": added.warnings,
        }
        held = [q["id"] for q in added.quarantined]
        note = f", {len(held)} quarantined: {', '.join(held[:5])}{', …' if len(held) > 5 else ''}" if held else ""
        note += f"; {len(added.unchanged)} already stored, identical (skipped)" if added.unchanged else ""
        if args.json:
            print(json.dumps(out))
        else:
            print(f"added {len(added)} facts{note}")
            for line in _quarantine_lines(added.quarantined):
                print(line)
    finally:
        bank.close()
    return 0


def _query(args) -> int:
    """``query`` and ``explain``: the bank opened read-only."""
    from .._params_io import params_from_args

    _check_k(args.k)
    params = params_from_args(args)  # a bad parameter file or override fails before the bank opens
    bank = _open(args, readonly=True, params=params)
    try:
        # whatever lists score terms (explain, and query --json) carries their explanation
        retrieve = bank.explain if (args.command_bank == "explain" or args.json) else bank.query
        res = retrieve(
            args.text,
            at=args.at,
            k=args.k,
            intent=args.intent,
            known_at=args.known_at,
            categories=args.categories.split(",") if args.categories else None,
            params=params,
        )
        if args.json:
            print(json.dumps(res.to_dict(), default=str))
        else:
            _print_result(res, full=(args.command_bank == "explain"))
    finally:
        bank.close()
    return 0


def _serve_local(args) -> int:
    """``serve-local``: answer ``fr bank query|explain`` of this bank warm (:mod:`frcore.bank.warm`)."""
    from .warm import serve

    return serve(args.path)


#: the actions of ``fr bank`` implemented here, by name (those declared elsewhere run their own ``func``)
_ACTIONS = {
    "init": _init,
    "add": _add,
    "retract": _retract,
    "erase": _erase,
    "purge": _purge,
    "quarantine": _quarantine,
    "query": _query,
    "explain": _query,
    "export": _export,
    "serve-local": _serve_local,
}


def declared_actions() -> list[EntryPoint]:
    """The actions of ``fr bank`` declared in :data:`ACTION_ENTRY_POINT_GROUP`, sorted by name."""
    return sorted(entry_points(group=ACTION_ENTRY_POINT_GROUP), key=lambda ep: ep.name)


class _Actions(argparse._SubParsersAction):
    """The actions of ``fr bank``. A declared one is listed by name (``fr bank --help``) and loaded
    only when it is named, as ``fr`` loads a subcommand: its ``register(actions)`` then adds its
    parser, whose ``func(args) -> int`` runs it. One that cannot be loaded is an error naming it,
    with exit status :data:`frcore.cli.EXIT_UNAVAILABLE`."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.declared: dict[str, EntryPoint] = {}

    def declare(self, ep: EntryPoint) -> None:
        self.declared[ep.name] = ep
        self.add_parser(ep.name, add_help=False, help=f"declared by {ep.value} (`fr bank {ep.name} --help`)")

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        ep = self.declared.pop(values[0], None)
        if ep is not None:
            self._load(parser, ep)
        super().__call__(parser, namespace, values, option_string)

    def _load(self, parser, ep: EntryPoint) -> None:
        from ..cli import _report_unavailable, unavailable

        del self._name_parser_map[ep.name]  # the placeholder listed by fr bank --help
        self._choices_actions = [a for a in self._choices_actions if a.dest != ep.name]
        try:
            ep.load()(self)
            if ep.name not in self.choices:
                raise RuntimeError(f"register() added no parser {ep.name!r}")
        except Exception as e:  # as frcore.cli reports a subcommand that cannot be loaded
            parser.exit(_report_unavailable(unavailable(f"bank {ep.name}", ep.value, e)))


def _common(sp, with_json=True, embedder=True, user=True):
    """The arguments every ``fr bank`` action shares: the bank path, ``--user``, ``--embedder``, ``--json``."""
    sp.add_argument("path", help="bank file (SQLite)")
    if user:
        sp.add_argument(
            "--user",
            metavar="NAME",
            default=None,
            help="whose memory: read and write only this user's facts (default: the bank's owner)",
        )
    if embedder:
        sp.add_argument(
            "--embedder",
            default=None,
            help="minilm, hash or hash-<dim>; default: the bank's own (recorded when it was created; "
            "minilm for a new bank); another than the bank's own is an error",
        )
    if with_json:
        sp.add_argument("--json", action="store_true", help="machine-readable output")


def _writing_actions(sub) -> None:
    """The parsers of ``init``, ``add``, ``retract``, ``erase`` and ``purge``."""
    _common(
        sub.add_parser("init", help="create an empty bank (an existing bank is left unchanged)"),
        with_json=False,
        user=False,
    )
    sp = sub.add_parser(
        "add", help="add facts from JSON, JSONL or a suite file (identical facts already stored are skipped)"
    )
    _common(sp)
    sp.add_argument(
        "file", help=f"the facts: a JSON list, JSONL (suffix .jsonl) or a suite file; {STDIN} reads standard input"
    )
    sp.add_argument(
        "--max-bytes",
        type=int,
        default=MAX_INPUT_BYTES,
        metavar="N",
        help=f"refuse a facts file or standard input of more than N bytes, unread past them "
        f"(default {MAX_INPUT_BYTES:,}: {MAX_INPUT_BYTES // 2**20} MiB)",
    )
    sp.add_argument("--ann", action="store_true", help=ANN_HELP + "; this add builds or extends it when due")
    sp.add_argument(
        "--derive",
        action="store_true",
        help="give raw turns the lifecycle links, confidence and event times their words state (docs/derive.md)",
    )
    for name in ("retract", "erase"):
        sp = sub.add_parser(name, help=f"{name} a fact by id")
        _common(sp, embedder=False)
        sp.add_argument("id")
        sp.add_argument(
            "--json-id",
            action="store_true",
            help="ID is a JSON string literal, e.g. '\"a\\u0000b\"' (for characters a command line cannot carry)",
        )
        sp.add_argument("--reason")
        if name == "retract":
            sp.add_argument("--at", help="effective time (default now)")
        else:
            sp.add_argument(
                "--wait",
                type=float,
                default=2.0,
                help="seconds to wait for readers before the purge is reported pending (default 2)",
            )
    sp = sub.add_parser(
        "purge", help="finish a pending erase purge: checkpoint and truncate the WAL (exit 1 if readers still block it)"
    )
    _common(sp, embedder=False, user=False)
    sp.add_argument("--wait", type=float, default=30.0, help="seconds to wait for readers (default 30)")


def _reading_actions(sub) -> None:
    """The parsers of ``quarantine``, ``query``, ``explain`` and ``export``."""
    from .._params_io import add_params_arguments

    sp = sub.add_parser("quarantine", help="list the facts held in quarantine (prompt injection), or release one")
    _common(sp, embedder=False)
    sp.add_argument("--release", metavar="ID", help="release this fact as the owner's decision (recorded, append-only)")
    sp.add_argument("--reason", help="why it is released (with --release)")
    sp.add_argument("--all", action="store_true", help="also list the facts already released")
    sp.add_argument(
        "--show-text",
        action="store_true",
        help="show each held fact's text (hidden by default: it reads as an instruction)",
    )
    for name in ("query", "explain"):
        sp = sub.add_parser(name, help="retrieve" if name == "query" else "retrieve with every score term")
        _common(sp)
        add_params_arguments(sp)
        sp.add_argument("text")
        sp.add_argument("--ann", action="store_true", help=ANN_HELP + " (when the bank has one; else exact)")
        sp.add_argument("--at", help="query (valid) time, YYYY-MM-DD or ISO (default now)")
        sp.add_argument("--known-at", dest="known_at", help="transaction-time cut: what the bank knew then")
        sp.add_argument("--k", type=int, default=10, help="results (1 to 20, the pipeline's distilled candidates)")
        sp.add_argument(
            "--intent", help="override: current, historical, change_history, upcoming, retraction_aware, broad"
        )
        sp.add_argument("--categories", help="override routing: comma-separated category names")


def register(subparsers) -> None:
    p = subparsers.add_parser("bank", help="FR-Bank: a persistent lifecycle-aware memory store")
    sub = p.add_subparsers(dest="command_bank", metavar="ACTION", required=True, action=_Actions)
    _writing_actions(sub)
    _reading_actions(sub)
    for ep in declared_actions():
        sub.declare(ep)
    sp = sub.add_parser(
        "serve-local",
        help="answer `fr bank query|explain` of this bank from a warm process, over a private Unix socket "
        "(docs/serve.md)",
    )
    sp.add_argument("path", help="bank file (SQLite)")
    sp = sub.add_parser("export", help="export every edge, transition and audit record of one user as JSON")
    _common(sp, with_json=False)
    sp.add_argument("--out")
    p.set_defaults(func=run)
