"""A tiny hand-made LongMemEval (tests/bench/test_longmemeval.py, tests/bench/test_dask_cluster.py): four questions
in the benchmark's own format (knowledge update, single-session user and assistant, an abstention)."""

from __future__ import annotations

import json


def _msg(role, content, has_answer=False):
    return {"role": role, "content": content, "has_answer": has_answer}


def _question(qid, qtype, question, qdate, sessions, answer="x"):
    """``sessions``: (session id, date, messages)."""
    return {
        "question_id": qid,
        "question_type": qtype,
        "question": question,
        "question_date": qdate,
        "answer": answer,
        "answer_session_ids": [s for s, _, _ in sessions if "answer" in s],
        "haystack_session_ids": [s for s, _, _ in sessions],
        "haystack_dates": [d for _, d, _ in sessions],
        "haystack_sessions": [m for _, _, m in sessions],
    }


FILLER = [
    (
        "sharegpt_f1",
        "2023/01/02 (Mon) 10:00",
        [_msg("user", "Can you explain how tides work?"), _msg("assistant", "Tides...")],
    ),
    ("ultrachat_f2", "2023/02/10 (Fri) 11:30", [_msg("user", "Write a short poem about autumn leaves.")]),
    ("sharegpt_f3", "2023/03/15 (Wed) 09:00", [_msg("user", "What is a good recipe for lentil soup?")]),
]


def tiny() -> list[dict]:
    ku = _question(
        "ku1",
        "knowledge-update",
        "Where do I work now?",
        "2023/06/01 (Thu) 12:00",
        [
            FILLER[0],
            (
                "answer_k_1",
                "2023/01/20 (Fri) 08:00",
                [_msg("user", "I work at the bakery on Elm street.", True), _msg("assistant", "Nice!")],
            ),
            FILLER[1],
            (
                "answer_k_2",
                "2023/04/05 (Wed) 18:00",
                [
                    _msg("user", "Some small talk first."),
                    _msg("assistant", "Sure."),
                    _msg("user", "I now work at the library downtown.", True),
                ],
            ),
            FILLER[2],
        ],
        answer="the library",
    )
    ssu = _question(
        "u1",
        "single-session-user",
        "What breed is my dog?",
        "2023/03/01 (Wed) 09:00",  # earlier than the last session: asked at that session's date
        [
            FILLER[0],
            ("answer_u_1", "2023/02/01 (Wed) 10:00", [_msg("user", "My dog is a greyhound called Pixel.", True)]),
            FILLER[2],
        ],
    )
    ssa = _question(
        "a1",
        "single-session-assistant",
        "What was the second tip you gave me about sleep?",
        "2023/05/01 (Mon) 09:00",
        [
            FILLER[1],
            (
                "answer_sa_1",
                "2023/02/20 (Mon) 10:00",
                [_msg("user", "Give me tips to sleep better."), _msg("assistant", "1. Dark room 2. No screens", True)],
            ),
        ],
    )
    abst = _question(
        "u2_abs",
        "single-session-user",
        "What breed is my cat?",
        "2023/05/01 (Mon) 09:00",
        [FILLER[0], ("answer_u2_abs_1", "2023/02/01 (Wed) 10:00", [_msg("user", "My dog is a greyhound.", True)])],
    )
    return json.loads(json.dumps([ku, ssu, ssa, abst]))  # no object shared between calls
