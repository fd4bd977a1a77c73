"""``fr serve``: FR-Bank as a Model Context Protocol server (stdio, or streamable HTTP with ``--http``).

An agent reaches one bank through seven tools with typed input and output schemas —
``remember`` (facts, or raw conversation turns that the router categorises), ``recall``,
``forget`` (retract with a reason), ``erase``, ``explain``, ``history`` (every fact of one slot)
and ``stats`` — and the resource ``frbank://stats``. A refused call comes back as an MCP tool
error (``isError``) whose one line names the field, in the bank's own words
(``at: not a date 'YYYY-MM-DD' or ISO datetime: 'soon'``, ``retract: edge_id 'x9': no such
edge``). See docs/serve.md.

The contract is the CLI's: a ``remember`` fact is validated by the bank's parser alone, as
``fr bank add`` validates it (its ``user`` included); arguments are taken as sent, of their
schema's JSON type (never coerced), and an argument a tool does not name is refused; input is
bounded (:data:`MAX_TEXT_CHARS`, :data:`MAX_BATCH`, :data:`MAX_DEPTH`); no tool returns a
quarantined fact's text unless ``history`` is asked for it (``include_quarantined_text``).

The network is not trusted: over HTTP every request carries a bearer token (:func:`http_token`:
``--token-file``, :data:`TOKEN_ENV`, or one generated and printed to the owner; checked by
:class:`HttpGuard`), ``--no-auth`` only on a loopback address; on every transport one call is at
most ``--max-call-bytes`` (:data:`DEFAULT_MAX_CALL_BYTES`), refused before it is held whole
(:class:`BoundedLines` over stdio, :class:`HttpGuard` over HTTP).

The ``mcp`` SDK (and pydantic, with the tools' models in :mod:`frcore.bank._serve_models`) is
imported only when the server is built (:func:`build_server`): importing :mod:`frcore.bank` never
imports it. They are the ``serve`` extra (``pip install 'frcore[serve]'``): without it, ``fr serve``
(even ``--help``) and :func:`build_server` say so in one line (:func:`frcore._extras.require`).
"""

import datetime as _dt
import functools
import hashlib
import hmac
import ipaddress
import json
import os
import re
import sqlite3
import stat
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, cast

from .._extras import require
from .._params_io import add_params_arguments, params_from_args
from .._time import now, parse_time_arg
from .records import MAX_TEXT_CHARS as FACT_TEXT_CHARS, TURN_FIELDS

#: URI of the stats resource
STATS_URI = "frbank://stats"
#: where ``--http`` listens when only a port is given
DEFAULT_HTTP_HOST = "127.0.0.1"
#: the path of the streamable-HTTP endpoint
HTTP_PATH = "/mcp"
#: the most characters of one string in a call's arguments (a fact's or a query's text, an id, a
#: key): the bank's own limit on a stored string (:data:`frcore.bank.records.MAX_TEXT_CHARS`)
MAX_TEXT_CHARS = FACT_TEXT_CHARS
#: the most facts and turns of one ``remember``, and the most entries of any list or object of a call's arguments
MAX_BATCH = 1_000
#: the deepest nesting of a call's arguments (a fact's link list is 5 deep: arguments, facts, fact, links, list)
MAX_DEPTH = 8
#: the most bytes of one message (one JSON-RPC line over stdio, one request body over HTTP), by
#: default: 8 MiB, twice what the largest single text the bank stores (:data:`MAX_TEXT_CHARS`
#: characters, at most 4 bytes each in UTF-8) takes, so every call that carries one maximal text
#: fits, while one call can never hold more than 8 MiB of JSON in the server's memory (a
#: ``remember`` costs many times its size while it is parsed, checked and embedded: a 60 MB one
#: took 3.3 GB, a 7.4 MB one 143 MB; docs/serve.md#limits). ``--max-call-bytes`` changes it.
DEFAULT_MAX_CALL_BYTES = 8 * 1024 * 1024
#: the smallest ``--max-call-bytes`` (an ``initialize`` message is a few hundred bytes)
MIN_MAX_CALL_BYTES = 4096
#: the environment variable ``fr serve --http`` reads its bearer token from (after ``--token-file``)
TOKEN_ENV = "FR_SERVE_TOKEN"
#: the fewest characters of a bearer token given to ``fr serve --http``
MIN_TOKEN_CHARS = 16

INSTRUCTIONS = (
    "FR-Bank is a lifecycle-aware long-term memory. Store what the user tells you with `remember` "
    "(extracted facts with categories and a slot, or raw turns), retrieve with `recall` (as of a valid "
    "time `at`; `intent` historical or change_history also returns superseded values), retract a fact "
    "the user takes back with `forget`, remove one physically with `erase`, and list every value a slot "
    "ever had with `history`. Results carry their lifecycle state (active, contested, superseded, "
    "expired, retracted) and the score terms behind their rank."
)


def parse_http_address(value: str) -> tuple[str, int]:
    """``[HOST:]PORT`` → (host, port); host defaults to :data:`DEFAULT_HTTP_HOST`, ``[::1]:8000``
    names an IPv6 host. ``ValueError`` naming ``--http`` otherwise."""
    text = str(value).strip()
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    host = host.strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if sep and not host:
        raise ValueError(f"--http {value!r}: empty host; expected [HOST:]PORT, e.g. 8000 or 127.0.0.1:8000")
    try:
        n = int(port)
    except ValueError:
        raise ValueError(f"--http {value!r}: port {port!r} is not a number; expected [HOST:]PORT, e.g. 8000") from None
    if not 0 <= n <= 65535:
        raise ValueError(f"--http {value!r}: port {n} outside 0..65535")
    return host or DEFAULT_HTTP_HOST, n


def max_k() -> int:
    """The most results one recall can return with the default pipeline: its distilled candidates
    (or every candidate of the three stages without distillation)."""
    from ._bank import result_limit
    from .pipeline import PipelineConfig

    limit = result_limit(PipelineConfig())
    assert limit is not None  # the default ranker is the lifecycle ranker
    return limit


def check_arguments(arguments: Mapping[str, Any]) -> None:
    """A call's arguments within the server's bounds, or a ``ValueError`` naming the first place
    that is not (``facts[3].text: …``): every string (keys too) at most :data:`MAX_TEXT_CHARS`
    characters, every list or object at most :data:`MAX_BATCH` entries, nesting at most
    :data:`MAX_DEPTH` levels. Read before anything else reads the arguments."""
    stack: list[tuple[Any, str, int]] = [(arguments, "", 1)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            if len(value) > MAX_TEXT_CHARS:
                raise ValueError(
                    f"{path or 'arguments'}: {len(value):,} characters; at most {MAX_TEXT_CHARS:,} in one text "
                    "(docs/serve.md#limits)"
                )
            continue
        if not isinstance(value, (Mapping, list)):
            continue
        where = path or "arguments"
        if depth > MAX_DEPTH:
            raise ValueError(f"{where}: nested {depth} levels deep; at most {MAX_DEPTH} (docs/serve.md#limits)")
        if len(value) > MAX_BATCH:
            raise ValueError(
                f"{where}: {len(value):,} entries; at most {MAX_BATCH:,} in one call (docs/serve.md#limits)"
            )
        if isinstance(value, list):
            stack.extend((v, f"{path}[{i}]", depth + 1) for i, v in reversed(list(enumerate(value))))
            continue
        for key in value:
            if isinstance(key, str) and len(key) > MAX_TEXT_CHARS:
                raise ValueError(
                    f"{where}: a key of {len(key):,} characters; at most {MAX_TEXT_CHARS:,} in one text "
                    "(docs/serve.md#limits)"
                )
        stack.extend((v, f"{path}.{k}" if path else str(k), depth + 1) for k, v in reversed(list(value.items())))


class Memory:
    """The operations of the server on one :class:`~frcore.bank.Bank`, as plain dicts (the tools'
    structured output).

    Writes (remember, forget, erase) run one at a time, and reads (recall, explain, history,
    stats) one at a time, but a read does not wait for a write: the store's own lock guards its
    connection, caches and each write transaction, and a write validates, checks for injections
    and embeds before taking it, so a ``recall`` answers while a large ``remember`` runs (the
    server runs each call on a worker thread)."""

    def __init__(self, bank, path: str | None = None) -> None:
        self.bank = bank
        self.path = path
        self._writing = threading.Lock()
        self._reading = threading.Lock()

    # ------------------------------------------------------------------ writes
    def remember(self, facts: Sequence[Any] = (), turns: Sequence[Any] = ()) -> dict[str, Any]:
        """Store ``facts`` (the FR-Bank fact format, as sent: validated by ``Bank.add``, as ``fr
        bank add`` validates them) and ``turns`` (:data:`TURN_FIELDS`) in one all-or-nothing batch
        of at most :data:`MAX_BATCH` items; each turn's categories come from the bank's router."""
        from .records import parse_fact, turn_id

        facts, turns = list(facts or ()), list(turns or ())
        if not facts and not turns:
            raise ValueError("facts: nothing to remember; give at least one fact or turn")
        if len(facts) + len(turns) > MAX_BATCH:
            what = "facts" if not turns else "turns" if not facts else "facts and turns"
            raise ValueError(
                f"{what}: {len(facts) + len(turns):,} items in one remember; at most {MAX_BATCH:,} "
                "(docs/serve.md#limits): split the batch"
            )
        records: list[Any] = list(facts)
        where = [f"facts[{i}]" for i in range(len(facts))]
        at_now = now().replace(microsecond=0)
        with self._writing:
            bank = self.bank
            turn_rows: list[dict[str, Any]] = []
            for j, t in enumerate(turns):
                label = f"turns[{j}]"
                if not isinstance(t, Mapping):
                    raise ValueError(
                        f"{label}: expected an object {{{', '.join(TURN_FIELDS)}}}, got {type(t).__name__}"
                    )
                unknown = [k for k in t if k not in TURN_FIELDS]
                if unknown:
                    raise ValueError(
                        f"{label}: unknown field {str(unknown[0])[:60]!r}; a turn has {', '.join(TURN_FIELDS)}"
                    )
                text = t.get("text")
                speaker = t.get("speaker", "user")
                at_t = parse_time_arg(t.get("at"), f"{label}: field 'at'") or at_now
                said_at = at_t.isoformat()
                derived = turn_id(  # salted with the bank's user (the owner's unchanged)
                    text if isinstance(text, str) else "",
                    speaker if isinstance(speaker, str) else None,
                    said_at,
                    bank.user,
                )
                rec: dict[str, Any] = {
                    "id": t.get("id") or derived,
                    "kind": "turn",
                    "text": text,
                    "said_at": said_at,
                    "speaker": speaker,
                    "session": t.get("session"),
                }
                parse_fact(rec, label)  # the bank's own checks (text, speaker, session) before categorising
                normalized = bank.normalize(text)
                rec["categories"] = bank.router.categorize(normalized, bank.embedder.embed([normalized])[0])
                turn_rows.append({"id": rec["id"], "categories": rec["categories"]})
                records.append(rec)
                where.append(label)
            added = bank.add(records, where=where)
            quarantined = [{"id": q} if isinstance(q, str) else dict(q) for q in getattr(added, "quarantined", ())]
        return {
            "added": list(added),
            "unchanged": list(getattr(added, "unchanged", [])),
            "quarantined": list(quarantined),
            "turns": turn_rows,
            "warnings": list(getattr(added, "warnings", [])),
        }

    def forget(self, edge_id: str, reason: str, at: str | None = None) -> dict[str, Any]:
        """Retract ``edge_id`` with ``reason``: masked from ``at`` on (default now), kept for audit."""
        eff = parse_time_arg(at, "at")
        if not isinstance(reason, str) or not reason.strip():
            raise ValueError("reason: empty; say why the fact is retracted")
        with self._writing:
            when = now()
            self.bank.retract(edge_id, at=eff if eff is not None else when, reason=reason)
        return {
            "edge_id": edge_id,
            "retracted": True,
            "effective_at": (eff if eff is not None else when).isoformat(),
            "reason": reason,
        }

    def erase(self, edge_id: str, reason: str | None = None) -> dict[str, Any]:
        """Erase ``edge_id`` physically; the audit record (salted hash of the id) and the purge state."""
        with self._writing:
            rec = dict(self.bank.erase(edge_id, reason=reason))
        return {
            "edge_id": edge_id,
            "id_hash": rec.get("id_hash"),
            "erased_at": str(rec.get("erased_at")),
            "reason": rec.get("reason"),
            "purged": bool(rec.get("purged")),
            "remaining": [str(f) for f in rec.get("remaining", ())],
            "note": str(rec.get("note", "")),
        }

    # ------------------------------------------------------------------ reads
    def _query(self, text: str, at, known_at, intent, k: int, categories, explain: bool):
        limit = max_k()
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= limit:
            raise ValueError(
                f"k: {k!r} out of range; expected an integer from 1 to {limit} (the pipeline ranks its "
                f"{limit} distilled candidates)"
            )
        with self._reading:
            ask = self.bank.explain if explain else self.bank.query
            return ask(
                text, at=at, k=k, intent=intent, known_at=known_at, categories=list(categories) if categories else None
            )

    @staticmethod
    def _result(r: Mapping[str, Any], lines: bool = False) -> dict[str, Any]:
        out = {
            "id": r["id"],
            "text": r["text"],
            "state": r["state"],
            "score": float(r["score"]),
            "terms": {k: float(v) for k, v in r["terms"].items()},
            "stages": list(r.get("stages", ())),
            "why": r.get("explanation"),
        }
        if r.get("derivation") is not None:  # the rule and evidence of each derived link (docs/derive.md)
            out["derivation"] = r["derivation"]
        if lines and r.get("explanation") is not None:
            from .cli import explanation_lines

            out["lines"] = explanation_lines(r["explanation"])
        return out

    def recall(
        self,
        text: str,
        at: str | None = None,
        known_at: str | None = None,
        intent: str | None = None,
        k: int = 10,
        categories: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """The top ``k`` edges for ``text`` as of ``at`` / ``known_at``, each with its lifecycle
        state, score, score terms and the explanation of its score (``why``)."""
        res = self._query(text, at, known_at, intent, k, categories, explain=True)
        return {
            "query": res.query,
            "at": res.at.isoformat(),
            "intent": res.intent,
            "intent_rule": res.intent_rule,
            "routing": dict(res.categories),
            "n_candidates": int(res.n_candidates),
            "results": [self._result(r) for r in res.results],
        }

    def explain(
        self,
        text: str,
        at: str | None = None,
        known_at: str | None = None,
        intent: str | None = None,
        k: int = 10,
        categories: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """:meth:`recall` with the whole explanation: the scored candidate set, the size after
        distillation, and each result's explanation also as text lines."""
        res = self._query(text, at, known_at, intent, k, categories, explain=True)
        return {
            "query": res.query,
            "at": res.at.isoformat(),
            "intent": res.intent,
            "intent_rule": res.intent_rule,
            "routing": dict(res.categories),
            "n_candidates": int(res.n_candidates),
            "n_distilled": int(res.n_distilled),
            "candidate_ids": list(res.candidate_ids),
            "results": [self._result(r, lines=True) for r in res.results],
        }

    def history(
        self, slot: str, at: str | None = None, known_at: str | None = None, include_quarantined_text: bool = False
    ) -> dict[str, Any]:
        """Every fact stored under ``slot``, in the order it was said (``said_at``; ties in the order
        stored), with its lifecycle state as of ``at`` (default now) and ``known_at``.

        A fact held in quarantine is shown by its id, state and finding (``quarantine``: field and
        rule), its text ``None``; an id, link target or slot that itself reads as an instruction is
        ``None`` / left out too. ``include_quarantined_text`` shows them all (the owner's choice)."""
        if not isinstance(slot, str) or not slot.strip():
            raise ValueError("slot: empty; name the slot key whose history you want")
        if not isinstance(include_quarantined_text, bool):
            raise ValueError(f"include_quarantined_text: expected true or false, got {include_quarantined_text!r}")
        at_t = parse_time_arg(at, "at") or now().replace(microsecond=0)
        known_t = parse_time_arg(known_at, "known_at")
        with self._reading:
            mine = self.bank.slot_history(slot, known_at=known_t)
            if not mine:
                raise ValueError(f"slot: no fact is stored under slot {slot!r}")
            states = self.bank.states(at_t, known_at=known_t)
            ids = {e.id for e, _ in mine}
            trs = [t for t in self.bank.store.transitions(known_t, user=self.bank.user) if t.edge_id in ids]
            held = {q["id"]: q for q in self.bank.quarantine()}  # held now (a released fact is the owner's choice)
        show = include_quarantined_text
        hidden_ids = set() if show else {i for i, q in held.items() if q["field"] == "id"}
        slot_hidden = not show and any(held[e.id]["field"] == "slot" for e, _ in mine if e.id in held)
        facts = [
            {
                "id": None if e.id in hidden_ids else e.id,
                "text": e.text if show or e.id not in held else None,
                "said_at": e.said_at.isoformat(),
                "event_time": None if e.event_time is None else e.event_time.isoformat(),
                "recorded_at": _iso(rec),
                "confidence": float(e.confidence),
                "state": states.get(e.id, "not_yet_said"),
                "quarantine": {"field": held[e.id]["field"], "rule": held[e.id]["rule"]} if e.id in held else None,
                "links": {k: [i for i in v if i not in hidden_ids] for k, v in (e.links or {}).items()},
                "retractions": [
                    {"effective_at": t.effective_at.isoformat(), "reason": t.reason}
                    for t in trs
                    if t.edge_id == e.id and t.kind == "retract"
                ],
            }
            for e, rec in mine
        ]
        return {
            "slot": None if slot_hidden else slot,
            "at": at_t.isoformat(),
            "known_at": None if known_t is None else known_t.isoformat(),
            "facts": facts,
        }

    def stats(self) -> dict[str, Any]:
        """What the bank holds: facts and turns, slots, lifecycle states now, quarantined edges,
        erasures, the embedder and the schema version."""
        at = now()
        with self._reading:
            store, user = self.bank.store, self.bank.user
            summary = store.summary(user=user)
            states = self.bank.states(at)
            held = len(self.bank.quarantine())
            erasures = len(store.audit_log(user=user))
            schema, version = int(store.schema), int(store.version())
        counts: dict[str, int] = {}
        for s in states.values():
            counts[s] = counts.get(s, 0) + 1
        emb = self.bank.embedder
        return {
            "bank": self.path,
            "facts": summary["facts"],
            "turns": summary["turns"],
            "slots": summary["slots"],
            "states": counts,
            "quarantined": held,
            "retractions": summary["retractions"],
            "erasures": erasures,
            "embedder": {"name": str(emb.name), "dim": int(emb.dim)},
            "owner": self.bank.owner,
            "user": getattr(self.bank, "user", "") or None,
            "schema_version": schema,
            "version": version,
        }


def _iso(t: _dt.datetime) -> str:
    """A recorded_at as the bank's export writes it."""
    from .storage import iso_text

    return iso_text(t)


# ----------------------------------------------------------------------------- the MCP server


def build_server(memory: Memory, log_level: str = "WARNING"):
    """The :class:`mcp.server.mcpserver.MCPServer` exposing ``memory`` (imports the SDK); the
    server logs to stderr at ``log_level``. Every tool is a :func:`_strict_tool`."""
    require("serve", "frcore.bank.serve.build_server")
    from mcp.server.mcpserver import MCPServer

    tools: list[Any] = []
    _add_remember(tools, memory)
    _add_queries(tools, memory)
    _add_removals(tools, memory)
    stats = _add_inspection(tools, memory)
    server = MCPServer("fr-bank", instructions=INSTRUCTIONS, log_level=cast(Any, log_level), tools=tools)
    server.resource(
        STATS_URI, name="stats", description="FR-Bank statistics (as the stats tool)", mime_type="application/json"
    )(stats)
    return server


@functools.cache
def _strict_tool_class():
    """The SDK's ``Tool`` whose call first checks :func:`check_arguments`, and whose refused
    arguments are one line naming each (:func:`_argument_errors`), not pydantic's report."""
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.mcpserver.tools import Tool
    from pydantic import ValidationError

    class StrictTool(Tool):
        async def run(self, arguments, context, convert_result=False):
            try:
                check_arguments(arguments)
            except ValueError as e:
                raise ToolError(f"Error executing tool {self.name}: {e}") from e
            try:
                return await super().run(arguments, context, convert_result=convert_result)
            except ToolError as e:
                if not isinstance(e.__cause__, ValidationError):
                    raise
                names = list(self.fn_metadata.arg_model.model_fields)
                raise ToolError(
                    f"Error executing tool {self.name}: {_argument_errors(e.__cause__, names)}"
                ) from e.__cause__

    return StrictTool


def _strict_tool(fn, annotations):
    """``fn`` as an MCP tool whose arguments are validated strictly: each of its JSON type, never
    coerced (``k: "3"`` is refused), and an argument it does not name refused (pydantic
    ``strict`` and ``extra="forbid"`` on the SDK's argument model, so the input schema says
    ``additionalProperties: false``). A list or object argument sent as a JSON string of itself
    is still read as the SDK reads it (for clients that send them so)."""
    from pydantic import ConfigDict

    tool = _strict_tool_class().from_function(fn, annotations=annotations)
    loose = tool.fn_metadata.arg_model
    strict: Any = type(
        loose.__name__,
        (loose,),
        {"model_config": ConfigDict(extra="forbid", strict=True), "__module__": loose.__module__},
    )
    meta = tool.fn_metadata.model_copy(update={"arg_model": strict})
    return tool.model_copy(update={"fn_metadata": meta, "parameters": strict.model_json_schema(by_alias=True)})


#: what a refused argument of each pydantic error type was expected to be
_EXPECTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "bool_type": "true or false",
    "list_type": "a list",
    "dict_type": "an object",
    "float_type": "a number",
    "none_required": "null",
}


def _sent(value: Any) -> str:
    """A refused argument's value for its error line: a number, true/false, null or a short string
    as JSON writes it (``'3'`` in quotes), anything else by its JSON type."""
    if value is None or isinstance(value, (bool, float)) or (isinstance(value, int) and value.bit_length() <= 64):
        return json.dumps(value)
    if isinstance(value, str) and len(value) <= 40:
        return repr(value)
    kind = "a string" if isinstance(value, str) else "a list" if isinstance(value, list) else "an object"
    return kind if isinstance(value, (str, list, Mapping)) else "an integer beyond 64 bits"


def _argument_errors(error, names: Sequence[str]) -> str:
    """A pydantic ``ValidationError`` of a tool's arguments as one line: each refused argument
    named, what was expected and what was sent (``k: expected an integer, got '3'``)."""
    parts: dict[str, str] = {}
    for e in error.errors():
        loc = [str(p) for p in e["loc"] if not str(p).startswith(("function-", "nullable"))]
        name = "".join(f"[{p}]" if p.isdigit() else (f".{p}" if i else p) for i, p in enumerate(loc)) or "arguments"
        if e["type"] == "extra_forbidden":
            problem = "unknown argument; " + (
                f"this tool takes {', '.join(names)}" if names else "this tool takes no arguments"
            )
        elif e["type"] == "missing":
            problem = "missing (required)"
        elif e["type"] in _EXPECTED:
            problem = f"expected {_EXPECTED[e['type']]}, got {_sent(e.get('input'))}"
        else:
            problem = f"{e['msg'][:1].lower()}{e['msg'][1:]}, got {_sent(e.get('input'))}"
        # a union (str | None) reports one error per member: the first, null's, is the less telling
        if name not in parts or parts[name].startswith("expected null"):
            parts[name] = problem
    return "; ".join(f"{k}: {v}" for k, v in parts.items())


def _call(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``; a refused call is a :class:`ToolError` (an MCP tool error) in the bank's words."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        return fn(*args, **kwargs)
    except (ValueError, FileNotFoundError) as e:  # FactError, StoreError, TimeParseError, ParamsError
        raise ToolError(str(e)) from e
    except sqlite3.Error as e:
        raise ToolError(f"bank: SQLite: {e}") from e


def _tool(tools: list, annotations):
    """A decorator: the function, as a :func:`_strict_tool` with ``annotations``, joins ``tools``."""

    def add(fn):
        tools.append(_strict_tool(fn, annotations))
        return fn

    return add


def _read_only():
    from mcp.types import ToolAnnotations

    return ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def _add_remember(tools: list, memory: Memory) -> None:
    """The tool ``remember``."""
    from mcp.types import ToolAnnotations
    from pydantic import Field

    from ._serve_models import FactItem, Remembered, TurnItem

    @_tool(
        tools,
        ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False),
    )
    def remember(
        facts: Annotated[
            list[FactItem] | None,
            Field(description=f"extracted facts (docs/formats.md); at most {MAX_BATCH:,} facts and turns in one call"),
        ] = None,
        turns: Annotated[list[TurnItem] | None, Field(description="raw turns, categorised by the router")] = None,
    ) -> Remembered:
        """Store facts (id, text, categories, said_at, slot, …) and raw conversation turns (text, speaker, at) in
        one all-or-nothing batch. A turn's categories come from the bank's router. Remembering identical items
        again is a no-op."""
        return Remembered(**_call(memory.remember, facts or (), turns or ()))


def _add_queries(tools: list, memory: Memory) -> None:
    """The tools ``recall`` and ``explain``; ``k`` is at most :func:`max_k`."""
    from pydantic import Field

    from ._serve_models import At, Cats, Explained, Intent, KnownAt, Recalled

    limit = max_k()
    K = Annotated[
        int, Field(description=f"number of results, 1 to {limit}", json_schema_extra={"minimum": 1, "maximum": limit})
    ]

    @_tool(tools, _read_only())
    def recall(
        text: Annotated[str, Field(description="what to recall, in natural language")],
        at: At = None,
        known_at: KnownAt = None,
        intent: Intent = None,
        k: K = 10,
        categories: Cats = None,
    ) -> Recalled:
        """Retrieve the memories that answer `text` as of `at`, ranked by the lifecycle score, each with its
        lifecycle state, score, score terms and why (the explanation of its score)."""
        return Recalled(
            **_call(memory.recall, text, at=at, known_at=known_at, intent=intent, k=k, categories=categories)
        )

    @_tool(tools, _read_only())
    def explain(
        text: Annotated[str, Field(description="the query")],
        at: At = None,
        known_at: KnownAt = None,
        intent: Intent = None,
        k: K = 10,
        categories: Cats = None,
    ) -> Explained:
        """One query's full explanation: query understanding (intent and its rule, routing), the scored
        candidate set, and for each result every score term, the sigma sources, activation and blend."""
        return Explained(
            **_call(memory.explain, text, at=at, known_at=known_at, intent=intent, k=k, categories=categories)
        )


def _add_removals(tools: list, memory: Memory) -> None:
    """The tools ``forget`` (retract) and ``erase``."""
    from mcp.types import ToolAnnotations
    from pydantic import Field

    from ._serve_models import Erased, Forgotten, Time

    @_tool(
        tools,
        ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False),
    )
    def forget(
        edge_id: Annotated[str, Field(description="the id of the fact to retract")],
        reason: Annotated[str, Field(description="why it is retracted (kept for audit)")],
        at: Annotated[Time, Field(description="effective valid time (default now)")] = None,
    ) -> Forgotten:
        """Retract a fact: from `at` on it is masked from recall (state retracted), and it stays stored for audit
        and history."""
        return Forgotten(**_call(memory.forget, edge_id, reason, at=at))

    @_tool(
        tools,
        ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False),
    )
    def erase(
        edge_id: Annotated[str, Field(description="the id of the fact to erase")],
        reason: Annotated[str | None, Field(description="why (kept in the audit record)")] = None,
    ) -> Erased:
        """Erase a fact physically (text, vector, the id everywhere); an audit record with a salted hash of the id
        remains. Reports whether the purge of the database files finished."""
        return Erased(**_call(memory.erase, edge_id, reason=reason))


def _add_inspection(tools: list, memory: Memory):
    """The tools ``history`` and ``stats``; returns the reader of the resource :data:`STATS_URI`."""
    from pydantic import Field

    from ._serve_models import At, History, KnownAt, Stats

    @_tool(tools, _read_only())
    def history(
        slot: Annotated[str, Field(description="the slot key")],
        at: At = None,
        known_at: KnownAt = None,
        include_quarantined_text: Annotated[
            bool,
            Field(
                description="also show what a quarantined fact says (its text, and an id or slot that reads as an "
                "instruction); default false: only its id, state and the rule that fired"
            ),
        ] = False,
    ) -> History:
        """Every fact stored under one slot, in the order it was said, with its lifecycle state as of `at` and
        its retractions: how one attribute changed over time. A quarantined fact shows its id, state and the
        rule that fired, not its text, unless include_quarantined_text is true."""
        return History(
            **_call(memory.history, slot, at=at, known_at=known_at, include_quarantined_text=include_quarantined_text)
        )

    @_tool(tools, _read_only())
    def stats() -> Stats:
        """What the bank holds (the resource frbank://stats): facts, turns, slots, lifecycle states now,
        quarantined edges, retractions, erasures, embedder and schema version."""
        return Stats(**_call(memory.stats))

    def stats_resource() -> str:
        return Stats(**_call(memory.stats)).model_dump_json()

    return stats_resource


# ----------------------------------------------------------------------------- transports: auth and size


def is_loopback(host: str) -> bool:
    """Whether ``host`` names the loopback interface only: ``localhost``, 127.0.0.0/8 or ``::1``."""
    h = str(host).strip().lower()
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    if h in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def read_token_file(path: str) -> str:
    """The bearer token in the file at ``path`` (its first line, stripped); ``ValueError`` naming
    ``--token-file`` when it cannot be read, is empty or shorter than :data:`MIN_TOKEN_CHARS`, or
    when group or others may read or write it (``chmod 600 PATH``)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as e:
        raise ValueError(f"--token-file {path}: {e.strerror or e}") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"--token-file {path}: not a regular file")
        if st.st_mode & 0o077:
            raise ValueError(
                f"--token-file {path}: mode {stat.S_IMODE(st.st_mode):04o} lets group or others read or change "
                f"the token; chmod 600 {path}"
            )
        data = fh.read(4096)
    lines = data.decode("utf-8", "replace").strip().splitlines()
    return check_token(lines[0].strip() if lines else "", f"--token-file {path}")


def check_token(token: str, where: str) -> str:
    """``token`` when it is at least :data:`MIN_TOKEN_CHARS` printable characters without spaces;
    ``ValueError`` naming ``where`` otherwise."""
    if not token:
        raise ValueError(f"{where}: empty token")
    if len(token) < MIN_TOKEN_CHARS:
        raise ValueError(f"{where}: token of {len(token)} characters; at least {MIN_TOKEN_CHARS}")
    if not token.isprintable() or any(c.isspace() for c in token) or not token.isascii():
        raise ValueError(f"{where}: the token must be printable ASCII without spaces")
    return token


def http_token(args, host: str, environ: Mapping[str, str] | None = None) -> tuple[str | None, str]:
    """The bearer token ``fr serve --http`` requires, and where it comes from: ``--token-file``,
    else :data:`TOKEN_ENV`, else one generated for this run (``secrets.token_urlsafe(32)``);
    ``(None, "--no-auth")`` for ``--no-auth``, which only a loopback ``host`` allows (``ValueError``
    otherwise, as for ``--no-auth`` with a token source)."""
    import secrets

    environ = os.environ if environ is None else environ
    token_file = getattr(args, "token_file", None)
    if getattr(args, "no_auth", False):
        if token_file:
            raise ValueError("--no-auth: given with --token-file; choose one")
        if not is_loopback(host):
            raise ValueError(
                f"--no-auth: refused on {host}, which is not a loopback address (127.0.0.1, ::1, localhost): "
                "anyone who reaches it could read and erase the memory; give a token (--token-file, "
                f"{TOKEN_ENV}) or bind 127.0.0.1"
            )
        return None, "--no-auth"
    if token_file:
        return read_token_file(token_file), f"--token-file {token_file}"
    if environ.get(TOKEN_ENV):
        return check_token(environ[TOKEN_ENV].strip(), TOKEN_ENV), TOKEN_ENV
    return secrets.token_urlsafe(32), "generated"


def _json_error(status: int, message: str) -> tuple[int, bytes]:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32001 if status == 401 else -32600, "message": message}}
    return status, json.dumps(body).encode("utf-8")


class HttpGuard:
    """ASGI middleware in front of the streamable-HTTP app: every HTTP request must carry
    ``Authorization: Bearer TOKEN`` (compared in constant time: :func:`hmac.compare_digest` of
    the SHA-256 of each side, so not even the length leaks), else 401; a body of more than
    ``max_bytes`` is refused with 413 naming the limit, on its ``Content-Length`` before a byte of
    it is read, or once the bytes streamed pass the limit (at most ``max_bytes`` are held). A
    ``token`` of ``None`` (``--no-auth`` on loopback) checks the size only."""

    def __init__(self, app, token: str | None, max_bytes: int = DEFAULT_MAX_CALL_BYTES) -> None:
        self.app = app
        self.max_bytes = int(max_bytes)
        self._want = None if token is None else hashlib.sha256(token.encode("utf-8")).digest()

    def _authorized(self, headers: list[tuple[bytes, bytes]]) -> bool:
        if self._want is None:
            return True
        got = b""
        for name, value in headers:
            if name.lower() == b"authorization":
                got = value
                break
        scheme, _, credential = got.strip().partition(b" ")
        offered = hashlib.sha256(credential.strip()).digest()
        return hmac.compare_digest(offered, self._want) and scheme.lower() == b"bearer"

    async def _refuse(self, send, status: int, message: str) -> None:
        status, body = _json_error(status, message)
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        if status == 401:
            headers.append((b"www-authenticate", b'Bearer realm="fr-bank"'))
        else:
            headers.append((b"connection", b"close"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def _too_large(self, size: int | str) -> str:
        return (
            f"request body of {size} bytes; at most {self.max_bytes:,} in one call "
            "(fr serve --max-call-bytes; docs/serve.md#limits)"
        )

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = list(scope.get("headers") or ())
        if not self._authorized(headers):
            return await self._refuse(
                send,
                401,
                "unauthorized: send the server's token as 'Authorization: Bearer TOKEN' (docs/serve.md#authentication)",
            )
        declared = next((v for k, v in headers if k.lower() == b"content-length"), None)
        if declared is not None:
            try:
                n = int(declared)
            except ValueError:
                n = -1
            if n > self.max_bytes:
                return await self._refuse(send, 413, self._too_large(f"{n:,}"))
        # the body, counted as it streams, at most max_bytes of it held; then replayed to the app
        chunks: list[bytes] = []
        size, first, more = 0, None, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                first = message
                break
            body = message.get("body", b"")
            size += len(body)
            if size > self.max_bytes:
                return await self._refuse(send, 413, self._too_large(f"more than {self.max_bytes:,}"))
            chunks.append(body)
            more = bool(message.get("more_body", False))
        replay: list[dict] = [{"type": "http.request", "body": b"".join(chunks), "more_body": False}]
        if first is not None:
            replay = [first]

        async def replayed():
            return replay.pop(0) if replay else await receive()

        return await self.app(scope, replayed, send)


#: the JSON-RPC id near the start of an oversized message (clients write ``jsonrpc`` and ``id``
#: before ``params``): its refusal answers that request
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,256}")')


class BoundedLines:
    """The lines of the binary stream ``raw`` as an async iterator of text (what the SDK's stdio
    transport reads), each message at most ``max_bytes``: a longer line is read through in 64 KiB
    pieces and dropped (never held whole), and ``refuse(id, size)`` is awaited for it, ``id`` the
    request's id when its first bytes name one."""

    PIECE = 1 << 16

    def __init__(self, raw, max_bytes: int = DEFAULT_MAX_CALL_BYTES, refuse=None) -> None:
        self.raw, self.max_bytes, self.refuse = raw, int(max_bytes), refuse

    def __aiter__(self):
        return self

    def _next(self) -> tuple[bytes | None, int, bytes]:
        """(line, size, head): the next line; ``None`` with its size and first bytes for a line over
        the limit (read through); ``(None, 0, b"")`` at the end of the stream."""
        data = self.raw.readline(self.max_bytes + 1)
        if not data:
            return None, 0, b""
        if data.endswith(b"\n") or len(data) <= self.max_bytes:
            return data, len(data), b""
        head, size = data[:4096], len(data)
        del data
        while True:
            piece = self.raw.readline(self.PIECE)
            size += len(piece)
            if not piece or piece.endswith(b"\n"):
                return None, size, head

    async def __anext__(self) -> str:
        import anyio

        while True:
            line, size, head = await anyio.to_thread.run_sync(self._next, abandon_on_cancel=True)
            if line is not None:
                return line.decode("utf-8", "replace")
            if size == 0:
                raise StopAsyncIteration
            m = _ID.search(head.split(b'"params"', 1)[0])
            rid = json.loads(m.group(1)) if m else None
            if self.refuse is not None:
                await self.refuse(rid, size)


def call_too_large(size: int, max_bytes: int) -> str:
    """The refusal of a message of ``size`` bytes over stdio."""
    return (
        f"message of {size:,} bytes; at most {max_bytes:,} in one call (fr serve --max-call-bytes; "
        "docs/serve.md#limits)"
    )


def _claim_stdin():
    """A private duplicate of fd 0 to read the protocol from, fd 0 itself pointed at the null
    device meanwhile (as the SDK's stdio transport does); and the function that restores it."""
    try:
        import fcntl

        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except (ImportError, OSError, ValueError):
        return sys.stdin.buffer, lambda: None
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    return os.fdopen(private, "rb", closefd=False), lambda: os.dup2(private, 0)


def run_stdio(server, max_bytes: int = DEFAULT_MAX_CALL_BYTES) -> None:
    """Serve ``server`` over stdin/stdout (the SDK's stdio transport) with every message at most
    ``max_bytes``: a longer one is answered by a JSON-RPC error naming the limit."""
    import logging

    import anyio
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage
    from mcp.types import ErrorData, JSONRPCError

    raw, restore = _claim_stdin()
    lines = BoundedLines(raw, max_bytes)
    log = logging.getLogger("frcore.bank.serve")

    async def main() -> None:
        async with stdio_server(stdin=cast(Any, lines)) as (read, write):

            async def refuse(rid, size: int) -> None:
                message = call_too_large(size, max_bytes)
                log.warning("refused: %s", message)
                err = JSONRPCError(jsonrpc="2.0", id=rid, error=ErrorData(code=-32600, message=message))
                await write.send(SessionMessage(err))

            lines.refuse = refuse
            low = server._lowlevel_server  # as MCPServer.run_stdio_async does
            await low.run(read, write, low.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        restore()


def run_http(server, host: str, port: int, token: str | None, max_bytes: int, log_level: str) -> None:
    """Serve ``server`` over streamable HTTP at ``http://host:port/mcp`` behind :class:`HttpGuard`."""
    import anyio
    import uvicorn

    app = server.streamable_http_app(streamable_http_path=HTTP_PATH, max_request_body_size=max_bytes, host=host)
    config = uvicorn.Config(HttpGuard(app, token, max_bytes), host=host, port=port, log_level=log_level.lower())
    anyio.run(uvicorn.Server(config).serve)


def http_client(url: str, token: str | None):
    """An async context manager: the MCP SDK's :class:`mcp.Client` connected to ``fr serve --http``
    at ``url`` (``http://127.0.0.1:8000/mcp``), sending ``Authorization: Bearer TOKEN``
    (``token`` ``None``: none, for ``--no-auth``)."""
    import contextlib

    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    @contextlib.asynccontextmanager
    async def connected():
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        async with create_mcp_http_client(headers=headers) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                yield client

    return connected()


# ----------------------------------------------------------------------------- the command


def _serve(args) -> int:
    from ._bank import Bank
    from .records import check_user

    params = params_from_args(args)  # a bad file or override fails before the bank opens
    address = parse_http_address(args.http) if args.http else None
    max_bytes = call_bytes(getattr(args, "max_call_bytes", None))
    token, source = None, ""
    if address is None:
        for given, option in (
            (getattr(args, "no_auth", False), "--no-auth"),
            (getattr(args, "token_file", None), "--token-file"),
        ):
            if given:
                raise ValueError(
                    f"{option}: only with --http (over stdio the client that starts the server is its only caller)"
                )
    else:
        token, source = http_token(args, address[0])  # a bad token source fails before the bank opens
    kwargs: dict[str, Any] = {"params": params, "owner": args.owner, "user": check_user(args.user, "--user")}
    if args.embedder:
        kwargs["embedder"] = args.embedder
    if args.ann:
        kwargs["ann"] = True
    if args.derive:
        kwargs["derive"] = True
    try:
        import mcp  # noqa: F401
    except ImportError as e:
        raise ValueError(f"the MCP SDK is not installed ({e}); `make setup` installs it") from None
    bank = Bank.open(args.bank, **kwargs)
    try:
        import logging

        server = build_server(Memory(bank, str(args.bank)), log_level=args.log_level)
        logging.getLogger("bm25s").setLevel(max(logging.WARNING, logging.getLevelName(args.log_level)))
        if address is None:
            run_stdio(server, max_bytes)
        else:
            host, port = address
            url = f"http://{'[' + host + ']' if ':' in host else host}:{port}{HTTP_PATH}"
            say = functools.partial(print, file=sys.stderr, flush=True)
            auth = "no authentication (--no-auth, loopback only)" if token is None else f"bearer token ({source})"
            say(f"fr serve: {args.bank} on {url} (streamable HTTP, {auth})")
            if not is_loopback(host):
                say(
                    f"fr serve: warning: {host} is reachable from other machines and HTTP is not encrypted: the token "
                    "and the memory cross the network in clear; put a TLS proxy in front or bind 127.0.0.1"
                )
            if source == "generated":
                say(
                    f"fr serve: clients must send 'Authorization: Bearer {token}' (generated for this run; "
                    f"give --token-file or {TOKEN_ENV} to choose it)"
                )
            run_http(server, host, port, token, max_bytes, args.log_level)
    except KeyboardInterrupt:
        pass
    finally:
        bank.close()
    return 0


def run(args) -> int:
    """``fr serve``; a bank that cannot be opened is one line naming it (exit status 2)."""
    from .storage import StoreError

    try:
        return _serve(args)
    except StoreError as e:  # the bank's own message names the file
        msg = str(e)
        raise ValueError(msg if str(args.bank) in msg else f"--bank {args.bank}: {msg}") from None


def call_bytes(value: Any) -> int:
    """``--max-call-bytes``: an integer of at least :data:`MIN_MAX_CALL_BYTES` (``None``: the
    default); ``ValueError`` naming the option otherwise."""
    if value is None:
        return DEFAULT_MAX_CALL_BYTES
    try:
        n = int(str(value).replace("_", "").replace(",", ""))
    except ValueError:
        raise ValueError(f"--max-call-bytes {str(value)[:40]!r}: not a whole number of bytes") from None
    if n < MIN_MAX_CALL_BYTES:
        raise ValueError(f"--max-call-bytes {n:,}: at least {MIN_MAX_CALL_BYTES:,} bytes")
    return n


def register(subparsers) -> None:
    require("serve", "fr serve")  # listed as unavailable, with the extra to install, when it is missing
    p = subparsers.add_parser(
        "serve",
        help="serve an FR-Bank to agents over the Model Context Protocol (stdio, or streamable HTTP)",
        description="Serve one FR-Bank as an MCP server: tools remember, recall, forget, erase, explain, history, "
        f"stats and the resource {STATS_URI}. Speaks MCP over stdin/stdout unless --http is given. "
        "See docs/serve.md.",
    )
    p.add_argument("--bank", required=True, metavar="PATH", help="the bank file (SQLite; created empty if missing)")
    p.add_argument(
        "--embedder",
        default=None,
        help="hash or minilm (default: the embedder the bank records; a new bank records MiniLM); another "
        "than the bank's own is refused",
    )
    p.add_argument(
        "--owner",
        default=None,
        help="the name of the user whose memory this is (replaced by 'the user' before embedding)",
    )
    p.add_argument(
        "--user",
        metavar="NAME",
        default=None,
        help="serve this user's memory only: every tool reads and writes that user's facts (default: the bank's owner)",
    )
    p.add_argument(
        "--http",
        metavar="[HOST:]PORT",
        default=None,
        help=f"serve streamable HTTP at http://HOST:PORT{HTTP_PATH} instead of stdio "
        f"(host default {DEFAULT_HTTP_HOST})",
    )
    p.add_argument(
        "--token-file",
        metavar="PATH",
        default=None,
        help="with --http: the bearer token clients must send (first line of a file of mode 0600); "
        f"default ${TOKEN_ENV}, else one generated and printed to stderr",
    )
    p.add_argument(
        "--no-auth",
        action="store_true",
        help="with --http on a loopback address only (127.0.0.1, ::1, localhost): no token asked",
    )
    p.add_argument(
        "--max-call-bytes",
        metavar="N",
        default=None,
        help=f"the most bytes of one call (a JSON-RPC message over stdio, a request body over HTTP); "
        f"default {DEFAULT_MAX_CALL_BYTES:,} (8 MiB)",
    )
    p.add_argument(
        "--ann",
        action="store_true",
        help="rank with the approximate nearest-neighbour index, built and extended as facts are added "
        "(banks of 50,000 facts or more; docs/performance.md)",
    )
    p.add_argument(
        "--derive",
        action="store_true",
        help="remembered raw turns take the lifecycle links, confidence and event times their words state "
        "(supersession, retraction, expiry; docs/derive.md)",
    )
    p.add_argument(
        "--log-level",
        default="WARNING",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        help="what the server logs to stderr (default WARNING; INFO also logs every refused call)",
    )
    add_params_arguments(p)
    p.set_defaults(func=run)
