"""The typed inputs and outputs of ``fr serve``'s MCP tools (pydantic models: their JSON schemas
are the tools' input and output schemas).

A ``remember`` call's facts and turns are described by :class:`Fact` and :class:`Turn` but not
validated by them: each arrives as the JSON value sent (:data:`FactItem`, :data:`TurnItem`) and
is validated by the bank's own parser (:func:`frcore.bank.records.parse_fact` through
``Bank.add``), as ``fr bank add`` validates it: one set of rules, one wording of every refusal.

Imported only when the server is built (:func:`frcore.bank.serve.build_server`), with pydantic.
"""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from .._types import INTENT_NAMES
from .records import FACT_FIELDS, TURN_FIELDS

Time = str | None


def _about(name: str) -> str:
    """A fact field's description: its line in :data:`frcore.bank.records.FACT_FIELDS`."""
    return FACT_FIELDS[name].description


class Fact(BaseModel):
    """One fact in the FR-Bank fact format (docs/formats.md#facts-fr-bank), validated as fr bank add
    validates it; other keys are ignored."""

    # The fields of FACT_FIELDS marked ``mcp`` (tests/bank/records/test_fact_fields.py), required when the bank
    # requires them of every edge; the types are the input schema's (the bank's parser checks them).
    model_config = ConfigDict(extra="ignore")
    id: str = Field(description=_about("id"))
    text: str = Field(description=_about("text"))
    categories: dict[str, float] | None = Field(None, description=_about("categories"))
    said_at: str = Field(description=_about("said_at"))
    event_time: Time = Field(None, description=_about("event_time"))
    slot: str | None = Field(None, description=_about("slot"))
    confidence: float | None = Field(None, description=_about("confidence"))
    numeric: bool | None = Field(None, description=_about("numeric"))
    links: dict[str, str | list[str]] | None = Field(None, description=_about("links"))
    session: int | None = Field(None, description=_about("session"))
    kind: Literal["fact", "turn"] | None = Field(None, description=_about("kind"))
    speaker: str | None = Field(None, description=_about("speaker"))
    user: str | None = Field(None, description=_about("user"))


class Turn(BaseModel):
    """A raw conversation turn (another key is refused); the bank's router gives it its categories."""

    model_config = ConfigDict(extra="forbid")
    text: str = Field(description=TURN_FIELDS["text"])
    speaker: str | None = Field("user", description=TURN_FIELDS["speaker"])
    at: Time = Field(None, description=TURN_FIELDS["at"])
    id: str | None = Field(None, description=TURN_FIELDS["id"])
    session: int | None = Field(None, description=TURN_FIELDS["session"])


#: one fact of ``remember``: the value sent, unvalidated here (the schema is :class:`Fact`'s)
FactItem = Annotated[Any, WithJsonSchema(Fact.model_json_schema())]
#: one turn of ``remember``: the value sent, unvalidated here (the schema is :class:`Turn`'s)
TurnItem = Annotated[Any, WithJsonSchema(Turn.model_json_schema())]


class TurnStored(BaseModel):
    id: str
    categories: dict[str, float] = Field(description="the categories the router gave the turn")


class Quarantined(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str
    field: str | None = Field(None, description="the field whose text reads as an instruction")
    rule: str | None = Field(None, description="the detector's rule that fired")
    slot: str | None = Field(None, description="the slot the fact would update")


class Remembered(BaseModel):
    added: list[str] = Field(description="ids stored by this call")
    unchanged: list[str] = Field(description="ids already stored with identical content (skipped)")
    quarantined: list[Quarantined] = Field(
        description="facts stored in quarantine (text that reads as an instruction to a model): kept, never "
        "retrieved until released"
    )
    turns: list[TurnStored]
    warnings: list[str] = Field(
        description="facts stored but worth a look, one line each (docs/formats.md#warnings): a supersession cycle, "
        "an event time before said_at"
    )


class Hit(BaseModel):
    id: str
    text: str
    state: str = Field(description="lifecycle state as of at: active, contested, superseded, expired, retracted")
    score: float
    terms: dict[str, float] = Field(description="every named score term")
    stages: list[str] = Field(description="retrieval stages that found it (cosine, bm25, forced)")
    why: dict[str, Any] | None = Field(
        None,
        description="the explanation of the score: sigma and its sources, activation, blend, and the "
        "additive summands whose sum is total",
    )


class ExplainedHit(Hit):
    lines: list[str] = Field(default_factory=list, description="the explanation as text")


class Understood(BaseModel):
    query: str
    at: str = Field(description="the valid time of the query")
    intent: str
    intent_rule: str = Field(description="the rule that decided the intent (given, default, or a rule name)")
    routing: dict[str, float] = Field(description="category routing weights")
    n_candidates: int


class Recalled(Understood):
    results: list[Hit]


class Explained(Understood):
    n_distilled: int
    candidate_ids: list[str] = Field(description="the scored candidate set")
    results: list[ExplainedHit]


class Forgotten(BaseModel):
    edge_id: str
    retracted: bool
    effective_at: str
    reason: str


class Erased(BaseModel):
    edge_id: str
    id_hash: str | None = Field(None, description="salted SHA-256 of the id kept in the audit record")
    erased_at: str
    reason: str | None = None
    purged: bool = Field(
        description="true when the purge finished and a scan of every file of the bank (the database, its -wal and "
        "-shm, the index folder) found none of the erased fact's bytes (id, text, reasons)"
    )
    remaining: list[str] = Field(default_factory=list, description="the files where erased bytes were found")
    note: str


class Retraction(BaseModel):
    effective_at: str
    reason: str | None = None


class Finding(BaseModel):
    field: str | None = Field(None, description="the field whose text reads as an instruction (null: none now)")
    rule: str | None = Field(None, description="the detector's rule that fired")


class SlotFact(BaseModel):
    id: str | None = Field(description="edge id (null: withheld, the id itself reads as an instruction)")
    text: str | None = Field(description="the fact (null: withheld, the fact is quarantined)")
    said_at: str
    event_time: str | None = None
    recorded_at: str | None = None
    confidence: float
    state: str = Field(description="lifecycle state as of at (quarantined, or not_yet_said when said after at)")
    quarantine: Finding | None = Field(None, description="held in quarantine: the field and rule that fired")
    links: dict[str, list[str]]
    retractions: list[Retraction]


class History(BaseModel):
    slot: str | None = Field(description="the slot (null: withheld, the slot itself reads as an instruction)")
    at: str
    known_at: str | None = None
    facts: list[SlotFact]


class Embedder(BaseModel):
    name: str
    dim: int


class Stats(BaseModel):
    bank: str | None = None
    facts: int
    turns: int
    slots: int
    states: dict[str, int] = Field(description="edges per lifecycle state now")
    quarantined: int
    retractions: int
    erasures: int
    embedder: Embedder
    owner: str | None = None
    user: str | None = Field(None, description="the user whose memory this server serves (null: the bank's owner)")
    schema_version: int
    version: int


At = Annotated[Time, Field(description="valid time of the query: YYYY-MM-DD or ISO-8601 (default now)")]
KnownAt = Annotated[Time, Field(description="transaction-time cut: only what the bank had recorded by then")]
Intent = Annotated[
    str | None,
    Field(
        description="override the inferred intent: " + ", ".join(INTENT_NAMES) + " (historical and change_history "
        "also return superseded values)",
        json_schema_extra={"enum": [*INTENT_NAMES, None]},
    ),
]
Cats = Annotated[list[str] | None, Field(description="override routing: category names")]
