"""Maps over independent tasks, in-process or on a Dask cluster, with progress.

:func:`map_tasks` is the one map every command that takes ``--scheduler ADDRESS`` uses (``fr
bench run`` over personas, ``fr bench longmemeval`` over questions, ``fr calibrate --folds`` over
folds, ``fr sweep`` and ``fr sweep grid`` over personas and chunks of settings):
``map_tasks(fn, tasks, shared)`` is ``[fn(*shared, *task) for task in tasks]``, in task order,
whether it runs in this process or on a ``dask.distributed.Client``'s workers.

What is sent: on a cluster the ``shared`` arguments are scattered to every worker once
(``broadcast``) and each task ships only its own arguments (an index, a question, a chunk of
settings). An embedder with the persistent vector cache (and a :class:`~frcore.bank.Router`
over one) is not pickled: it travels as a :class:`Rebuild` recipe (its name and cache path) and
is built on the worker once per process (:func:`portable`). Progress is one tqdm bar over the
completed tasks (stderr); on a cluster a line first says how many bytes go out.
"""

from __future__ import annotations

import pickle
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

#: One client per scheduler address per process (a command's maps share it).
_CLIENTS: dict[str, Any] = {}
#: What :class:`Rebuild` recipes built in this process (a worker builds each once).
_BUILT: dict[Any, Any] = {}


@dataclass(frozen=True)
class Rebuild:
    """A value built where it is used: ``factory(*args)`` (``args`` may hold recipes), once per
    process. ``factory`` must be importable on the worker (a module-level function or class)."""

    factory: Callable
    args: tuple = ()


def resolve(x):
    """``x``, or the value its :class:`Rebuild` recipe builds (cached per process)."""
    if not isinstance(x, Rebuild):
        return x
    if x not in _BUILT:
        _BUILT[x] = x.factory(*(resolve(a) for a in x.args))
    return _BUILT[x]


def _cached_embedder(name: str, path: str):
    from ..bank import CachedEmbedder, get_embedder

    return CachedEmbedder(get_embedder(name), path)


def portable(x):
    """``x`` as it is shipped to a worker: a cached embedder, or a router over one, as a
    :class:`Rebuild` recipe; anything else as is (pickled)."""
    from ..bank import CachedEmbedder, Router

    if isinstance(x, CachedEmbedder):
        return Rebuild(_cached_embedder, (x.name, str(x.path)))
    if type(x) is Router and x.embedder is not None:
        return Rebuild(Router, (portable(x.embedder),))
    return x


def _call(fn: Callable, shared: Sequence, task: Sequence):
    return fn(*(resolve(a) for a in shared), *(resolve(a) for a in task))


def connect(scheduler: str | None = None, client=None):
    """The client to map on: ``client`` if given, else one connected to ``scheduler`` (reused
    for the same address), else ``None`` (in-process)."""
    if client is not None or not scheduler:
        return client
    if scheduler not in _CLIENTS:
        from dask.distributed import Client

        _CLIENTS[scheduler] = Client(scheduler, set_as_default=False)
    return _CLIENTS[scheduler]


def disconnect() -> None:
    """Close the clients :func:`connect` opened in this process."""
    while _CLIENTS:
        _CLIENTS.popitem()[1].close()


def shipped_bytes(values: Sequence) -> int:
    """Pickled size of ``values`` as :func:`map_tasks` ships them (after :func:`portable`)."""
    return len(pickle.dumps(tuple(portable(v) for v in values), protocol=pickle.HIGHEST_PROTOCOL))


def map_tasks(
    fn: Callable,
    tasks: Sequence[Sequence],
    shared: Sequence = (),
    *,
    scheduler: str | None = None,
    client=None,
    desc: str = "tasks",
    unit: str = "task",
    progress: bool = True,
) -> list:
    """``[fn(*shared, *task) for task in tasks]`` in task order: in-process, or on the Dask
    cluster of ``client`` / ``scheduler`` (``shared`` scattered to every worker once, each task
    shipping its own arguments, recipes built on the worker). A task's exception is raised here."""
    from tqdm import tqdm

    tasks = [tuple(t) for t in tasks]
    client = connect(scheduler, client)
    if client is None:
        return [_call(fn, shared, t) for t in tqdm(tasks, desc=desc, unit=unit, disable=not progress)]
    from dask.distributed import as_completed

    ship = [portable(v) for v in shared]
    if progress:
        per = max((shipped_bytes(t) for t in tasks), default=0)
        n_workers = len(client.scheduler_info().get("workers", {}))
        print(
            f"{desc}: {len(tasks)} {unit}s on {n_workers} Dask worker(s); {shipped_bytes(ship):,} bytes scattered to "
            f"each worker once, ≤ {per:,} bytes per {unit}",
            file=sys.stderr,
            flush=True,
        )
    # [v]: a list or dict is one value. hash=False: a fresh key per map, so a later map that
    # scatters the same value never races the release of the earlier map's key (lost dependencies).
    refs = [client.scatter([v], broadcast=True, hash=False)[0] for v in ship]
    futures = [client.submit(_call, fn, refs, [portable(a) for a in t], pure=False) for t in tasks]
    index = {f.key: i for i, f in enumerate(futures)}
    out: list = [None] * len(tasks)
    with tqdm(total=len(tasks), desc=desc, unit=unit, disable=not progress) as bar, client.as_current():
        for f in as_completed(futures):
            out[index[f.key]] = f.result()
            bar.update(1)
    return out


def add_scheduler_argument(parser) -> None:
    """``--scheduler ADDRESS``, as every command that maps over tasks takes it."""
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="Dask scheduler address (e.g. tcp://host:8786): the command's independent tasks run on its workers, "
        "which must import frcore (default: in-process)",
    )
