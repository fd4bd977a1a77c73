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

The ``mcp`` SDK (and pydantic, with the tools' models in :mod:`frcore.bank._serve_models`) is
imported only when the server is built (:func:`build_server`): importing :mod:`frcore.bank` never
imports it.
"""

import datetime as _dt
import functools
import hashlib
import json
import sqlite3
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, cast

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


def turn_id(text: str, speaker: str | None, at: str) -> str:
    """The id of a turn given without one: ``turn-`` and 16 hex digits of the SHA-256 of (said_at,
    speaker, text), so remembering the same turn twice stores it once."""
    digest = hashlib.sha256("\x1f".join((at, speaker or "", text)).encode("utf-8", "surrogatepass")).hexdigest()
    return f"turn-{digest[:16]}"


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
        from .records import parse_fact

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
                derived = turn_id(
                    text if isinstance(text, str) else "", speaker if isinstance(speaker, str) else None, said_at
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


# ----------------------------------------------------------------------------- the command


def _serve(args) -> int:
    from ._bank import Bank
    from .records import check_user

    params = params_from_args(args)  # a bad file or override fails before the bank opens
    address = parse_http_address(args.http) if args.http else None
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
            server.run("stdio")
        else:
            host, port = address
            print(
                f"fr serve: {args.bank} on http://{host}:{port}{HTTP_PATH} (streamable HTTP)",
                file=sys.stderr,
                flush=True,
            )
            server.run("streamable-http", host=host, port=port, streamable_http_path=HTTP_PATH)
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


def register(subparsers) -> None:
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
