"""Lifecycle metadata derived from raw turns by fixed rules, without a model (docs/derive.md).

The layer reads words only: :func:`derive` gives each raw turn the ``supersedes`` / ``retracts``
links, confidence and event time its own words state against the bank's earlier turns, with
the :class:`Evidence` of each. The bank (:class:`frcore.bank.Bank` with ``derive``) calls it
on the raw turns of a batch before they are stored. :func:`question_time` reads a question's
own time words (a window, an order, a duration) with the same table of time expressions.
"""

from ._records import (
    Deriver as Deriver,
    derive_records as derive_records,
    explain_derivation as explain_derivation,
    is_derivable as is_derivable,
    is_user_turn as is_user_turn,
    turn_index as turn_index,
    turn_of as turn_of,
)
from ._rules import (
    CUE_CONFIDENCE as CUE_CONFIDENCE,
    MIN_KEY_JACCARD as MIN_KEY_JACCARD,
    MIN_SHARED_KEYS as MIN_SHARED_KEYS,
    TENTATIVE_CONFIDENCE as TENTATIVE_CONFIDENCE,
    VALUE_CONFIDENCE as VALUE_CONFIDENCE,
    DeriveConfig as DeriveConfig,
    Derived as Derived,
    Evidence as Evidence,
    Turn as Turn,
    TurnIndex as TurnIndex,
    derive as derive,
    derive_one as derive_one,
)
from ._text import claims as claims, statements as statements
from ._times import QuestionTime as QuestionTime, event_time as event_time, question_time as question_time
