"""Fact records: the fact schema and its constants, lifecycle states and snapshots.

What the rest of FR-Bank uses of this layer is imported from here; its modules are its own.
"""

from ._facts import (
    FACT_FIELDS as FACT_FIELDS,
    MAX_TEXT_CHARS as MAX_TEXT_CHARS,
    OWNER as OWNER,
    REQUIRED_KEYS as REQUIRED_KEYS,
    TURN_FIELDS as TURN_FIELDS,
    FactError as FactError,
    FactField as FactField,
    FactRecord as FactRecord,
    check_user as check_user,
    injection_finding as injection_finding,
    parse_fact as parse_fact,
    to_utc_naive as to_utc_naive,
)
from ._lifecycle import (
    INVISIBLE as INVISIBLE,
    LifecycleColumns as LifecycleColumns,
    Snapshot as Snapshot,
    Transition as Transition,
    concat_columns as concat_columns,
    derive_states as derive_states,
    edge_columns as edge_columns,
    retracted_by_transitions as retracted_by_transitions,
    row_lifecycle as row_lifecycle,
    slot_codes as slot_codes,
    snapshot_from_columns as snapshot_from_columns,
    states_from_columns as states_from_columns,
)
from ._owner import neutralize as neutralize, owner_pattern as owner_pattern

__all__ = [
    "neutralize",
    "owner_pattern",
    "FACT_FIELDS",
    "FactError",
    "FactField",
    "FactRecord",
    "MAX_TEXT_CHARS",
    "TURN_FIELDS",
    "INVISIBLE",
    "LifecycleColumns",
    "OWNER",
    "REQUIRED_KEYS",
    "Snapshot",
    "Transition",
    "check_user",
    "concat_columns",
    "derive_states",
    "edge_columns",
    "injection_finding",
    "parse_fact",
    "retracted_by_transitions",
    "row_lifecycle",
    "slot_codes",
    "snapshot_from_columns",
    "states_from_columns",
    "to_utc_naive",
]
