"""LongMemEval retrieval evaluation, judge-free, scored by the benchmark's own rules.

LongMemEval (Wu et al., "LongMemEval: Benchmarking Chat Assistants on Long-Term Interactive
Memory", ICLR 2025; MIT) gives each question a history of chat sessions (S: about 50, M: about
500; the oracle version only the evidence sessions). The data is read from a given path,
``.json`` or ``.json.gz`` as released; it is never copied into the repository.

Protocol, as the benchmark's retrieval code defines it (``src/retrieval/run_retrieval.py`` and
``eval_utils.py``) — docs/benchmark.md gives the formulas:

- The corpus of a question is its history's **user messages** (granularity ``turn``) or its
  sessions, each the user messages joined by one space (granularity ``session``). The id of the
  N-th message (1-based, counting every message of the session) of session S is ``S_N``; in a
  session whose id contains ``answer``, a user message without ``has_answer`` has ``answer``
  replaced by ``noans`` in its id (a session without such a message, likewise, at session
  granularity). The gold of a question are the corpus ids that contain ``answer``.
- Metrics for k ∈ :data:`KS`: ``recall_any@k``, ``recall_all@k``, ``ndcg_any@k``; at turn
  granularity also at session level, the message number stripped and k widened until the top
  holds k distinct sessions. Abstention questions (ids containing ``_abs``) are excluded from
  every mean.

frcore's choices (documented in docs/benchmark.md):

- One FR-Bank per question; every corpus item enters as a raw turn (``kind: "turn"``,
  ``speaker: "user"``, router categories, no slot), said at its session's date, as MCP
  ``remember`` stores turns. The question is asked at its ``question_date``, or at the last
  session's date when that is later (17 of the 102 development questions are dated before some
  of their sessions; asking earlier would hide those messages from the bank).
- A system's ranking is its bank's answer (a lifecycle-ranked system returns its distilled
  candidates, :func:`frcore.bank._bank.result_limit`), then every other message the bank can
  return in decreasing cosine similarity to the question (the first stage's order; ties in
  corpus order), so the log ranks the whole corpus. Messages the bank holds in quarantine as
  prompt injections are never returned; they are counted in the summary. An empty message is
  in the corpus (the benchmark's BM25 ranks it) but not in the bank, so FR-Bank's systems never
  rank it.
- ``lme-bm25`` is the benchmark's own BM25 baseline, outside FR-Bank: ``rank_bm25.BM25Okapi``
  over the corpus split on single spaces, the question split the same way, ranked by
  ``numpy.argsort(scores)[::-1]``.

The package: ``_data`` reads and validates a file, ``_metrics`` holds the benchmark's metrics and
the summary of a run, ``_run`` ranks each question's corpus under every system (the bank loop is
:func:`frcore.bench._rank.rank_history`) and writes the logs, ``_report`` writes a log line and the
markdown tables, ``_cli`` is ``fr bench longmemeval``.
"""

from __future__ import annotations

from ._cli import register_longmemeval as register_longmemeval
from ._data import (
    DEFAULT_DATA as DEFAULT_DATA,
    GRANULARITIES as GRANULARITIES,
    QUESTION_TYPES as QUESTION_TYPES,
    CorpusItem as CorpusItem,
    LongMemEvalData as LongMemEvalData,
    LongMemEvalError as LongMemEvalError,
    Question as Question,
    load_longmemeval as load_longmemeval,
    parse_date as parse_date,
    parse_longmemeval as parse_longmemeval,
    parse_question as parse_question,
    session_corpus as session_corpus,
)
from ._metrics import (
    BASELINE as BASELINE,
    COMPARED as COMPARED,
    KS as KS,
    LIFECYCLE_PAIR as LIFECYCLE_PAIR,
    METRICS as METRICS,
    STALE_K as STALE_K,
    dcg as dcg,
    derivation_measures as derivation_measures,
    evaluate_retrieval as evaluate_retrieval,
    evaluate_turn2session as evaluate_turn2session,
    knowledge_update_measures as knowledge_update_measures,
    latest_session_share as latest_session_share,
    mean_metrics as mean_metrics,
    metric_names as metric_names,
    ndcg_any as ndcg_any,
    question_metrics as question_metrics,
    session_k as session_k,
    session_of as session_of,
    summarize as summarize,
)
from ._report import log_entry as log_entry, markdown_longmemeval as markdown_longmemeval
from ._run import (
    DEFAULT_SYSTEMS as DEFAULT_SYSTEMS,
    PEER_SYSTEMS as PEER_SYSTEMS,
    bank_fact as bank_fact,
    complete_ranking as complete_ranking,
    lme_bm25_ranking as lme_bm25_ranking,
    resolve as resolve,
    run_longmemeval as run_longmemeval,
    run_question as run_question,
)
