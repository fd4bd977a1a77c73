"""LoCoMo retrieval evaluation: evidence recall of FR-Bank systems on an external benchmark.

LoCoMo ("Evaluating Very Long-Term Conversational Memory of LLM Agents", Maharana et al., ACL
2024; CC BY-NC 4.0) holds 10 long two-speaker conversations (272 sessions, 5,882 turns) and
1,986 questions in five categories (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial), each with the ids of the turns that hold its evidence. The data is read from
``../shared/data/locomo/locomo10.json`` (relative to the repository root) or a given path; it is
never copied into the repository.

Protocol (our choices, documented):

- One bank per conversation, one item per turn: id ``<sample_id>:<dia_id>``, text
  ``"<speaker>: <text>"``; a turn that shares an image carries ``blip_caption`` appended as
  ``" [shares <caption>]"`` (the caption already reads "a photo of ..."). The session's date
  is the turn's ``said_at`` (every turn of a session shares it), the session number its
  ``session``, its categories come from the router, no slot, kind ``"turn"``.
- Every question is asked at :data:`QUERY_DELAY` after the last session's date.
- Evidence ids that are malformed (not ``D<session>:<turn>``) or name no turn of the
  conversation are skipped and reported (``skipped_evidence``), never guessed at; a question
  left with no evidence is excluded from the recall means and counted (``n_no_evidence``).
- Metrics over the top-k of each system (k ∈ :data:`KS`):

  .. math::
     \\mathrm{recall@}k = \\frac{|E \\cap \\mathrm{top}_k|}{|E|}, \\qquad
     \\mathrm{all\\_evidence@}k = [E \\subseteq \\mathrm{top}_k],

  averaged over the questions of a category (E = the question's evidence turns). Category 5
  (adversarial) is reported apart; the pooled figures and the paired bootstrap comparisons use
  categories 1–4.

The package: ``_data`` reads and validates the file, ``_metrics`` scores a ranking and summarises
a run, ``_run`` asks the questions (the bank loop is :func:`frcore.bench._rank.rank_history`),
``_report`` writes the markdown tables, ``_cli`` is ``fr bench locomo``.
"""

from __future__ import annotations

from ._cli import register_locomo as register_locomo
from ._data import (
    CATEGORIES as CATEGORIES,
    CATEGORY_LABELS as CATEGORY_LABELS,
    DATE_FORMAT as DATE_FORMAT,
    DEFAULT_DATA as DEFAULT_DATA,
    Conversation as Conversation,
    LocomoData as LocomoData,
    LocomoError as LocomoError,
    QAItem as QAItem,
    Session as Session,
    Turn as Turn,
    load_locomo as load_locomo,
    parse_conversation as parse_conversation,
    parse_locomo as parse_locomo,
    parse_session_date as parse_session_date,
    turn_text as turn_text,
)
from ._metrics import (
    KS as KS,
    POOLED as POOLED,
    all_evidence as all_evidence,
    evidence_recall as evidence_recall,
    paired_bootstrap_mean as paired_bootstrap_mean,
    question_scores as question_scores,
    summarize_locomo as summarize_locomo,
)
from ._report import markdown_locomo as markdown_locomo
from ._run import (
    QUERY_DELAY as QUERY_DELAY,
    query_time as query_time,
    run_conversation as run_conversation,
    run_locomo as run_locomo,
    turn_records as turn_records,
)
