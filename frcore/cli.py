"""The ``fr`` command.

Its subcommands are not named here: every package declares its own in ``pyproject.toml`` as an
entry point of the group :data:`ENTRY_POINT_GROUP` (``name = "module:register"``), where
``register(subparsers)`` adds an argparse parser whose ``func(args) -> int`` runs it. A subcommand
whose entry point cannot be loaded stays listed in ``fr --help`` as unavailable, with the error;
invoking it prints the error and exits with :data:`EXIT_UNAVAILABLE`. When the cause is a missing
extra or a package that only a source checkout has, the error is one line saying so
(:mod:`frcore._extras`: ``fr serve needs the 'serve' extra: pip install 'frcore[serve]'``), also when
a running command imports an extra's module that is not installed.

``fr NAME ...`` loads only the entry point of ``NAME`` (a subcommand's imports are its own: ``fr
bank query`` does not import the benchmark's statistics); ``fr``, ``fr --help`` and an unknown
name load them all.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import re
import sqlite3
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points

from ._extras import explain_import_error
from ._shown import SHOWN_CHARS, clipped, shown

#: the entry-point group the subcommands are declared in
ENTRY_POINT_GROUP = "frcore.commands"
#: exit status of a subcommand that could not be loaded
EXIT_UNAVAILABLE = 3


@dataclass(frozen=True)
class Unavailable:
    """A subcommand whose entry point failed to load or register."""

    name: str
    target: str  # "module:register"
    error: str  # "ExceptionType: message"
    traceback: str
    #: the one line that says why, when the cause is known (a missing extra, a checkout-only package)
    line: str | None = None


def unavailable(name: str, target: str, error: BaseException) -> Unavailable:
    """The :class:`Unavailable` of subcommand ``name`` (``fr NAME``; ``target``: its ``module:register``)
    whose loading raised ``error`` (called in the ``except`` clause: the traceback is the current one)."""
    return Unavailable(
        name,
        target,
        f"{type(error).__name__}: {error}",
        traceback.format_exc(limit=-3),
        explain_import_error(error, f"fr {name}"),
    )


def command_entry_points() -> list[EntryPoint]:
    """The declared subcommands, sorted by name."""
    return sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)


#: a value argparse quotes in a message (``invalid int value: 'x'``), when long enough to shorten
_QUOTED = re.compile(rf"'[^'\n]{{{SHOWN_CHARS + 1},}}'|\"[^\"\n]{{{SHOWN_CHARS + 1},}}\"")


class Parser(argparse.ArgumentParser):
    """The parser of ``fr`` and, through ``add_subparsers`` (which makes its parsers of the parent's
    class), of every subcommand and ``fr bank`` action: a bad argument is ONE line on stderr,
    ``PROG: error: MESSAGE (see `PROG --help`)``, with exit status 2, instead of argparse's usage
    block and message; a value the message quotes is shortened (:func:`frcore._shown.shown`).
    ``--help`` is argparse's own."""

    def error(self, message: str):
        text = " ".join(str(message).split())
        text = _QUOTED.sub(lambda m: shown(m.group(0)[1:-1]), text)
        self.exit(2, f"{self.prog}: error: {text} (see `{self.prog} --help`)\n")


#: seconds a subcommand runs before the JAX warnings it raised so far are printed (:class:`_HeldWarnings`)
HOLD_SECONDS = 5.0


class _HeldWarnings:
    """JAX's warnings during a subcommand, held so that a failure is one line.

    JAX warns on stderr as it starts or converts: a log record ("An NVIDIA GPU may be present on
    this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.") or a Python
    warning (float64 truncated without x64). Printed before an error, they made the error several
    lines. Held here: the JAX logger's records that would reach stderr through logging's last
    resort (none when logging is configured), and the Python warnings that come from JAX's code
    or name it. A command that returns prints them as they would have been printed, when it
    ends or once it has run :data:`HOLD_SECONDS` (then the later ones pass straight through); a
    command that fails prints its one error line and drops them. Every other warning is printed
    as usual."""

    def __init__(self) -> None:
        self._held: list[Callable[[], object]] = []
        self._lock = threading.Lock()
        self._passing = False
        self._timer: threading.Timer | None = None
        self._logger = logging.getLogger("jax")
        self._handler: logging.Handler | None = None
        self._catch = warnings.catch_warnings()
        self._show = warnings.showwarning

    def __enter__(self) -> _HeldWarnings:
        self._catch.__enter__()
        self._show = warnings.showwarning
        warnings.showwarning = self._warning
        if not self._logger.hasHandlers():  # its records would reach stderr by logging.lastResort
            self._handler = _Hold(self)
            self._logger.addHandler(self._handler)
        self._timer = threading.Timer(HOLD_SECONDS, self.release)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, kind, value, tb) -> None:
        if kind is None:
            self.release()
        else:
            self.drop()
        if self._timer is not None:
            self._timer.cancel()
        if self._handler is not None:
            self._logger.removeHandler(self._handler)
        self._catch.__exit__(kind, value, tb)

    def _hold(self, show: Callable[[], object]) -> None:
        with self._lock:
            if not self._passing:
                self._held.append(show)
                return
        show()

    def _warning(self, message, category, filename, lineno, file=None, line=None) -> None:
        show = self._show
        text = str(message)
        jax_made = f"{os.sep}jax{os.sep}" in str(filename) or f"{os.sep}jaxlib{os.sep}" in str(filename)
        if not (jax_made or "jax" in text.lower()):
            show(message, category, filename, lineno, file, line)
            return
        self._hold(lambda: show(message, category, filename, lineno, file, line))

    def record(self, record: logging.LogRecord) -> None:
        last = logging.lastResort
        if last is not None and record.levelno >= last.level:
            self._hold(lambda: last.handle(record))

    def release(self) -> None:
        """Print what is held, and let later warnings through."""
        with self._lock:
            held, self._held, self._passing = self._held, [], True
        for show in held:
            try:
                show()
            except Exception:  # stderr closed: nothing to warn on
                pass

    def drop(self) -> None:
        """Forget what is held (the command failed: its error is the one line)."""
        with self._lock:
            self._held, self._passing = [], True


class _Hold(logging.Handler):
    def __init__(self, held: _HeldWarnings) -> None:
        super().__init__(logging.WARNING)
        self.held = held

    def emit(self, record: logging.LogRecord) -> None:
        self.held.record(record)


def _placeholder(sub, bad: Unavailable) -> None:
    why = bad.line or f"failed to load {bad.target}: {bad.error}"
    p = sub.add_parser(bad.name, add_help=False, help=f"UNAVAILABLE — {why}")
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=lambda args: _report_unavailable(bad))


def _report_unavailable(bad: Unavailable) -> int:
    if bad.line is not None:  # the cause is known: one line, no traceback
        print(bad.line, file=sys.stderr)
        return EXIT_UNAVAILABLE
    hint = "\n(a module is missing: `make setup` reinstalls the project)" if "ModuleNotFoundError" in bad.error else ""
    print(
        f"fr {bad.name}: error: this subcommand could not be loaded ({bad.target}): "
        f"{bad.error}\n{bad.traceback}".rstrip()
        + hint,
        file=sys.stderr,
    )
    return EXIT_UNAVAILABLE


def build_parser(commands: Iterable[EntryPoint] | None = None) -> tuple[argparse.ArgumentParser, list[Unavailable]]:
    """The ``fr`` parser with every declared subcommand; returns it and the subcommands that
    could not be loaded (each still listed, as a parser that reports its error)."""
    eps = command_entry_points() if commands is None else list(commands)
    parser = Parser(
        prog="fr", description="Fortunate Recall: lifecycle layer, FR-Bank, LifecycleBench, theory and experiments."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    failed: list[Unavailable] = []
    seen: set[str] = set()
    for ep in eps:
        if ep.name in seen:
            raise RuntimeError(
                f"fr: subcommand {ep.name!r} is declared twice in entry-point group {ENTRY_POINT_GROUP!r}"
            )
        seen.add(ep.name)
        try:
            register: Callable = ep.load()
            before = set(sub.choices)
            register(sub)
            if ep.name not in sub.choices:
                added = sorted(set(sub.choices) - before)
                raise RuntimeError(f"register() added {added or 'no parser'}, not {ep.name!r}")
        except Exception as e:  # a broken subcommand must not take the others down, nor vanish
            bad = unavailable(ep.name, ep.value, e)
            failed.append(bad)
            if ep.name in sub.choices:  # registered, then failed: never run it half-configured
                sub.choices[ep.name].set_defaults(func=lambda args, bad=bad: _report_unavailable(bad))
            else:
                _placeholder(sub, bad)
    if failed:
        parser.epilog = "unavailable (failed to load): " + "; ".join(f"{b.name} ({b.line or b.error})" for b in failed)
    elif not eps:
        parser.epilog = (
            f"no subcommands are declared (entry-point group {ENTRY_POINT_GROUP!r}): install the project (`make setup`)"
        )
    return parser, failed


def main(argv: list[str] | None = None) -> int:
    from ._runtime import enable_compilation_cache, prefer_sync_cpu_dispatch

    prefer_sync_cpu_dispatch()  # before any subcommand module starts JAX's backend
    enable_compilation_cache()
    argv = sys.argv[1:] if argv is None else list(argv)
    eps = command_entry_points()
    named = [ep for ep in eps if argv and ep.name == argv[0]]
    parser, failed = build_parser(named or eps)
    for bad in failed:
        if argv and argv[0] == bad.name:  # before argparse, which would judge its arguments
            return _report_unavailable(bad)
        why = bad.line or f"{bad.target}: {bad.error}"
        print(f"fr: warning: subcommand {bad.name!r} is unavailable ({why})", file=sys.stderr)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        with _HeldWarnings():  # JAX's warnings never make an error several lines
            rc = int(args.func(args) or 0)
        sys.stdout.flush()  # a full disk or a closed pipe on stdout is reported here, not at exit
        return rc
    except BrokenPipeError:  # `fr bank export … | head`: the reader left; no traceback
        _detach_stdout()
        _error(args.command, "output closed early (broken pipe); the rest was not written")
        return EXIT_BROKEN_PIPE
    except (ValueError, FileNotFoundError) as e:
        _error(args.command, f"error: {e}")
        return 2
    except sqlite3.Error as e:  # a subcommand that did not map it itself
        _error(args.command, f"error: SQLite: {e}")
        return 2
    except OSError as e:  # disk full, permission denied, ... (one line, no traceback)
        _detach_stdout()
        _error(args.command, f"error: {(e.filename + ': ') if e.filename else ''}{e.strerror or e}")
        return 2
    except RecursionError:
        _error(args.command, "error: input nested too deeply to process")
        return 2
    except ImportError as e:  # an extra's module imported as the command ran (fr bench --scheduler without dask)
        line = explain_import_error(e, f"fr {args.command}")
        if line is None:
            raise
        print(line, file=sys.stderr)  # one line: it names the command, the extra and how to install it
        return EXIT_UNAVAILABLE
    except MemoryError:
        _error(args.command, "error: out of memory")
        return 2
    except KeyboardInterrupt:
        _error(args.command, "interrupted")
        return 130


def run() -> int:
    """The ``fr`` console script: :func:`main`, then every object left is frozen out of the
    interpreter's last garbage collections (``gc.freeze``): at exit, a full collection over the
    objects JAX's modules hold took 0.35-0.45 s of every command. Files are closed, and output
    flushed, by then; the operating system reclaims the memory."""
    rc = main()
    gc.freeze()
    return rc


#: exit status after a broken pipe on stdout (as a shell reports a command killed by SIGPIPE)
EXIT_BROKEN_PIPE = 141


#: the most characters of an error line ``fr`` prints (a longer one is cut, its length said)
MAX_ERROR_CHARS = 2000


def _error(command: str, message: str) -> None:
    """``fr COMMAND: MESSAGE`` on stderr as ONE line: line breaks in the message become spaces
    (an exception may carry several, as SQLite's schema text), and a line longer than
    :data:`MAX_ERROR_CHARS` is cut (each value is already shortened where it is echoed)."""
    line = " ".join(part.strip() for part in f"fr {command}: {message}".splitlines() if part.strip())
    line = clipped(line, MAX_ERROR_CHARS)
    try:
        print(line, file=sys.stderr)
    except OSError:
        pass


def _detach_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush of the data Python still
    buffers for a closed pipe or full disk raises nothing at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(run())
