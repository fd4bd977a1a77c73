"""Adding batches of facts: each batch prepared (parsed and validated, its free-text fields checked
for prompt injection, its texts embedded: :func:`prepare`), then stored in one transaction.

:func:`add_batches` (``Bank.add_batches``) overlaps the two over two processes: while one batch
is stored, a worker process (:mod:`frcore.bank._ingest_worker`, started by the first call that has
a second batch, answering over a private pipe) prepares the next. What the worker returns is what
:func:`prepare` returns in the calling process for the same input (the same functions run); a
batch the worker fails on — any error, or the worker gone — is prepared again in the calling
process, which then raises that batch's own error exactly as :meth:`Bank.add` would. So the
results are those of calling ``Bank.add`` on each batch in turn, the batches before a failing one
stored.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from .records import neutralize, owner_pattern
from .storage import Batch, checked, parse_batch

#: texts embedded per call of the embedder
EMBED_CHUNK = 256


@dataclass(frozen=True)
class ReadyBatch:
    """A batch ready for the store: validated and checked (:func:`frcore.bank.storage.checked`),
    with its vectors ``(model key, (n, d) float32)`` when an embedder was given."""

    batch: Batch
    vectors: tuple[str, np.ndarray] | None


def embed_records(embedder: Any, key: str, normalize: Callable[[str], str], records) -> tuple[str, np.ndarray]:
    """(model key, vectors) of facts about to be stored: their texts as ``normalize`` reads them
    (the owner's name replaced), embedded in chunks of :data:`EMBED_CHUNK`."""
    texts = [normalize(r.text) for r in records]
    parts = [
        np.asarray(embedder.embed(texts[k : k + EMBED_CHUNK]), dtype=np.float32)
        for k in range(0, len(texts), EMBED_CHUNK)
    ]
    vecs = np.concatenate(parts) if parts else np.zeros((0, embedder.dim), dtype=np.float32)
    return key, vecs


def prepare(
    facts: Sequence[Any],
    where: Sequence[str] | None,
    user: str | None,
    recorded_at: datetime | None,
    embedder: Any = None,
    key: str = "",
    owner: str | None = None,
) -> ReadyBatch:
    """One batch parsed and validated for ``user`` (:func:`frcore.bank.storage.parse_batch`),
    checked for prompt injection, and embedded by ``embedder`` under ``key`` with the owner
    normalisation of ``owner`` (none without an embedder)."""
    batch = checked(parse_batch(list(facts), where, user, recorded_at))
    if embedder is None:
        return ReadyBatch(batch, None)
    pattern = owner_pattern(owner)
    return ReadyBatch(batch, embed_records(embedder, key, lambda t: neutralize(t, pattern), batch.records))


@contextlib.contextmanager
def collector_paused():
    """Python's cyclic garbage collector paused (when it runs) while a bank makes objects by the
    hundred thousand, few of them in cycles (an add; the first view of a bank, which reads every
    row): each collection walks every object the bank holds, about a fifth of an ingest and a
    third of a first query at 100,000 facts. Reference counting still frees them."""
    running = gc.isenabled()
    if running:
        gc.disable()
    try:
        yield
    finally:
        if running:
            gc.enable()


# ----------------------------------------------------------------------------- the worker process


def _pickled(obj: Any) -> bytes:
    return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def write_frames(fh, frames: Sequence[bytes]) -> None:
    """Each of ``frames`` (pickled objects) after its length (8 bytes, little-endian): messages."""
    for data in frames:
        fh.write(struct.pack("<Q", len(data)))
        fh.write(data)
    fh.flush()


def write_message(fh, obj: Any) -> None:
    """``obj`` as a message (:func:`write_frames`)."""
    write_frames(fh, [_pickled(obj)])


def read_message(fh) -> Any:
    """The next message of :func:`write_message`; ``EOFError`` at the end of the stream."""
    head = fh.read(8)
    if len(head) < 8:
        raise EOFError
    (n,) = struct.unpack("<Q", head)
    data = fh.read(n)
    if len(data) < n:
        raise EOFError
    return pickle.loads(data)


class Worker:
    """A process that prepares batches (:mod:`frcore.bank._ingest_worker`) with ``embedder`` (sent
    once, before the first job; ``None``: it does not embed): one job in flight."""

    def __init__(self, embedder: Any = None) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        self._proc: subprocess.Popen | None = subprocess.Popen(
            [sys.executable, "-m", "frcore.bank._ingest_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self._sending: threading.Thread | None = None
        try:
            hello = _pickled((PROTOCOL, embedder))
        except Exception:  # any embedder that does not pickle (a model session, a lock): the caller embeds
            hello = _pickled((PROTOCOL, None))
        self._hello: bytes | None = hello

    def submit(self, job: tuple) -> bool:
        """Send :func:`prepare`'s arguments (pickled here, written by a thread: the worker may
        still be starting); False when the worker is gone."""
        if self._proc is None:
            return False
        try:
            data = [_pickled(job)]
        except Exception:  # an argument that does not pickle: this batch is prepared here
            return False
        if self._hello is not None:
            data.insert(0, self._hello)
            self._hello = None
        self._sending = threading.Thread(target=self._send, args=(self._proc.stdin, data), daemon=True)
        self._sending.start()
        return True

    @staticmethod
    def _send(fh, frames: list[bytes]) -> None:
        try:
            write_frames(fh, frames)
        except (OSError, ValueError):
            pass  # the worker is gone: result() finds its output ended

    def result(self) -> ReadyBatch | None:
        """The prepared batch of the job sent last, or ``None`` (it failed, or the worker is gone)."""
        if self._proc is None:
            return None
        try:
            got = read_message(self._proc.stdout)
        except (EOFError, OSError, pickle.UnpicklingError, AttributeError, ImportError):
            self.close()
            return None
        return got if isinstance(got, ReadyBatch) else None

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if self._sending is not None:
            self._sending.join(timeout=5)
        with contextlib.suppress(OSError, ValueError):
            proc.stdin.close()  # type: ignore[union-attr]
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        with contextlib.suppress(OSError):
            proc.stdout.close()  # type: ignore[union-attr]


#: what the two ends of the pipe must share: this module's source (a worker started from another
#: version of frcore than its caller's exits at once, and the caller prepares every batch itself)
PROTOCOL = hashlib.blake2b(Path(__file__).read_bytes(), digest_size=16).hexdigest()


def serve(inp, out) -> None:
    """The worker's loop: :data:`PROTOCOL` and the embedder read from ``inp`` (another protocol:
    it ends), then each job (:func:`prepare`'s arguments but the embedder) prepared, its
    :class:`ReadyBatch` (or, when it raised, the exception's type name) written to ``out``, until
    ``inp`` ends."""
    gc.disable()  # as Bank.add pauses it: the objects a batch makes are few in cycles
    try:
        protocol, embedder = read_message(inp)
    except Exception:  # the end, or a message it cannot read
        return
    if protocol != PROTOCOL:
        return
    while True:
        try:
            facts, where, user, recorded_at, key, owner = read_message(inp)
        except Exception:  # the end, or a job it cannot read: the caller prepares it itself
            return
        try:
            answer: Any = prepare(facts, where, user, recorded_at, embedder, key, owner)
        except Exception as e:  # the caller prepares the batch itself, and raises it
            answer = type(e).__name__
        write_message(out, answer)
        gc.collect(0)


# ----------------------------------------------------------------------------- the pipeline

_END = object()


def add_batches(
    prepare_here: Callable[[Sequence[Any], Sequence[str] | None], ReadyBatch],
    store: Callable[[ReadyBatch], Any],
    job: Callable[[Sequence[Any], Sequence[str] | None], tuple] | None,
    batches: Iterable[Iterable[Mapping[str, Any]]],
    where: Iterable[Sequence[str] | None] | None = None,
    embedder: Any = None,
) -> list[Any]:
    """``store(prepare_here(b, w))`` for each batch ``b`` (labels ``w``) in order, each batch's
    :func:`prepare` done by a :class:`Worker` while the batch before it is stored when ``job``
    gives the worker's arguments (``None``: every batch prepared here; ``embedder``: the one the
    worker embeds with, when it pickles). Returns what ``store`` returned for each."""
    items: Iterator = iter(batches)
    labels: Iterator = iter(where) if where is not None else iter(lambda: None, _END)
    out: list[Any] = []
    worker: Worker | None = None
    current: Any = next(items, _END)
    current_where = next(labels, None) if current is not _END else None
    ready: ReadyBatch | None = None
    try:
        while current is not _END:
            current = list(current)
            following: Any = next(items, _END)
            following_where = next(labels, None) if following is not _END else None
            sent = False
            if following is not _END and job is not None:
                following = list(following)
                if worker is None:
                    try:
                        worker = Worker(embedder)
                    except OSError:  # no interpreter to start (an embedded Python): every batch here
                        job = None
                if worker is not None and job is not None:
                    sent = worker.submit(job(following, following_where))
            out.append(store(ready if ready is not None else prepare_here(current, current_where)))
            ready = worker.result() if sent and worker is not None else None
            current, current_where = following, following_where
    finally:
        if worker is not None:
            worker.close()
    return out
